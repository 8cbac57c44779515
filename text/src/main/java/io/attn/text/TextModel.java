package io.attn.text;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import io.attn.AttnException;
import io.attn.engine.Tensors;
import io.attn.io.Json;
import io.attn.io.JsonFields;
import io.attn.tensor.Tensor;
import io.attn.text.onnx.OnnxBert;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A BERT-family text model as it lies on disk, read and checked but not yet on a device: a Hugging Face folder (a
 * {@code save_pretrained} output or a hub snapshot, with or without the sentence-transformers files) or an ONNX export
 * of one with its {@code tokenizer.json}.
 *
 * <p>A folder holds {@code config.json} ({@code model_type} {@code bert}), {@code model.safetensors} (or shards named by
 * {@code model.safetensors.index.json}; F32, F16 or BF16; names with or without the {@code bert.} prefix), {@code
 * tokenizer.json}, and optionally {@code modules.json} with a {@code Pooling} module ({@code 1_Pooling/config.json}) and
 * a {@code Normalize} module, and {@code sentence_bert_config.json} ({@code max_seq_length}). Without the
 * sentence-transformers files the pooling is mean, not normalized.
 *
 * <p>The maximum length in tokens is the truncation of {@code tokenizer.json} when it sets one, else {@code
 * max_seq_length}, else {@code max_position_embeddings}.
 *
 * <p>Immutable after reading; the weights are not copied when handed to an engine.
 */
public final class TextModel {
    private static final Set<String> HEADS = Set.of("cls.", "classifier.", "qa_outputs.", "pooler.");

    private final String name;
    private final String source;
    private final BertHyper hyper;
    private final Map<String, Tensor> weights;
    private final Path tokenizer;
    private final Pooling pooling;
    private final boolean normalize;
    private final int maxLength;

    /** The BERT hyper-parameters this engine needs, from config.json (or read off an ONNX graph). */
    record BertHyper(
            int vocabSize,
            int hiddenSize,
            int numHiddenLayers,
            int numAttentionHeads,
            int intermediateSize,
            String hiddenAct,
            double layerNormEps,
            int maxPositionEmbeddings,
            int typeVocabSize) {}

    private TextModel(
            String name,
            String source,
            BertHyper hyper,
            Map<String, Tensor> weights,
            Path tokenizer,
            Pooling pooling,
            boolean normalize,
            int maxLength) {
        this.name = name;
        this.source = source;
        this.hyper = hyper;
        this.weights = weights;
        this.tokenizer = tokenizer;
        this.pooling = pooling;
        this.normalize = normalize;
        this.maxLength = maxLength;
    }

    /** Reads a model folder or an {@code .onnx} file (its tokenizer found beside it). */
    public static TextModel read(Path model) {
        return read(model, null);
    }

    /**
     * Reads a model folder or an {@code .onnx} file. {@code tokenizer} names the {@code tokenizer.json} to use (null:
     * the folder's, or for an ONNX file {@code tokenizer.json} or {@code <name>-tokenizer.json} beside it).
     *
     * @throws AttnException BAD_INPUT naming the file and the problem
     */
    public static TextModel read(Path model, Path tokenizer) {
        if (model == null) throw AttnException.badInput("model path is null");
        if (Files.isDirectory(model)) return readFolder(model, tokenizer);
        if (!Files.exists(model)) throw AttnException.badInput(model + ": no such file or directory");
        if (model.getFileName().toString().toLowerCase(java.util.Locale.ROOT).endsWith(".onnx"))
            return readOnnx(model, tokenizer);
        throw AttnException.badInput(model
                + ": not a model folder or an .onnx file (a Hugging Face model is a folder holding config.json,"
                + " model.safetensors and tokenizer.json)");
    }

    /** The model's name: the folder's (or the ONNX file's) name. */
    public String name() {
        return name;
    }

    /** Where the weights came from (a file or folder), for messages. */
    public String source() {
        return source;
    }

    public int hiddenSize() {
        return hyper.hiddenSize();
    }

    public int maxPositions() {
        return hyper.maxPositionEmbeddings();
    }

    /** The model's own pooling (sentence-transformers' Pooling module; mean without one). */
    public Pooling pooling() {
        return pooling;
    }

