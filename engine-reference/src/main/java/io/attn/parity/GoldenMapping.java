package io.attn.parity;

import io.attn.AttnException;
import io.attn.engine.AttentionWeights;
import io.attn.graph.GraphBuilder;
import io.attn.graph.MaskKind;
import io.attn.graph.Node;
import io.attn.nn.Forward;
import io.attn.nn.LayerConfig;
import io.attn.nn.Masks;
import io.attn.nn.MultiheadAttention;
import io.attn.nn.ScaledDotProductAttention;
import io.attn.nn.StateDict;
import io.attn.nn.TransformerDecoder;
import io.attn.nn.TransformerDecoderLayer;
import io.attn.nn.TransformerEncoder;
import io.attn.nn.TransformerEncoderLayer;
import io.attn.tensor.Tensor;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

/**
 * Maps one golden case's config (as {@code tools/golden_torch.py} writes it: the module's constructor arguments plus
 * {@code "module"}, {@code "forward"}, {@code "inputs"}, {@code "outputs"}) onto the engine's nn layers, built
 * directly (not through {@code Model}, whose CLI contract has key = value and a single key-padding mask).
 *
 * <p>Strict on purpose: an unknown module, constructor argument or forward argument, an unsupported value, or a
 * listed input the mapping does not consume throws {@link AttnException} BAD_INPUT, so a case the runner cannot map
 * fails with that reason instead of being checked against the wrong computation.
 *
 * <p>Masks: {@code "bool"} means a float 0/1 tensor with 1 = masked out (BOOL), {@code "float"} an additive tensor
 * (ADDITIVE, may hold -inf). MHA-style 3-D masks {@code (B*H, L, S)} are fed reshaped to {@code (B, H, L, S)} (row
 * {@code b*H + h}, as PyTorch indexes them); an SDPA 3-D mask {@code (H|1, L, S)} broadcasts as {@code (1, H|1, L,
 * S)}. {@code is_causal} flags become the engine's causal flag, applied together with the explicit causal mask
 * PyTorch also receives (the two agree, so applying both equals applying either).
 *
 * <p>{@code batch_first=False} (or absent: PyTorch's default): the inputs {@code (L, B, E)} are fed transposed to the
 * layers' {@code (B, L, E)}, and
 * {@link Built#seqFirst} tells the runner to transpose the output back (attention weights are batch-first either way,
 * as PyTorch returns them).
 */
final class GoldenMapping {
    /** The graph under construction, its per-call inputs, and the outputs it can deliver by golden name. */
    static final class Built {
        final GraphBuilder g = new GraphBuilder();
        final Map<String, Tensor> feeds = new LinkedHashMap<>();
        final Map<String, Node> outputs = new LinkedHashMap<>();
        /** Whether the case is {@code batch_first=False}: its {@code "output"} is {@code (L, B, E)}. */
        boolean seqFirst;
    }

    private static final Set<String> COMMON = Set.of("module", "forward", "inputs", "outputs", "computed_with");
    private static final Set<String> LAYER_ARGS = Set.of(
            "d_model",
            "nhead",
            "dim_feedforward",
            "dropout",
            "activation",
            "layer_norm_eps",
            "batch_first",
            "norm_first",
            "bias");
    private static final List<String> DECODER_FWD = List.of(
            "tgt_mask",
            "memory_mask",
            "tgt_key_padding_mask",
            "memory_key_padding_mask",
            "tgt_is_causal",
            "memory_is_causal");

    private final Map<String, Object> cfg;
    private final Map<String, Object> fwd;
    private final Function<String, Tensor> reader;
    private final Set<String> used = new LinkedHashSet<>();
    private final Built out = new Built();

    private GoldenMapping(Map<String, Object> cfg, Function<String, Tensor> reader) {
        this.cfg = cfg;
        this.fwd = cfg.get("forward") == null ? Map.of() : map(cfg.get("forward"), "forward");
        this.reader = reader;
    }

    /**
     * Builds the case's graph. {@code reader} gives the input tensor {@code in.<name>.npy} for a name (throwing when
     * absent); {@code sd} holds the case's state_dict and must be used up exactly.
     */
    static Built build(Map<String, Object> cfg, StateDict sd, Function<String, Tensor> reader) {
        GoldenMapping m = new GoldenMapping(cfg, reader);
        String module = str(cfg, "module", null);
        if (module == null) throw bad("config has no \"module\"");
        switch (module) {
            case "MultiheadAttention" -> m.mha(sd);
            case "scaled_dot_product_attention" -> m.sdpa();
            case "TransformerEncoderLayer" -> m.encoderLayer(sd);
            case "TransformerDecoderLayer" -> m.decoderLayer(sd);
            case "TransformerEncoder" -> m.encoder(sd);
            case "TransformerDecoder" -> m.decoder(sd);
            case "Transformer" -> m.transformer(sd);
            default -> throw bad("unsupported module \"" + module + "\"");
        }
        sd.checkAllUsed();
        if (cfg.get("inputs") instanceof List<?> listed)
            for (Object n : listed)
                if (!m.used.contains(String.valueOf(n)))
                    throw bad("input '" + n + "' is not used by the engine mapping of " + module);
        return m.out;
    }

