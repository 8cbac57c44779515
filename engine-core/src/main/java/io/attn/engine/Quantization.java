package io.attn.engine;

import io.attn.AttnException;
import io.attn.io.Json;
import io.attn.io.JsonFields;
import io.attn.io.SafeTensors;
import io.attn.nn.ConfigFiles;
import io.attn.nn.DecoderOnlyConfig;
import io.attn.nn.EncoderConfig;
import io.attn.nn.EncoderFamily;
import io.attn.tensor.DType;
import io.attn.tensor.Tensor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Dynamic int8 quantization of a text encoder's weights ({@code attn quantize}), with the arithmetic of ONNX Runtime's
 * {@code onnxruntime.quantization.quantize_dynamic} at its defaults (1.30): what it quantizes, how, and what it leaves
 * in float. Its output is a Hugging Face folder whose {@code config.json} holds a {@value #CONFIG_KEY} block with
 * {@code "quant_method": "}{@value #METHOD}{@code "} (docs/text.md, "Quantizing a model").
 *
 * <ul>
 *   <li>Each projection that ONNX exports as a {@code MatMul} with a constant weight (query, key, value or the fused
 *       QKV, attention output, the feed-forward's projections) becomes {@code MatMulInteger}'s int8 {@code (in, out)}
 *       weight, symmetric (zero point 0, range [-127, 127]; [-64, 64] with {@code reduce_range}), one scale per tensor
 *       or, {@code per_channel}, one per output (axis -1 of the {@code (in, out)} weight): {@code scale = (float)
 *       ((double) (2 absmax) / (qmax - qmin))}, {@code q = rint(w / scale)} in float, ties to even.
 *   <li>The embedding tables (Gather with a constant table) become uint8, asymmetric, per tensor (ONNX Runtime
 *       quantizes a Gather's table as an activation): {@code scale = (float) ((double) (rmax - rmin) / 255)}, {@code
 *       zero = rint(-rmin / scale)}, {@code q = clip(rint(t / scale) + zero, 0, 255)}, with {@code rmin <= 0 <= rmax}.
 *       They are stored as int8 {@code q - 128} with zero point {@code zero - 128}: the same {@code (q - zero) *
 *       scale}.
 *   <li>LayerNorms, biases, classifier heads (a {@code Gemm} in ONNX, which dynamic quantization leaves alone) and
 *       MPNet's relative position bias stay float.
 * </ul>
 *
 * A quantized tensor {@code T} comes with {@code T_scale} (float, one value or one per output) and {@code
 * T_zero_point} (int8, the same count), ONNX Runtime's names. Activations are quantized when the model runs (uint8 per
 * sequence, {@code DynamicQuantizeLinear}; {@link io.attn.engine} runs the int8 product exactly).
 */
public final class Quantization {
    private Quantization() {}

    /** The {@code config.json} key of the block that says how a model's weights were quantized. */
    public static final String CONFIG_KEY = "quantization_config";

    /** {@value #CONFIG_KEY}'s {@code quant_method} for the format this class writes. */
    public static final String METHOD = "attn_dynamic_int8";

    /** The version of the format ({@code format_version}). */
    public static final int FORMAT_VERSION = 1;

    /**
     * How to quantize: {@code perChannel} one scale per output of each projection (else one per tensor); {@code
     * reduceRange} 7-bit weights ([-64, 64]), ONNX Runtime's option for CPUs without VNNI.
     */
    public record Options(boolean perChannel, boolean reduceRange) {
        public static final Options DEFAULTS = new Options(false, false);
    }

    /**
     * A quantized model: its weights (int8 tensors with their scales and zero points, the rest as they were, in the
     * input's order), its config (the input's with the {@value #CONFIG_KEY} block) and what was quantized.
     */
    public record Quantized(Map<String, Tensor> weights, Map<String, Object> config, List<String> quantized) {}

    /**
     * Quantizes a Hugging Face text encoder's weights.
     *
     * @param config its {@code config.json} (a {@code model_type} the engine runs)
     * @param weights its tensors, HF names (with or without the task model's prefix), float
     * @param source names the model in error messages
     * @throws AttnException BAD_INPUT when the model is already quantized, a tensor the model needs is missing or not
     *     float, or a weight is not finite (naming it)
     */
    public static Quantized dynamicInt8(
            Map<String, Object> config, Map<String, Tensor> weights, Options options, String source) {
        if (config.containsKey(CONFIG_KEY))
            throw AttnException.badInput(source + ": config.json already has a " + CONFIG_KEY + " (quantized)");
        Layout layout = Layout.of(config, weights, source);
        Map<String, Tensor> out = new LinkedHashMap<>();
        List<String> done = new ArrayList<>();
        quantize(
                weights,
                layout.linears,
                layout.tables,
                layout::name,
                options,
                source,
                "the model's " + layout.config.modelType() + " layout",
                layout.prefixed ? layout.prefix : "",
                out,
                done);
        Map<String, Object> cfg = new LinkedHashMap<>(config);
        cfg.put(CONFIG_KEY, configBlock(options));
        return new Quantized(out, cfg, List.copyOf(done));
    }

    /** {@value #CONFIG_KEY}'s {@code activations} for text encoders: one uint8 scale per sequence. */
    public static final String PER_SEQUENCE = "uint8_dynamic_per_sequence";

    /** {@value #CONFIG_KEY}'s {@code activations} for decoder-only language models: one uint8 scale per token. */
    public static final String PER_TOKEN = "uint8_dynamic_per_token";

    /**
     * {@code attn quantize} on {@code attn generate}'s language model file: reads {@code model} (its config from
     * {@code config} when not null, else from the safetensors metadata), quantizes it by {@link #decoderOnlyLM} when
     * {@code floats} is {@link DType#F32}, else keeps it float and stores its float tensors as {@code floats}, and
     * writes one new safetensors file {@code out} (atomically) whose metadata {@code "config"} holds the config, the
     * quantization block included.
     *
     * @return what was written, one line (how many int8 tensors, or the float type)
     * @throws AttnException BAD_INPUT naming the file and the problem when {@code out} exists or is not a .safetensors
     *     name, the model is not a decoder-only language model or is already quantized; nothing is written then
     */
    public static String writeLanguageModel(Path model, Path config, Path out, Options options, DType floats) {
        if (Files.exists(out))
            throw AttnException.badInput(
                    out + ": already exists (attn quantize writes a new file for a language model)");
        if (!out.getFileName().toString().endsWith(".safetensors"))
            throw AttnException.badInput(out + ": a language model is written as one .safetensors file");
        SafeTensors.File f = SafeTensors.read(model);
        ConfigFiles.Read c = ConfigFiles.read(f, model, config);
        DecoderOnlyConfig.parse(c.json(), c.source()); // a DecoderOnlyLM, its errors named
        Map<String, Object> cfg = c.json();
        Map<String, Tensor> tensors = f.tensors();
        String what = "float tensors as " + (floats == DType.F16 ? "float16" : "bfloat16");
        if (floats == DType.F32) {
            Quantized q = decoderOnlyLM(c.json(), f.tensors(), options, model.toString());
            cfg = q.config();
            tensors = q.weights();
            what = q.quantized().size() + " int8 tensors (" + (options.perChannel() ? "per channel" : "per tensor")
                    + (options.reduceRange() ? ", reduced range" : "") + "; activations per token), the rest float32";
        } else if (cfg.containsKey(CONFIG_KEY)) {
            throw AttnException.badInput(c.source() + ": already quantized (" + CONFIG_KEY + "); its int8 tensors"
                    + " stay int8, quantize the float model instead");
        }
        Map<String, String> metadata = new LinkedHashMap<>(f.metadata());
        metadata.put("config", Json.write(cfg));
        SafeTensors.write(out, tensors, metadata, floats);
        return what;
    }

    /**
     * Quantizes a decoder-only language model ({@code "module":"DecoderOnlyLM"}, {@code attn generate}'s format) as
     * {@link #dynamicInt8} quantizes an encoder: each layer's {@code self_attn.in_proj_weight} (one tensor, as ONNX
     * exports it), {@code self_attn.out_proj.weight}, {@code linear1.weight}, {@code linear2.weight} and {@code
     * lm_head.weight} become int8 projections, {@code embed.weight} and a learned {@code pos.weight} uint8 tables;
     * norms and biases stay float. A tied head is untied ({@code tied_embeddings} false): the table is quantized as a
     * table and the head as a projection, as ONNX Runtime quantizes a Gather and a MatMul that share one initializer.
     * Activations are quantized per token ({@value #PER_TOKEN}), so that the cached step, its recomputation and any
     * batch quantize each token alike.
     *
     * @param config the model's config (parsed and checked here)
     * @param weights its {@code state_dict}, float
     * @throws AttnException BAD_INPUT when already quantized, a tensor is missing or not a finite float matrix
     */
    public static Quantized decoderOnlyLM(
            Map<String, Object> config, Map<String, Tensor> weights, Options options, String source) {
        if (config.containsKey(CONFIG_KEY))
            throw AttnException.badInput(source + ": the config already has a " + CONFIG_KEY + " (quantized)");
        DecoderOnlyConfig c = DecoderOnlyConfig.parse(config, source);
        Set<String> linears = new LinkedHashSet<>(), tables = new LinkedHashSet<>();
        tables.add("embed.weight");
        if (c.learnedPositions()) tables.add("pos.weight");
        for (int i = 0; i < c.numLayers(); i++)
            for (String l : List.of(
                    "self_attn.in_proj_weight", "self_attn.out_proj.weight", "linear1.weight", "linear2.weight"))
                linears.add("layers." + i + "." + l);
        linears.add("lm_head.weight");
        Map<String, Tensor> in = new LinkedHashMap<>(weights);
        if (c.tiedEmbeddings()) {
            Tensor embed = weights.get("embed.weight");
            if (embed == null) throw AttnException.badInput(source + ": missing tensor 'embed.weight'");
            in.putIfAbsent("lm_head.weight", embed);
        }
        Map<String, Tensor> out = new LinkedHashMap<>();
        List<String> done = new ArrayList<>();
        quantize(in, linears, tables, k -> k, options, source, "a DecoderOnlyLM", "", out, done);
        Map<String, Object> cfg = new LinkedHashMap<>(config);
        cfg.put("tied_embeddings", false);
        Map<String, Object> block = configBlock(options);
        block.put("activations", PER_TOKEN);
        cfg.put(CONFIG_KEY, block);
        return new Quantized(out, cfg, List.copyOf(done));
    }

    /**
     * Quantizes {@code linearNames} (projections, HF {@code (out, in)} float weights) and {@code tableNames} (embedding
     * tables) of {@code weights} into {@code out} (the other tensors as they are, in the input's order), naming each
     * quantized tensor in {@code done}; {@code names} maps a key to its layout name.
     */
    private static void quantize(
            Map<String, Tensor> weights,
            Set<String> linearNames,
            Set<String> tableNames,
            java.util.function.UnaryOperator<String> names,
            Options options,
            String source,
            String layoutName,
            String prefix,
            Map<String, Tensor> out,
            List<String> done) {
        Set<String> linears = new LinkedHashSet<>(linearNames), tables = new LinkedHashSet<>(tableNames);
        for (var e : weights.entrySet()) {
            String key = e.getKey();
            String name = names.apply(key);
            Tensor t = e.getValue();
            boolean linear = linears.contains(name), table = tables.contains(name);
            if (!linear && !table) {
                out.put(key, t);
                continue;
            }
            if (t.dtype() != DType.F32 || t.rank() != 2)
                throw AttnException.badInput(
                        source + ": tensor '" + key + "' is " + t.dtype() + t.shape() + ", expected a float matrix");
            int bad = io.attn.tensor.Finite.indexOfNonFinite(t.data());
            if (bad >= 0)
                throw AttnException.badInput(source + ": tensor '" + key + "' holds " + t.data()[bad] + " at "
                        + t.indexString(bad) + ": weights must be finite to be quantized");
            if (linear) {
                Weight w = weight(t.data(), t.dim(0), t.dim(1), options);
                out.put(key, Tensor.ofInt8(w.q, t.dim(1), t.dim(0)));
                out.put(key + "_scale", Tensor.of(w.scale, w.scale.length));
                out.put(key + "_zero_point", Tensor.ofInt8(new byte[w.scale.length], w.scale.length));
            } else {
                Table q = table(t.data());
                out.put(key, Tensor.ofInt8(q.q, t.dim(0), t.dim(1)));
                out.put(key + "_scale", Tensor.of(new float[] {q.scale}, 1));
                out.put(key + "_zero_point", Tensor.ofInt8(new byte[] {q.zeroPoint}, 1));
            }
            done.add(key);
            linears.remove(name);
            tables.remove(name);
        }
        if (!linears.isEmpty() || !tables.isEmpty())
            throw AttnException.badInput(source + ": missing tensor '" + prefix
                    + (linears.isEmpty() ? tables : linears).iterator().next() + "' (" + layoutName + ")");
    }

    /**
     * Which tensors of a model dynamic quantization turns into int8 (HF names without the task model's prefix): the
     * projections ({@code linears}) and the embedding tables ({@code tables}); {@code prefixed} when the weights carry
     * the prefix.
     */
    private record Layout(
            EncoderConfig config, Set<String> linears, Set<String> tables, String prefix, boolean prefixed) {
        static Layout of(Map<String, Object> config, Map<String, Tensor> weights, String source) {
            EncoderConfig c = EncoderFamily.fromHuggingFace(JsonFields.of(config, source + "/config.json"));
            EncoderFamily family = EncoderFamily.of(c.modelType(), source);
            EncoderFamily.Names n = c.names();
            Set<String> linears = new LinkedHashSet<>(), tables = new LinkedHashSet<>();
            for (String t : new String[] {n.word(), n.position(), n.tokenType()}) if (t != null) tables.add(t);
            for (int i = 0; i < c.numHiddenLayers(); i++) {
                String p = n.layer().formatted(i);
                for (String l : new String[] {
                    n.query(), n.key(), n.value(), n.attentionOutput(), n.ffnIn(), n.ffnGate(), n.ffnOut()
                }) if (l != null) linears.add(p + l + "weight");
            }
            String prefix = family.checkpointPrefix();
            boolean prefixed = weights.keySet().stream().anyMatch(k -> k.startsWith(prefix + "embeddings."));
            // in layer order (Set.copyOf's order is unspecified: a "missing tensor" error names the first)
            return new Layout(
                    c,
                    java.util.Collections.unmodifiableSet(linears),
                    java.util.Collections.unmodifiableSet(tables),
                    prefix,
                    prefixed);
        }

        /** {@code key} without the task model's prefix. */
        String name(String key) {
            return prefixed && key.startsWith(prefix) ? key.substring(prefix.length()) : key;
        }
    }

    /**
     * The {@value #CONFIG_KEY} block that describes weights already quantized in this format by another tool (an ONNX
     * Runtime {@code -q} export read by the importer, {@code attn convert}): {@code per_channel} when a projection has
     * one scale per output, {@code reduce_range} when every projection's values lie in [-64, 64], {@code symmetric}
     * when every projection's zero point is 0 (else the zero points are stored and used, {@code "symmetric": false}),
     * and {@code converted_from} naming the file.
     *
     * @param config the model's {@code config.json}
     * @param weights its tensors, the quantized ones int8 with {@code T_scale} and {@code T_zero_point}
     * @param from names the source file in the block and in messages
     * @throws AttnException BAD_INPUT when an int8 tensor is neither a projection nor an embedding table of the
     *     model's layout, or lacks its scale or zero point
     */
    public static Map<String, Object> describe(Map<String, Object> config, Map<String, Tensor> weights, String from) {
        Layout layout = Layout.of(config, weights, from);
        boolean perChannel = false, reduced = true, symmetric = true;
        for (var e : weights.entrySet()) {
            Tensor t = e.getValue();
            if (t.dtype() != DType.I8 || e.getKey().endsWith("_zero_point")) continue;
            Tensor scale = weights.get(e.getKey() + "_scale"), zero = weights.get(e.getKey() + "_zero_point");
            if (scale == null || zero == null)
                throw AttnException.badInput(
                        from + ": int8 tensor '" + e.getKey() + "' has no _scale or _zero_point beside it");
            String name = layout.name(e.getKey());
            if (layout.tables.contains(name)) continue;
            if (!layout.linears.contains(name))
                throw AttnException.badInput(from + ": int8 tensor '" + e.getKey() + "' is neither a projection nor an"
                        + " embedding table of the " + layout.config.modelType() + " layout");
            perChannel |= scale.size() > 1;
            for (byte q : t.int8()) reduced &= q >= -64 && q <= 64;
            for (byte z : zero.int8()) symmetric &= z == 0;
        }
        Map<String, Object> q = configBlock(new Options(perChannel, reduced));
        q.put("symmetric", symmetric);
        q.put("converted_from", from);
        return q;
    }

    /** The {@value #CONFIG_KEY} block for {@code options}. */
    public static Map<String, Object> configBlock(Options options) {
        Map<String, Object> q = new LinkedHashMap<>();
        q.put("quant_method", METHOD);
        q.put("format_version", FORMAT_VERSION);
        q.put("weights", "int8");
        q.put("weight_layout", "in_out");
        q.put("symmetric", true);
        q.put("per_channel", options.perChannel());
        q.put("reduce_range", options.reduceRange());
        q.put("embeddings", "uint8_asymmetric_stored_minus_128");
        q.put("activations", PER_SEQUENCE);
        q.put("reference", "onnxruntime.quantization.quantize_dynamic");
        return q;
    }

    /**
     * Checks a folder's quantized weights before the model is built: its {@value #CONFIG_KEY} block is one attn
     * writes, and each int8 tensor {@code T} has {@code T_scale} and {@code T_zero_point}. Without the block, an int8
     * weight (a name ending in {@code weight}, or with a {@code _scale} beside it) is refused, and other int8 tensors
     * (buffers) are widened to float as before.
     *
     * @param config {@code config.json} as read
     * @param weights the tensors, int8 kept
     * @param source names {@code config.json}'s folder in messages
     * @return the weights to build the model from
     * @throws AttnException BAD_INPUT naming the field or the tensor
     */
    public static Map<String, Tensor> check(Map<String, Object> config, Map<String, Tensor> weights, String source) {
        return check(config, weights, source, PER_SEQUENCE);
    }

    /**
     * {@link #check(Map, Map, String)} for a model whose activations are quantized as {@code activations} says
     * ({@link #PER_SEQUENCE}: text encoders; {@link #PER_TOKEN}: decoder-only language models).
     */
    public static Map<String, Tensor> check(
            Map<String, Object> config, Map<String, Tensor> weights, String source, String activations) {
        Object block = config.get(CONFIG_KEY);
        if (block == null) {
            Map<String, Tensor> out = new LinkedHashMap<>(weights);
            for (var e : weights.entrySet()) {
                Tensor t = e.getValue();
                if (t.dtype() != DType.I8) continue;
                if (e.getKey().endsWith("weight") || weights.containsKey(e.getKey() + "_scale"))
                    throw AttnException.badInput(source + ": tensor '" + e.getKey()
                            + "' is int8 but config.json has no " + CONFIG_KEY + " saying how it was quantized");
                float[] f = new float[t.size()];
                for (int i = 0; i < f.length; i++) f[i] = t.int8()[i];
                out.put(e.getKey(), Tensor.of(t.shape(), f));
            }
            return out;
        }
        String where = source + "/config.json: " + CONFIG_KEY;
        if (!(block instanceof Map<?, ?>)) throw AttnException.badInput(where + " must be an object");
        JsonFields q = JsonFields.of(block, where);
        Object method = q.get("quant_method");
        if (!METHOD.equals(method))
            throw AttnException.badInput(where + ".quant_method " + (method == null ? "is missing" : "is " + method)
                    + ": attn reads \"" + METHOD + "\" (attn quantize's format)");
        Object version = q.get("format_version");
        if (!(version instanceof Number v) || v.doubleValue() != FORMAT_VERSION)
            throw AttnException.badInput(
                    where + ".format_version is " + version + ": attn reads version " + FORMAT_VERSION);
        Map<String, Object> want = configBlock(Options.DEFAULTS);
        want.put("activations", activations);
        for (String k : List.of("weights", "weight_layout", "embeddings", "activations"))
            if (!want.get(k).equals(q.get(k)))
                throw AttnException.badInput(
                        where + "." + k + " is " + q.get(k) + ": attn reads " + want.get(k) + " (format version 1)");
        // symmetric (attn quantize: every weight zero point 0) or not (an ONNX Runtime export converted by attn
        // convert may hold uint8 weights: their zero points, stored beside them, are used as they are)
        if (!(q.get("symmetric") instanceof Boolean))
            throw AttnException.badInput(
                    where + ".symmetric is " + q.get("symmetric") + ": attn reads true or false (format version 1)");
        for (var e : weights.entrySet()) {
            if (e.getValue().dtype() != DType.I8 || e.getKey().endsWith("_zero_point")) continue;
            for (String part : List.of("_scale", "_zero_point"))
                if (!weights.containsKey(e.getKey() + part))
                    throw AttnException.badInput(source + ": int8 tensor '" + e.getKey() + "' has no '" + e.getKey()
                            + part + "' (" + CONFIG_KEY + " " + METHOD + ")");
        }
        return weights;
    }

    // ---------------------------------------------------------------------------------------------------- arithmetic

    /** An int8 {@code (in, out)} weight and its scales (one, or one per output). */
    record Weight(byte[] q, float[] scale) {}

    /** A table's uint8 values less 128, its scale and zero point (less 128). */
    record Table(byte[] q, float scale, byte zeroPoint) {}

    /**
     * The HF {@code (out, in)} weight {@code w} quantized as ONNX Runtime quantizes the {@code (in, out)} MatMul
     * weight, symmetric int8.
     */
    static Weight weight(float[] w, int out, int in, Options o) {
        int qmax = o.reduceRange() ? 64 : 127; // ONNX_INT_TYPE_REDUCED_RANGE (-64, 64), SYMMETRIC_RANGE (-127, 127)
        float[] scales = new float[o.perChannel() ? out : 1];
        if (o.perChannel()) for (int r = 0; r < out; r++) scales[r] = symmetricScale(w, r * in, (r + 1) * in, qmax);
        else scales[0] = symmetricScale(w, 0, w.length, qmax);
        byte[] q = new byte[w.length];
        for (int r = 0; r < out; r++) {
            float s = scales[o.perChannel() ? r : 0];
            for (int c = 0; c < in; c++) q[c * out + r] = (byte) clip(Math.rint(w[r * in + c] / s), -128, 127);
        }
        return new Weight(q, scales);
    }

    /** compute_scale_zp, symmetric: {@code (double) (rmax - rmin)} in float, over {@code qmax - qmin} in double. */
    static float symmetricScale(float[] w, int from, int to, int qmax) {
        float mn = 0f, mx = 0f; // the range always holds 0
        for (int i = from; i < to; i++) {
            mn = Math.min(mn, w[i]);
            mx = Math.max(mx, w[i]);
        }
        float absmax = Math.max(Math.abs(mn), Math.abs(mx));
        double scale = (double) (absmax - -absmax) / (2.0 * qmax);
        return scale < Float.MIN_NORMAL ? 1f : (float) scale;
    }

    /** An embedding table quantized as ONNX Runtime quantizes a Gather's constant table: uint8, asymmetric. */
    static Table table(float[] t) {
        float rmin = 0f, rmax = 0f;
        for (float v : t) {
            rmin = Math.min(rmin, v);
            rmax = Math.max(rmax, v);
        }
        double scaleD = (double) (rmax - rmin) / 255.0;
        float scale;
        int zero;
        if (scaleD < Float.MIN_NORMAL) {
            scale = 1f;
            zero = 0;
        } else {
            zero = (int) Math.rint(0.0 - rmin / scaleD);
            scale = (float) scaleD;
        }
        byte[] q = new byte[t.length];
        for (int i = 0; i < t.length; i++) {
            float v = (float) Math.rint(t[i] / scale) + zero;
            q[i] = (byte) (clip(v, 0, 255) - 128);
        }
        return new Table(q, scale, (byte) (zero - 128));
    }

    private static int clip(double v, int lo, int hi) {
        return (int) Math.max(lo, Math.min(hi, v));
    }
}