    /** Whether the model lists a Normalize module. */
    public boolean normalize() {
        return normalize;
    }

    /** The model's own maximum length in tokens, special tokens included (see the class comment). */
    public int maxLength() {
        return maxLength;
    }

    public Path tokenizer() {
        return tokenizer;
    }

    /** The weights under Hugging Face {@code BertModel} names (the heads and the position-ids buffer dropped). */
    public Map<String, Tensor> weights() {
        return weights;
    }

    /** The engine's config for this model ({@code {"module":"BertModel", ...}}). */
    public String engineConfig() {
        Map<String, Object> c = new LinkedHashMap<>();
        c.put("module", "BertModel");
        c.put("vocab_size", hyper.vocabSize());
        c.put("hidden_size", hyper.hiddenSize());
        c.put("num_hidden_layers", hyper.numHiddenLayers());
        c.put("num_attention_heads", hyper.numAttentionHeads());
        c.put("intermediate_size", hyper.intermediateSize());
        c.put("hidden_act", hyper.hiddenAct());
        c.put("layer_norm_eps", hyper.layerNormEps());
        c.put("max_position_embeddings", hyper.maxPositionEmbeddings());
        c.put("type_vocab_size", hyper.typeVocabSize());
        return new Gson().toJson(c);
    }

    /**
     * Writes the model as a Hugging Face folder that {@link #read} and the Hugging Face libraries load: {@code
     * config.json}, {@code model.safetensors}, {@code tokenizer.json}, and the sentence-transformers files for the given
     * pooling and normalization ({@code modules.json}, {@code 1_Pooling/config.json}, {@code 2_Normalize/} when
     * normalized, {@code sentence_bert_config.json}). The folder is written beside its final place and renamed into it,
     * so a failure leaves nothing; an existing non-empty folder is refused.
     */
    public void writeFolder(Path dir, Pooling pooling, boolean normalize) {
        Path abs = dir.toAbsolutePath();
        if (Files.exists(abs)) {
            try (var s = Files.list(abs)) {
                if (!Files.isDirectory(abs) || s.findAny().isPresent())
                    throw AttnException.badInput(dir + ": exists and is not an empty folder (nothing written)");
            } catch (IOException e) {
                throw AttnException.badInput(dir + ": cannot read (" + e.getMessage() + ")");
            }
        }
        Path parent = abs.getParent();
        if (parent == null) throw AttnException.badInput(dir + ": cannot write here");
        Path tmp = parent.resolve("." + abs.getFileName() + ".tmp-" + Long.toHexString(System.nanoTime()));
        try {
            Files.createDirectories(tmp.resolve("1_Pooling"));
            Gson gson = new GsonBuilder().setPrettyPrinting().create();
            Map<String, Object> config = new LinkedHashMap<>();
            config.put("architectures", List.of("BertModel"));
            config.put("model_type", "bert");
            config.put("vocab_size", hyper.vocabSize());
            config.put("hidden_size", hyper.hiddenSize());
            config.put("num_hidden_layers", hyper.numHiddenLayers());
            config.put("num_attention_heads", hyper.numAttentionHeads());
            config.put("intermediate_size", hyper.intermediateSize());
            config.put("hidden_act", hyper.hiddenAct());
            config.put("layer_norm_eps", hyper.layerNormEps());
            config.put("max_position_embeddings", hyper.maxPositionEmbeddings());
            config.put("type_vocab_size", hyper.typeVocabSize());
            config.put("position_embedding_type", "absolute");
            config.put("torch_dtype", "float32");
            write(tmp.resolve("config.json"), gson.toJson(config));
            Tensors.writeSafetensors(tmp.resolve("model.safetensors"), weights, Map.of("format", "pt"));
            Files.copy(tokenizer, tmp.resolve("tokenizer.json"));
            JsonArray modules = new JsonArray();
            modules.add(module(0, "", "sentence_transformers.models.Transformer"));
            modules.add(module(1, "1_Pooling", "sentence_transformers.models.Pooling"));
            if (normalize) {
                modules.add(module(2, "2_Normalize", "sentence_transformers.models.Normalize"));
                Files.createDirectories(tmp.resolve("2_Normalize"));
            }
            write(tmp.resolve("modules.json"), gson.toJson(modules));
            Map<String, Object> pool = new LinkedHashMap<>();
            pool.put("word_embedding_dimension", hyper.hiddenSize());
            pool.put("pooling_mode_cls_token", pooling == Pooling.CLS);
            pool.put("pooling_mode_mean_tokens", pooling == Pooling.MEAN);
            pool.put("pooling_mode_max_tokens", pooling == Pooling.MAX);
            pool.put("pooling_mode_mean_sqrt_len_tokens", false);
            write(tmp.resolve("1_Pooling/config.json"), gson.toJson(pool));
            write(
                    tmp.resolve("sentence_bert_config.json"),
                    gson.toJson(Map.of("max_seq_length", maxLength, "do_lower_case", false)));
            if (Files.exists(abs)) Files.delete(abs);
            Files.move(tmp, abs, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw AttnException.badInput(dir + ": cannot write (" + e + ")");
        } finally {
            deleteTree(tmp);
        }
    }

    // ---------------------------------------------------------------------------------------------------- folders

    private static TextModel readFolder(Path dir, Path tokenizerOverride) {
        Path transformer = dir;
        Pooling pooling = Pooling.MEAN;
        boolean normalize = false;
        Path modulesFile = dir.resolve("modules.json");
        if (Files.exists(modulesFile)) {
            for (Object m : Json.array(Json.read(modulesFile), modulesFile.toString())) {
                if (!(m instanceof Map<?, ?>))
                    throw AttnException.badInput(modulesFile + ": each module must be an object");
                JsonFields o = JsonFields.of(m, modulesFile.toString());
                String type = o.string("type", "");
                String path = o.string("path", "");
                Path at = inside(dir, path, modulesFile);
                switch (type) {
                    case "sentence_transformers.models.Transformer" -> transformer = at;
                    case "sentence_transformers.models.Pooling" -> pooling = poolingOf(at.resolve("config.json"));
                    case "sentence_transformers.models.Normalize" -> normalize = true;
                    default ->
                        throw AttnException.badInput(modulesFile + ": module \"" + type
                                + "\" is not supported (attn runs Transformer, Pooling and Normalize)");
                }
            }
        }
        Path configFile = transformer.resolve("config.json");
        if (!Files.exists(configFile)) {
            Path onnx = firstExisting(transformer.resolve("model.onnx"), transformer.resolve("onnx/model.onnx"));
            if (onnx != null) {
                TextModel m = readOnnx(onnx, tokenizerOverride != null ? tokenizerOverride : tokenizerIn(transformer));
                return new TextModel(
                        dir.getFileName().toString(),
                        m.source,
                        m.hyper,
                        m.weights,
                        m.tokenizer,
                        pooling,
                        normalize,
                        m.maxLength);
            }
            throw AttnException.badInput(dir + ": no config.json (a Hugging Face model folder holds config.json,"
                    + " model.safetensors and tokenizer.json)");
        }
        BertHyper hyper = hyperOf(JsonFields.read(configFile), configFile);
        Map<String, Tensor> weights = bertWeights(readWeights(transformer), transformer.toString());
        Path tokenizer = tokenizerOverride != null ? tokenizerOverride : tokenizerIn(transformer);
        int seq = 0;
        Path sbert = firstExisting(
                transformer.resolve("sentence_bert_config.json"), dir.resolve("sentence_bert_config.json"));
        if (sbert != null) seq = JsonFields.read(sbert).integer("max_seq_length", 0);
        String name = dir.toAbsolutePath().normalize().getFileName() == null
                ? "model"
                : dir.toAbsolutePath().normalize().getFileName().toString();
        Path single = transformer.resolve("model.safetensors");
        return new TextModel(
                name,
                (Files.exists(single) ? single : transformer).toString(),
                hyper,
                weights,
                tokenizer,
                pooling,
                normalize,
                maxLength(tokenizer, seq, hyper));
    }

    private static Pooling poolingOf(Path file) {
        JsonFields o = JsonFields.read(file);
        List<Pooling> on = new java.util.ArrayList<>();
        if (o.bool("pooling_mode_mean_tokens", false)) on.add(Pooling.MEAN);
        if (o.bool("pooling_mode_cls_token", false)) on.add(Pooling.CLS);
        if (o.bool("pooling_mode_max_tokens", false)) on.add(Pooling.MAX);
        for (String k : List.of(
                "pooling_mode_mean_sqrt_len_tokens", "pooling_mode_weightedmean_tokens", "pooling_mode_lasttoken"))
            if (o.bool(k, false))
                throw AttnException.badInput(file + ": " + k + " is not supported (attn pools mean, cls or max)");
        if (on.size() != 1)
            throw AttnException.badInput(file + ": exactly one of pooling_mode_mean_tokens, pooling_mode_cls_token,"
                    + " pooling_mode_max_tokens must be true, found " + on.size());
        return on.get(0);
    }

    private static BertHyper hyperOf(JsonFields c, Path file) {
        String type = c.string("model_type", null);
        if (type == null) throw AttnException.badInput(file + ": no \"model_type\"");
        if (!type.equals("bert"))
            throw AttnException.badInput(file + ": model_type \"" + type
                    + "\" is not supported (attn runs model_type \"bert\": BERT, MiniLM, bge, e5, gte, ...)");
        String pos = c.string("position_embedding_type", "absolute");
        if (!pos.equals("absolute"))
            throw AttnException.badInput(
                    file + ": position_embedding_type \"" + pos + "\" is not supported (only \"absolute\")");
        if (c.bool("is_decoder", false) || c.bool("add_cross_attention", false))
            throw AttnException.badInput(file + ": a BERT decoder (is_decoder / add_cross_attention) is not supported");
        return new BertHyper(
                c.integer("vocab_size", 30522),
                c.integer("hidden_size", 768),
                c.integer("num_hidden_layers", 12),
                c.integer("num_attention_heads", 12),
                c.integer("intermediate_size", 3072),
                c.string("hidden_act", "gelu"),
                c.number("layer_norm_eps", 1e-12),
                c.integer("max_position_embeddings", 512),
                c.integer("type_vocab_size", 2));
    }

    /** model.safetensors, or the shards listed by model.safetensors.index.json. */
    private static Map<String, Tensor> readWeights(Path dir) {
        Path single = dir.resolve("model.safetensors");
        if (Files.exists(single)) return Tensors.readSafetensors(single);
        Path index = dir.resolve("model.safetensors.index.json");
        if (Files.exists(index)) {
            if (!(JsonFields.read(index).get("weight_map") instanceof Map<?, ?> map))
                throw AttnException.badInput(index + ": no \"weight_map\" object");
            Set<String> shards = new LinkedHashSet<>();
            for (Object v : map.values()) {
                if (!(v instanceof String || v instanceof Number || v instanceof Boolean))
                    throw AttnException.badInput(index + ": weight_map values must be file names");
                shards.add(String.valueOf(v));
            }
            Map<String, Tensor> all = new LinkedHashMap<>();
            for (String s : shards) all.putAll(Tensors.readSafetensors(inside(dir, s, index)));
            return all;
        }
        if (Files.exists(dir.resolve("pytorch_model.bin")))
            throw AttnException.badInput(dir + ": holds only pytorch_model.bin (a Python pickle, which attn does not"
                    + " read): save the model with safe_serialization=True, or convert it to model.safetensors");
        throw AttnException.badInput(dir + ": no model.safetensors (nor model.safetensors.index.json)");
    }

    /**
     * The tensors a {@code BertModel} takes, under its names: the {@code bert.} prefix of task models removed, {@code
     * gamma}/{@code beta} (old TensorFlow checkpoints) read as LayerNorm {@code weight}/{@code bias}, and what a
     * sentence embedding does not use (the pooler, task heads, the {@code position_ids} buffer) dropped. Anything else
     * is kept, so the engine names it if it does not fit.
     */
    static Map<String, Tensor> bertWeights(Map<String, Tensor> raw, String source) {
        boolean prefixed = raw.keySet().stream().anyMatch(k -> k.startsWith("bert.embeddings."));
        Map<String, Tensor> out = new LinkedHashMap<>();
        for (var e : raw.entrySet()) {
            String k = e.getKey();
            if (prefixed) {
                if (!k.startsWith("bert.")) {
                    if (HEADS.stream().anyMatch(k::startsWith)) continue;
                } else k = k.substring("bert.".length());
            }
            if (k.equals("embeddings.position_ids") || HEADS.stream().anyMatch(k::startsWith)) continue;
            if (k.endsWith(".gamma")) k = k.substring(0, k.length() - 6) + ".weight";
            else if (k.endsWith(".beta")) k = k.substring(0, k.length() - 5) + ".bias";
            if (out.put(k, e.getValue()) != null)
                throw AttnException.badInput(source + ": tensor '" + k + "' appears twice (with and without a prefix)");
        }
        return out;
    }

    // ---------------------------------------------------------------------------------------------------- ONNX

    private static TextModel readOnnx(Path onnx, Path tokenizerOverride) {
        OnnxBert.Imported imp = OnnxBert.read(onnx);
        BertHyper hyper = hyperOf(new JsonFields(imp.config(), onnx.toString()), onnx);
        Path tokenizer = tokenizerOverride;
        if (tokenizer == null) {
            String file = onnx.getFileName().toString();
            String stem = file.substring(0, file.length() - ".onnx".length());
            Path dir = onnx.toAbsolutePath().getParent();
            tokenizer = firstExisting(dir.resolve("tokenizer.json"), dir.resolve(stem + "-tokenizer.json"));
            if (tokenizer == null)
                throw AttnException.badInput(onnx + ": no tokenizer.json (nor " + stem
                        + "-tokenizer.json) beside it: name one with --tokenizer");
        }
        String file = onnx.getFileName().toString();
        return new TextModel(
                file.substring(0, file.length() - ".onnx".length()),
                onnx.toString(),
                hyper,
                bertWeights(imp.weights(), onnx.toString()),
                tokenizer,
                Pooling.MEAN,
                false,
                maxLength(tokenizer, 0, hyper));
    }

    // ---------------------------------------------------------------------------------------------------- helpers

    /** tokenizer.json's truncation when set, else max_seq_length, else max_position_embeddings. */
    private static int maxLength(Path tokenizer, int maxSeqLength, BertHyper hyper) {
        if (!Files.exists(tokenizer)) throw AttnException.badInput(tokenizer + ": no such file (tokenizer.json)");
        Object t = Json.topLevelMember(tokenizer, "truncation");
        int n = 0;
        if (t instanceof Map<?, ?>) n = JsonFields.of(t, tokenizer.toString()).integer("max_length", 0);
        if (n <= 0) n = maxSeqLength;
        if (n <= 0) n = hyper.maxPositionEmbeddings();
        return Math.min(n, hyper.maxPositionEmbeddings());
    }

    private static Path tokenizerIn(Path dir) {
        Path t = dir.resolve("tokenizer.json");
        if (!Files.exists(t))
            throw AttnException.badInput(dir + ": no tokenizer.json (attn reads the Hugging Face tokenizers format;"
                    + " a folder with only vocab.txt can be converted by saving its fast tokenizer)");
        return t;
    }

    private static Path inside(Path dir, String rel, Path file) {
        Path p = dir.resolve(rel).normalize();
        if (Path.of(rel).isAbsolute() || !p.startsWith(dir.normalize()))
            throw AttnException.badInput(file + ": path \"" + rel + "\" leaves the model folder");
        return p;
    }

    private static Path firstExisting(Path... ps) {
        for (Path p : ps) if (Files.exists(p)) return p;
        return null;
    }

    private static JsonObject module(int idx, String path, String type) {
        JsonObject o = new JsonObject();
        o.addProperty("idx", idx);
        o.addProperty("name", String.valueOf(idx));
        o.addProperty("path", path);
        o.addProperty("type", type);
        return o;
    }

    private static void write(Path p, String s) throws IOException {
        Files.writeString(p, s + "\n", StandardCharsets.UTF_8);
    }

    private static void deleteTree(Path p) {
        if (!Files.exists(p)) return;
        try (var s = Files.walk(p)) {
            for (Path q : s.sorted(java.util.Comparator.reverseOrder()).toList()) Files.deleteIfExists(q);
        } catch (IOException ignored) {
            // best effort: a leftover temporary folder is named as such
        }
    }
}