    // ------------------------------------------------------------------------------------------------ modules

    private void mha(StateDict sd) {
        checkKeys(
                cfg,
                "constructor",
                "embed_dim",
                "num_heads",
                "bias",
                "batch_first",
                "dropout",
                "kdim",
                "vdim",
                "add_bias_kv",
                "add_zero_attn");
        checkKeys(fwd, "forward", "need_weights", "average_attn_weights", "is_causal", "attn_mask", "key_padding_mask");
        out.seqFirst = !bool(cfg, "batch_first", false);
        int e = integer(cfg, "embed_dim"), h = integer(cfg, "num_heads");
        for (String k : new String[] {"kdim", "vdim"})
            if (cfg.get(k) != null && integer(cfg, k) != e) throw bad(k + " != embed_dim is not supported");
        for (String k : new String[] {"add_bias_kv", "add_zero_attn"})
            if (bool(cfg, k, false)) throw bad(k + "=True is not supported");
        AttentionWeights w = !bool(fwd, "need_weights", true)
                ? AttentionWeights.NONE
                : bool(fwd, "average_attn_weights", true) ? AttentionWeights.AVERAGED : AttentionWeights.PER_HEAD;
        Forward f = new Forward(out.g, w);
        Node q = input("query"), k = input("key"), v = input("value");
        int b = q.shape().dim(0), l = q.shape().dim(1), s = k.shape().dim(1);
        Masks masks = masks(3, "attn_mask", List.of("attn_mask"), "key_padding_mask", "is_causal", b, h, l, s);
        MultiheadAttention a = new MultiheadAttention(sd, "", e, h, bool(cfg, "bias", true));
        out.outputs.put("output", a.forward(f, q, k, v, masks));
        Node weights = f.weightNodes().get(a.name());
        if (weights != null) out.outputs.put("weights", weights);
    }

    private void sdpa() {
        checkKeys(cfg, "constructor");
        checkKeys(fwd, "forward", "attn_mask", "is_causal", "scale", "note", "dropout_p", "enable_gqa");
        if (fwd.get("dropout_p") != null && number(fwd, "dropout_p") != 0) throw bad("dropout_p != 0");
        if (bool(fwd, "enable_gqa", false)) throw bad("enable_gqa=True is not supported");
        Node q = input("q"), k = input("k"), v = input("v");
        if (q.shape().rank() != 4) throw bad("SDPA input q must be (B, H, L, D), got " + q.shape());
        int b = q.shape().dim(0),
                h = q.shape().dim(1),
                l = q.shape().dim(2),
                s = k.shape().dim(2);
        Masks masks = masks(-1, "attn_mask", List.of("attn_mask"), null, "is_causal", b, h, l, s);
        float scale = fwd.get("scale") == null ? Float.NaN : (float) number(fwd, "scale");
        Forward f = new Forward(out.g, AttentionWeights.NONE); // PyTorch's SDPA returns no weights
        out.outputs.put("output", ScaledDotProductAttention.forward(f, "sdpa", q, k, v, masks, scale));
    }

    private void encoderLayer(StateDict sd) {
        checkKeys(cfg, "constructor", LAYER_ARGS.toArray(String[]::new));
        checkKeys(fwd, "forward", "src_mask", "src_key_padding_mask", "is_causal");
        LayerConfig c = layerConfig(cfg);
        out.seqFirst = !bool(cfg, "batch_first", false);
        Node x = input("src");
        Masks m = selfMasks(x, c, "src_mask", List.of("src_mask"), "src_key_padding_mask", "is_causal");
        Forward f = new Forward(out.g, AttentionWeights.NONE); // the layers call MHA with need_weights=False
        out.outputs.put("output", new TransformerEncoderLayer(sd, "", c).forward(f, x, m));
    }

    private void decoderLayer(StateDict sd) {
        checkKeys(cfg, "constructor", LAYER_ARGS.toArray(String[]::new));
        checkKeys(fwd, "forward", DECODER_FWD.toArray(String[]::new));
        LayerConfig c = layerConfig(cfg);
        out.seqFirst = !bool(cfg, "batch_first", false);
        Node x = input("tgt"), mem = input("memory");
        Forward f = new Forward(out.g, AttentionWeights.NONE);
        var layer = new TransformerDecoderLayer(sd, "", c);
        out.outputs.put("output", layer.forward(f, x, mem, decoderSelf(x, c), decoderCross(x, mem, c)));
    }

    private void encoder(StateDict sd) {
        checkKeys(cfg, "constructor", "num_layers", "norm", "encoder_layer", "enable_nested_tensor", "mask_check");
        checkKeys(fwd, "forward", "mask", "src_key_padding_mask", "is_causal");
        Map<String, Object> lc = map(cfg.get("encoder_layer"), "encoder_layer");
        checkKeys(lc, "encoder_layer", LAYER_ARGS.toArray(String[]::new));
        LayerConfig c = layerConfig(lc);
        out.seqFirst = !bool(lc, "batch_first", false);
        Node x = input("src");
        Masks m = selfMasks(x, c, "mask", List.of("mask", "src_mask"), "src_key_padding_mask", "is_causal");
        Forward f = new Forward(out.g, AttentionWeights.NONE);
        var enc = new TransformerEncoder(sd, "", c, integer(cfg, "num_layers"), bool(cfg, "norm", false));
        out.outputs.put("output", enc.forward(f, x, m));
    }

    private void decoder(StateDict sd) {
        checkKeys(cfg, "constructor", "num_layers", "norm", "decoder_layer");
        checkKeys(fwd, "forward", DECODER_FWD.toArray(String[]::new));
        Map<String, Object> lc = map(cfg.get("decoder_layer"), "decoder_layer");
        checkKeys(lc, "decoder_layer", LAYER_ARGS.toArray(String[]::new));
        LayerConfig c = layerConfig(lc);
        out.seqFirst = !bool(lc, "batch_first", false);
        Node x = input("tgt"), mem = input("memory");
        Forward f = new Forward(out.g, AttentionWeights.NONE);
        var dec = new TransformerDecoder(sd, "", c, integer(cfg, "num_layers"), bool(cfg, "norm", false));
        out.outputs.put("output", dec.forward(f, x, mem, decoderSelf(x, c), decoderCross(x, mem, c)));
    }

    private void transformer(StateDict sd) {
        Set<String> keys = new LinkedHashSet<>(LAYER_ARGS);
        keys.addAll(List.of("num_encoder_layers", "num_decoder_layers", "custom_encoder", "custom_decoder"));
        checkKeys(cfg, "constructor", keys.toArray(String[]::new));
        Set<String> fk = new LinkedHashSet<>(DECODER_FWD);
        fk.addAll(List.of("src_mask", "src_key_padding_mask", "src_is_causal"));
        checkKeys(fwd, "forward", fk.toArray(String[]::new));
        if (cfg.get("custom_encoder") != null || cfg.get("custom_decoder") != null)
            throw bad("custom_encoder / custom_decoder are not supported");
        LayerConfig c = layerConfig(cfg);
        out.seqFirst = !bool(cfg, "batch_first", false);
        Node src = input("src"), tgt = input("tgt");
        Masks em = selfMasks(src, c, "src_mask", List.of("src_mask"), "src_key_padding_mask", "src_is_causal");
        Forward f = new Forward(out.g, AttentionWeights.NONE);
        // nn.Transformer always builds both final norms (encoder.norm, decoder.norm)
        var enc = new TransformerEncoder(sd, "encoder.", c, integer(cfg, "num_encoder_layers"), true);
        var dec = new TransformerDecoder(sd, "decoder.", c, integer(cfg, "num_decoder_layers"), true);
        Node memory = enc.forward(f, src, em);
        out.outputs.put("output", dec.forward(f, tgt, memory, decoderSelf(tgt, c), decoderCross(tgt, memory, c)));
    }

    // -------------------------------------------------------------------------------------------------- masks

    private Masks selfMasks(Node x, LayerConfig c, String key, List<String> names, String kpm, String causal) {
        int b = x.shape().dim(0), l = x.shape().dim(1);
        return masks(3, key, names, kpm, causal, b, c.nhead(), l, l);
    }

    private Masks decoderSelf(Node tgt, LayerConfig c) {
        return selfMasks(tgt, c, "tgt_mask", List.of("tgt_mask"), "tgt_key_padding_mask", "tgt_is_causal");
    }

    private Masks decoderCross(Node tgt, Node mem, LayerConfig c) {
        int b = tgt.shape().dim(0), l = tgt.shape().dim(1), s = mem.shape().dim(1);
        return masks(
                3,
                "memory_mask",
                List.of("memory_mask"),
                "memory_key_padding_mask",
                "memory_is_causal",
                b,
                c.nhead(),
                l,
                s);
    }

    /**
     * The masks named by the forward arguments {@code maskKey} (input file: the first of {@code names} that the
     * config lists, else the first), {@code kpmKey} (input of the same name; null: none) and {@code causalKey}.
     * {@code rank3}: 3 for the MHA layout {@code (B*H, L, S)}, -1 for SDPA's broadcast {@code (H|1, L, S)}.
     */
    private Masks masks(
            int rank3,
            String maskKey,
            List<String> names,
            String kpmKey,
            String causalKey,
            int b,
            int h,
            int l,
            int s) {
        MaskKind ak = kind(maskKey);
        Node am = null;
        if (ak != MaskKind.NONE) {
            String name = names.get(0);
            if (cfg.get("inputs") instanceof List<?> listed)
                for (String n : names)
                    if (listed.contains(n)) {
                        name = n;
                        break;
                    }
            Tensor t = tensor(name);
            if (t.rank() == 3) {
                if (rank3 == 3) {
                    if (t.dim(0) != b * h)
                        throw bad(name + " " + t.shape() + ": a 3-D mask must be (B*num_heads, L, S) = (" + b * h + ", "
                                + l + ", " + s + ")");
                    t = t.reshape(b, h, t.dim(1), t.dim(2));
                } else t = t.reshape(1, t.dim(0), t.dim(1), t.dim(2));
            }
            am = feed(name, t);
        }
        MaskKind kk = kpmKey == null ? MaskKind.NONE : kind(kpmKey);
        Node kp = kk == MaskKind.NONE ? null : feed(kpmKey, tensor(kpmKey));
        return new Masks(am, ak, kp, kk, bool(fwd, causalKey, false));
    }

    private MaskKind kind(String key) {
        Object v = fwd.get(key);
        if (v == null) return MaskKind.NONE;
        return switch (String.valueOf(v)) {
            case "bool" -> MaskKind.BOOL;
            case "float" -> MaskKind.ADDITIVE;
            default -> throw bad("forward " + key + " = " + v + ": expected \"bool\", \"float\" or null");
        };
    }

    // ------------------------------------------------------------------------------------------------ helpers

    private Tensor tensor(String name) {
        used.add(name);
        return reader.apply(name);
    }

    /** A module input (not a mask): {@code (L, B, E)} for {@code batch_first=False}, fed as {@code (B, L, E)}. */
    private Node input(String name) {
        Tensor t = tensor(name);
        return feed(name, out.seqFirst && t.rank() == 3 ? LayerCases.transpose01(t) : t);
    }

    private Node feed(String name, Tensor t) {
        out.feeds.put(name, t);
        return out.g.input(name, t.shape());
    }

    private static LayerConfig layerConfig(Map<String, Object> m) {
        return new LayerConfig(
                integer(m, "d_model"),
                integer(m, "nhead"),
                m.get("dim_feedforward") == null ? 2048 : integer(m, "dim_feedforward"),
                str(m, "activation", "relu"),
                m.get("layer_norm_eps") == null ? 1e-5f : (float) number(m, "layer_norm_eps"),
                bool(m, "norm_first", false),
                bool(m, "bias", true));
    }

    private static void checkKeys(Map<String, Object> m, String what, String... allowed) {
        Set<String> ok = Set.of(allowed);
        for (String k : m.keySet())
            if (!ok.contains(k) && !(what.equals("constructor") && COMMON.contains(k)))
                throw bad("unsupported " + what + " argument '" + k + "'");
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> map(Object v, String what) {
        if (!(v instanceof Map<?, ?>)) throw bad("\"" + what + "\" is not a JSON object");
        return (Map<String, Object>) v;
    }

    static String str(Map<String, Object> m, String key, String dflt) {
        Object v = m.get(key);
        if (v == null) return dflt;
        if (!(v instanceof String s)) throw bad("\"" + key + "\" is not a string: " + v);
        return s;
    }

    private static boolean bool(Map<String, Object> m, String key, boolean dflt) {
        Object v = m.get(key);
        if (v == null) return dflt;
        if (!(v instanceof Boolean b)) throw bad("\"" + key + "\" is not a boolean: " + v);
        return b;
    }

    private static double number(Map<String, Object> m, String key) {
        if (!(m.get(key) instanceof Number n)) throw bad("\"" + key + "\" is not a number: " + m.get(key));
        return n.doubleValue();
    }

    private static int integer(Map<String, Object> m, String key) {
        if (!(m.get(key) instanceof Long n) || n <= 0 || n > Integer.MAX_VALUE)
            throw bad("\"" + key + "\" must be a positive integer, got " + m.get(key));
        return (int) (long) n;
    }

    private static AttnException bad(String msg) {
        return AttnException.badInput(msg);
    }
}
