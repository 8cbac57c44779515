package io.attn.text;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import io.attn.AttnException;
import io.attn.engine.ModelConfigs;
import io.attn.engine.Quantization;
import io.attn.engine.TaskAdapters;
import io.attn.io.Json;
import io.attn.io.JsonFields;
import io.attn.io.SafeTensors;
import io.attn.tensor.DType;
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
 * A text encoder as it lies on disk, read and checked but not yet on a device: a Hugging Face folder (a {@code
 * save_pretrained} output, a sentence-transformers save of any version, or a hub snapshot) or an ONNX export of a BERT
 * with its {@code tokenizer.json}.
 *
 * <p>A folder holds {@code config.json} (a {@code model_type} the engine runs: {@code bert}, {@code xlm-roberta},
 * {@code roberta}, {@code camembert}, {@code distilbert}; the engine's family reader checks it), {@code
 * model.safetensors} (or shards named by {@code model.safetensors.index.json}; F32, F16 or BF16; names with or without
 * the task model's prefix such as {@code bert.}), {@code tokenizer.json}, and optionally the sentence-transformers
 * files: {@code modules.json} with a {@code Pooling} module ({@code 1_Pooling/config.json}, classic or
 * sentence-transformers 6's {@code pooling_mode} / {@code include_prompt}), {@link Dense} modules and a {@code
 * Normalize} module, {@code
 * sentence_bert_config.json} ({@code max_seq_length}) and {@code config_sentence_transformers.json} ({@code prompts},
 * {@code default_prompt_name}). Without the sentence-transformers files the pooling is mean, not normalized, with no
 * prompt.
 *
 * <p>The maximum length in tokens is {@code max_seq_length} ({@code sentence_bert_config.json}; sentence-transformers 6
 * keeps it as {@code tokenizer_config.json}'s {@code model_max_length}), as sentence-transformers takes it, else the
 * truncation of {@code tokenizer.json} when it sets one (a bare export's), else the model's positions ({@link
 * #maxPositions()}); never more than those.
 *
 * <p>Immutable after reading; the weights are not copied when handed to an engine.
 */
public final class TextModel {
    private final String name;
    private final String source;
    private final Map<String, Object> config;
    private final int hiddenSize, maxPositions;
    private final Map<String, Tensor> weights;
    private final Path tokenizer;
    private final Pooling pooling;
    private final boolean normalize;
    private final List<Dense> dense; // sentence-transformers Dense modules after the pooling, in order
    private final int maxLength;
    private final Prompts prompts;
    private final List<String> labels; // empty for an encoder without a classification head
    private final String activation; // sentence-transformers' CrossEncoder activation_fn, or null

    /**
     * sentence-transformers' prompts ({@code config_sentence_transformers.json}): text put before each input, by name,
     * the one used when none is asked for, and whether the prompt's tokens take part in the pooling ({@code
     * include_prompt} of the Pooling module).
     *
     * @param byName the prompts by name (may be empty)
     * @param defaultName the name of the prompt used by default, or null for none
     */
    public record Prompts(Map<String, String> byName, String defaultName, boolean includePrompt) {
        public static final Prompts NONE = new Prompts(Map.of(), null, true);

        public Prompts {
            byName = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(byName));
        }

        /** The prompt called {@code name}; BAD_INPUT naming the known ones when there is none. */
        public String get(String name) {
            String p = byName.get(name);
            if (p == null)
                throw AttnException.badInput("prompt name \"" + name + "\" is not one of the model's prompts "
                        + byName.keySet() + " (config_sentence_transformers.json)");
            return p;
        }

        /** The default prompt's text, or "" when the model names none. */
        public String defaultPrompt() {
            return defaultName == null ? "" : byName.getOrDefault(defaultName, "");
        }
    }

    private TextModel(
            String name,
            String source,
            Map<String, Object> config,
            Map<String, Tensor> weights,
            Path tokenizer,
            Pooling pooling,
            List<Dense> dense,
            boolean normalize,
            int maxSeqLength,
            Prompts prompts,
            String activation) {
        this.name = name;
        this.source = source;
        this.config = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(config));
        // the engine reads the config (family, defaults) and says what it understood
        Map<String, Object> args = ModelConfigs.withDefaults(this.config, source);
        this.hiddenSize = ((Number) args.get("hidden_size")).intValue();
        int first = args.get("first_position_id") instanceof Number n ? n.intValue() : 0;
        this.maxPositions = ((Number) args.get("max_position_embeddings")).intValue() - first;
        this.weights = weights;
        this.tokenizer = tokenizer;
        this.pooling = pooling;
        this.dense = List.copyOf(dense);
        int width = hiddenSize;
        for (Dense d : this.dense) {
            if (d.in() != width)
                throw AttnException.badInput(d.path() + "/config.json: in_features " + d.in() + " does not match the "
                        + (width == hiddenSize ? "model's hidden_size " : "previous Dense module's out_features ")
                        + width);
            width = d.out();
        }
        this.normalize = normalize;
        this.maxLength = maxLength(tokenizer, maxSeqLength, maxPositions);
        this.prompts = prompts;
        List<String> l = new java.util.ArrayList<>();
        if (args.get("labels") instanceof List<?> ls) for (Object o : ls) l.add(String.valueOf(o));
        this.labels = List.copyOf(l);
        this.activation = activation;
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
        return read(model, tokenizer, null);
    }

    /**
     * Like {@link #read(Path, Path)}, with the model's task adapter {@code task} merged into its weights (null: none):
     * the task LoRA adapters of jina-embeddings-v3's checkpoint, one of its {@code lora_adaptations} ({@link
     * TaskAdapters}). Without a task such a model runs its base weights, as its remote code does.
     *
     * @throws AttnException BAD_INPUT for a task the model does not have (the line lists those it has)
     */
    public static TextModel read(Path model, Path tokenizer, String task) {
        if (model == null) throw AttnException.badInput("model path is null");
        if (Files.isDirectory(model))
            return readFolder(model, tokenizer, java.util.Collections.singletonList(task), TaskAdapters.Mode.MERGE)
                    .get(0);
        if (!Files.exists(model)) throw AttnException.badInput(model + ": no such file or directory");
        if (task != null)
            throw AttnException.badInput(model + ": task \"" + task + "\" asked, but a single file holds no task"
                    + " adapters (they come in a model folder's weights, as jina-embeddings-v3's)");
        if (model.getFileName().toString().toLowerCase(java.util.Locale.ROOT).endsWith(".onnx"))
            return readOnnx(model, tokenizer);
        throw AttnException.badInput(model
                + ": not a model folder or an .onnx file (a Hugging Face model is a folder holding config.json,"
                + " model.safetensors and tokenizer.json)");
    }

    /**
     * Like {@link #read(Path, Path, String)}, the task's adapter reaching the model as {@code mode} says: merged (null
     * or {@link TaskAdapters.Mode#MERGE}) or beside the weights ({@link TaskAdapters.Mode#SHARE}).
     */
    public static TextModel read(Path model, Path tokenizer, String task, TaskAdapters.Mode mode) {
        if (mode == null || mode == TaskAdapters.Mode.MERGE) return read(model, tokenizer, task);
        return read(model, tokenizer, java.util.Collections.singletonList(task), mode)
                .get(0);
    }

    /**
     * The models of several of a task LoRA folder's tasks ({@code tasks}, a null entry for the base weights alone), in
     * that order, read once. {@link TaskAdapters.Mode#SHARE}: every model holds the same base weights (and the
     * backends pack them once), each its task's adapter beside them, run per call; {@link TaskAdapters.Mode#MERGE}: each
     * task's model holds its own merged copy, as {@link #read(Path, Path, String)} reads it. A folder without task
     * adapters is read once and shared by every null entry.
     *
     * @throws AttnException BAD_INPUT as {@link #read(Path, Path, String)}, for any of the tasks
     */
    public static List<TextModel> read(Path model, Path tokenizer, List<String> tasks, TaskAdapters.Mode mode) {
        if (model == null) throw AttnException.badInput("model path is null");
        if (tasks == null || tasks.isEmpty() || mode == null)
            throw AttnException.badInput(model + ": read with no task list or no adapter mode");
        if (!Files.isDirectory(model)) {
            List<TextModel> out = new java.util.ArrayList<>();
            for (String t : tasks) out.add(t != null || out.isEmpty() ? read(model, tokenizer, t) : out.get(0));
            return out;
        }
        return readFolder(model, tokenizer, tasks, mode);
    }

    /**
     * A model whose task adapter runs beside its weights ({@link TaskAdapters.Mode#SHARE}) is not quantized or written:
     * its config names the task as merged ({@code attn_task}) while its weights are not; read it merged for that.
     */
    private void refuseSeparateAdapter(String what) {
        if (TaskAdapters.separate(weights))
            throw AttnException.badInput(source + ": a model read with task \"" + task()
                    + "\"'s adapter beside its weights (shared mode) is not " + what
                    + "; read it with the adapter merged (TextModel.read(dir, tokenizer, task), attn quantize --task)");
    }

    /** The task adapter merged into the weights ({@link #read(Path, Path, String)}), or null. */
    public String task() {
        return config.get(TASK_KEY) instanceof String t ? t : null;
    }

    /** The task adapters the weights hold, to merge one with {@link #read(Path, Path, String)}; empty for none. */
    public List<String> tasks() {
        return TaskAdapters.tasks(config, source);
    }

    /** The model's name: the folder's (or the ONNX file's) name. */
    public String name() {
        return name;
    }

    /** Where the weights came from (a file or folder), for messages. */
    public String source() {
        return source;
    }

    /** Whether the weights came from an {@code .onnx} export (given as the file or as the folder holding it). */
    public boolean fromOnnx() {
        return source.toLowerCase(java.util.Locale.ROOT).endsWith(".onnx");
    }

    public int hiddenSize() {
        return hiddenSize;
    }

    /** The most tokens a sequence may have: the model's positions (past the first position id of RoBERTa's family). */
    public int maxPositions() {
        return maxPositions;
    }

    /** The model's Hugging Face {@code config.json} as read (for an ONNX file: as read off its graph). */
    public Map<String, Object> config() {
        return config;
    }

    /** The model's {@code model_type}. */
    public String modelType() {
        return String.valueOf(config.get("model_type"));
    }

    /**
     * The labels of a sequence-classification model ({@code architectures} {@code *ForSequenceClassification}: its
     * {@code id2label}, one per output); empty for an encoder without a head.
     */
    public List<String> labels() {
        return labels;
    }

    /** Whether the model is a sequence classifier (a cross-encoder or a text classifier). */
    public boolean isClassifier() {
        return !labels.isEmpty();
    }

    /**
     * The activation sentence-transformers' {@code CrossEncoder} applies to the logits, as the model's files declare it
     * ({@code activation_fn} in {@code config_sentence_transformers.json}, sentence-transformers 6; or under {@code
     * sentence_transformers} in {@code config.json}, earlier versions), e.g. {@code torch.nn.modules.activation.Sigmoid};
     * null when they declare none.
     */
    public String activation() {
        return activation;
    }

    /** The model's prompts (none for a folder without {@code config_sentence_transformers.json}). */
    public Prompts prompts() {
        return prompts;
    }

    /** The model's own pooling (sentence-transformers' Pooling module; mean without one). */
    public Pooling pooling() {
        return pooling;
    }

    /**
     * The model's Dense modules after the pooling, in order (sentence-transformers' {@code Dense}: LaBSE's tanh
     * projection, stella's projection to fewer dimensions); empty for most models.
     */
    public List<Dense> dense() {
        return dense;
    }

    /** The width of the model's sentence vectors: the last Dense module's out_features, else the hidden size. */
    public int dimension() {
        return dense.isEmpty() ? hiddenSize : dense.get(dense.size() - 1).out();
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

    /**
     * Writes the model as a Hugging Face folder that {@link #read} and the Hugging Face libraries load: {@code
     * config.json}, {@code model.safetensors}, {@code tokenizer.json}, and the sentence-transformers files for the given
     * pooling and normalization ({@code modules.json}, {@code 1_Pooling/config.json}, {@code 2_Normalize/} when
     * normalized, {@code sentence_bert_config.json}). The folder is written beside its final place and renamed into it,
     * so a failure leaves nothing; an existing non-empty folder is refused. An int8 model (an ONNX Runtime {@code -q}
     * export) keeps its int8 weights, scales and zero points, and its {@code config.json} gets the {@value
     * Quantization#CONFIG_KEY} block of {@code attn quantize}'s format ({@link Quantization#describe}): attn loads
     * that folder with the file's arithmetic; the Hugging Face libraries do not read int8 weights.
     */
    public void writeFolder(Path dir, Pooling pooling, boolean normalize) {
        writeFolder(dir, pooling, normalize, DType.F32);
    }

    /**
     * {@link #writeFolder(Path, Pooling, boolean)} with the float tensors written as {@code floats} (F32, F16 or BF16):
     * {@code attn quantize} of an {@code .onnx} export, which has no folder of Hugging Face files to copy.
     *
     * @throws AttnException BAD_INPUT naming a half-precision value out of range (tensor, index), or what cannot be
     *     written
     */
    public void writeFolder(Path dir, Pooling pooling, boolean normalize, DType floats) {
        // an int8 model (an ONNX Runtime -q export): its int8 weights as they are, with the config block that says
        // how they were quantized (attn quantize's format), so the folder runs the same arithmetic as the file
        Map<String, Object> cfg = config;
        if (!int8Tensors().isEmpty() && !config.containsKey(Quantization.CONFIG_KEY)) {
            cfg = new LinkedHashMap<>(config);
            cfg.put(
                    Quantization.CONFIG_KEY,
                    Quantization.describe(
                            config, weights, Path.of(source).getFileName().toString()));
        }
        Path abs = dir.toAbsolutePath();
        Path tmp = temporaryBeside(dir, abs);
        try {
            Files.createDirectories(tmp.resolve("1_Pooling"));
            Gson gson = new GsonBuilder().setPrettyPrinting().create();
            write(tmp.resolve("config.json"), gson.toJson(cfg));
            SafeTensors.write(tmp.resolve("model.safetensors"), weights, Map.of("format", "pt"), floats);
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
            pool.put("word_embedding_dimension", hiddenSize);
            for (Pooling p : Pooling.values()) pool.put(p.configKey(), p == pooling);
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

    /**
     * This model with its weights quantized to int8 as ONNX Runtime's dynamic quantization does ({@link
     * Quantization#dynamicInt8}), its config holding the {@value Quantization#CONFIG_KEY} block.
     */
    public TextModel quantized(Quantization.Options options) {
        refuseSeparateAdapter("quantized");
        Path src = Path.of(source);
        String folder = (Files.isDirectory(src) || src.getParent() == null ? src : src.getParent()).toString();
        Quantization.Quantized q = Quantization.dynamicInt8(config, weights, options, folder);
        return new TextModel(
                name,
                source,
                q.config(),
                q.weights(),
                tokenizer,
                pooling,
                dense,
                normalize,
                maxLength,
                prompts,
                activation);
    }

    /** What {@link #quantized} quantized: the names of the int8 weights and tables (not their zero points). */
    public java.util.List<String> int8Tensors() {
        List<String> out = new java.util.ArrayList<>();
        for (var e : weights.entrySet())
            if (e.getValue().dtype() == DType.I8 && !e.getKey().endsWith("_zero_point")) out.add(e.getKey());
        return out;
    }

    /**
     * Writes this model as a copy of the Hugging Face folder {@code from} it was read from: every file of {@code from}
     * but its weights ({@code *.safetensors}, the shard index, {@code *.bin}, {@code *.onnx}, {@code *.h5}, {@code
     * onnx/}, ...) copied as is (tokenizer files, sentence-transformers modules, prompts, README), then {@code
     * config.json} and one {@code model.safetensors} (float tensors as {@code floats}: F32, F16 or BF16) where the
     * transformer's were. The folder is written beside {@code dir} and renamed into it, so a failure leaves nothing; an
     * existing non-empty {@code dir} is refused.
     *
     * @throws AttnException BAD_INPUT naming a half-precision value out of range (tensor, index), or what cannot be
     *     written
     */
    public void writeFolderFrom(Path from, Path dir, DType floats) {
        refuseSeparateAdapter("written as a folder");
        if (!Files.isDirectory(from))
            throw AttnException.badInput(from + ": not a folder (attn quantize reads a Hugging Face model folder;"
                    + " an .onnx export is made one by attn convert)");
        Path src = Path.of(source);
        Path transformer = Files.isDirectory(src) ? src : src.getParent();
        Path rel = from.toAbsolutePath()
                .normalize()
                .relativize(transformer.toAbsolutePath().normalize());
        Path abs = dir.toAbsolutePath().normalize();
        if (abs.startsWith(from.toAbsolutePath().normalize()))
            throw AttnException.badInput(dir + ": inside the model folder " + from + " (nothing written)");
        Path tmp = temporaryBeside(dir, abs);
        try {
            Path root = from.toAbsolutePath().normalize();
            try (var files = Files.walk(root, java.nio.file.FileVisitOption.FOLLOW_LINKS)) {
                for (Path f : files.toList()) {
                    Path r = root.relativize(f);
                    if (f.equals(root) || isWeightFile(r, rel)) continue;
                    Path to = tmp.resolve(r.toString());
                    if (Files.isDirectory(f)) Files.createDirectories(to);
                    else {
                        Files.createDirectories(to.getParent());
                        Files.copy(f, to);
                    }
                }
            }
            Path t = tmp.resolve(rel.toString());
            Files.createDirectories(t);
            Gson gson = new GsonBuilder().setPrettyPrinting().create();
            Files.deleteIfExists(t.resolve("config.json"));
            write(t.resolve("config.json"), gson.toJson(config));
            SafeTensors.write(t.resolve("model.safetensors"), weights, Map.of("format", "pt"), floats);
            if (Files.exists(abs)) Files.delete(abs);
            Files.move(tmp, abs, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw AttnException.badInput(dir + ": cannot write (" + e + ")");
        } finally {
            deleteTree(tmp);
        }
    }

    /**
     * Weights that {@link #writeFolderFrom} replaces or leaves out (other formats of the same weights): the
     * transformer's, in its folder {@code transformer} (relative; empty for the root), and the {@code onnx/} and {@code
     * openvino/} exports. Other modules' weights (a Dense module's {@code 2_Dense/model.safetensors}) are copied as is.
     */
    private static boolean isWeightFile(Path rel, Path transformer) {
        String top = rel.getName(0).toString();
        String n = rel.getFileName().toString().toLowerCase(java.util.Locale.ROOT);
        if (top.equals("onnx") || top.equals("openvino") || n.startsWith(".")) return true;
        String parent = rel.getParent() == null ? "" : rel.getParent().toString();
        if (!parent.equals(transformer.toString())) return false;
        return n.endsWith(".safetensors")
                || n.endsWith(".safetensors.index.json")
                || n.endsWith(".bin")
                || n.endsWith(".bin.index.json")
                || n.endsWith(".onnx")
                || n.endsWith(".onnx_data")
                || n.endsWith(".h5")
                || n.endsWith(".msgpack")
                || n.endsWith(".ot")
                || n.endsWith(".pt")
                || n.endsWith(".pth")
                || n.endsWith(".ckpt");
    }

    /** A fresh temporary folder beside {@code abs}, after checking that {@code dir} is absent or an empty folder. */
    private static Path temporaryBeside(Path dir, Path abs) {
        if (Files.exists(abs)) {
            if (!Files.isDirectory(abs))
                throw AttnException.badInput(dir + ": exists and is not a folder (nothing written)");
            try (var s = Files.list(abs)) {
                if (s.findAny().isPresent())
                    throw AttnException.badInput(dir + ": exists and is not an empty folder (nothing written)");
            } catch (IOException e) {
                throw AttnException.badInput(dir + ": cannot read (" + e.getMessage() + ")");
            }
        }
        Path parent = abs.getParent();
        if (parent == null) throw AttnException.badInput(dir + ": cannot write here");
        Path tmp = parent.resolve("." + abs.getFileName() + ".tmp-" + Long.toHexString(System.nanoTime()));
        try {
            Files.createDirectories(tmp);
        } catch (IOException e) {
            throw AttnException.badInput(dir + ": cannot write (" + e + ")");
        }
        return tmp;
    }

    // ---------------------------------------------------------------------------------------------------- folders

    /**
     * The module types sentence-transformers writes in {@code modules.json}: the classic {@code
     * sentence_transformers.models.X} and sentence-transformers 6's {@code sentence_transformers.base.modules.
     * transformer.Transformer}, {@code sentence_transformers.sentence_transformer.modules.pooling.Pooling}, ...: the
     * class name after the last dot decides.
     */
    private static String moduleClass(String type) {
        return type.startsWith("sentence_transformers.") ? type.substring(type.lastIndexOf('.') + 1) : type;
    }

    private static List<TextModel> readFolder(
            Path dir, Path tokenizerOverride, List<String> tasks, TaskAdapters.Mode mode) {
        String task =
                tasks.stream().filter(java.util.Objects::nonNull).findFirst().orElse(null); // for messages
        Path transformer = dir;
        String customModule = null; // a custom_st.Transformer (jina-embeddings-v3's), read only for that model
        PoolingConfig pooling = new PoolingConfig(Pooling.MEAN, true);
        boolean normalize = false, pooled = false;
        List<Dense> dense = new java.util.ArrayList<>();
        Path modulesFile = dir.resolve("modules.json");
        if (Files.exists(modulesFile)) {
            for (Object m : Json.array(Json.read(modulesFile), modulesFile.toString())) {
                if (!(m instanceof Map<?, ?>))
                    throw AttnException.badInput(modulesFile + ": each module must be an object");
                JsonFields o = JsonFields.of(m, modulesFile.toString());
                String type = o.string("type", "");
                String path = o.string("path", "");
                Path at = inside(dir, path, modulesFile);
                switch (moduleClass(type)) {
                    case "Transformer" -> transformer = at;
                    case "custom_st.Transformer" -> {
                        transformer = at;
                        customModule = type;
                    }
                    case "Pooling" -> {
                        pooling = poolingOf(at.resolve("config.json"));
                        pooled = true;
                    }
                    case "Dense" -> {
                        // sentence-transformers runs the modules in order; attn runs Pooling, Dense..., Normalize
                        if (!pooled || normalize)
                            throw AttnException.badInput(modulesFile + ": Dense module \"" + path + "\" comes "
                                    + (normalize ? "after Normalize" : "before Pooling")
                                    + " (attn runs Dense modules between Pooling and Normalize)");
                        dense.add(Dense.read(at));
                    }
                    case "Normalize" -> normalize = true;
                    default ->
                        throw AttnException.badInput(modulesFile + ": module \"" + type
                                + "\" is not supported (attn runs Transformer, Pooling, Dense and Normalize)");
                }
            }
        }
        Path stConfig = firstExisting(dir.resolve("config_sentence_transformers.json"));
        Prompts prompts = promptsOf(stConfig, pooling.includePrompt());
        String activation = stConfig == null ? null : JsonFields.read(stConfig).string("activation_fn", null);
        Path configFile = transformer.resolve("config.json");
        if (!Files.exists(configFile)) {
            Path onnx = firstExisting(transformer.resolve("model.onnx"), transformer.resolve("onnx/model.onnx"));
            if (onnx == null) onnx = soleOnnx(transformer);
            if (onnx != null) {
                if (task != null)
                    throw AttnException.badInput(onnx + ": task \"" + task + "\" asked, but an .onnx export holds no"
                            + " task adapters (they come in a model folder's weights, as jina-embeddings-v3's)");
                // no tokenizer.json in the folder: the .onnx's own <name>-tokenizer.json beside it (langchain4j's)
                Path tok = tokenizerOverride != null
                        ? tokenizerOverride
                        : Files.exists(transformer.resolve("tokenizer.json")) ? tokenizerIn(transformer) : null;
                TextModel m = readOnnx(onnx, tok);
                int seq = maxSeqLength(dir, transformer); // the folder's sentence-transformers length first, as below
                return java.util.Collections.nCopies(
                        tasks.size(),
                        new TextModel(
                                dir.getFileName().toString(),
                                m.source,
                                m.config,
                                m.weights,
                                m.tokenizer,
                                pooling.pooling(),
                                dense,
                                normalize,
                                seq > 0 ? Math.min(seq, m.maxPositions()) : m.maxLength,
                                prompts,
                                activation));
            }
            throw AttnException.badInput(dir + ": no config.json (a Hugging Face model folder holds config.json,"
                    + " model.safetensors and tokenizer.json)");
        }
        Map<String, Object> config = Json.readObject(configFile);
        // jina-embeddings-v3's own sentence-transformers module passes the task to its remote code as an adapter; attn
        // merges that adapter when loading (TaskAdapters), so it reads the module for that model and refuses it
        // otherwise
        if (customModule != null
                && TaskAdapters.tasks(config, configFile.toString()).isEmpty()
                && !(config.get(TASK_KEY) instanceof String))
            throw AttnException.badInput(
                    modulesFile + ": module \"" + customModule + "\" is the model's own Python"
                            + " code, which attn does not run (it reads custom_st.Transformer only for task LoRA models such as"
                            + " jina-embeddings-v3, whose config.json lists lora_adaptations, or names its merged task as attn_task)");
        ModelConfigs.withDefaults(config, configFile.toString()); // the family and its keys, named by config.json
        if (activation == null && config.get("sentence_transformers") instanceof Map<?, ?> st)
            activation = JsonFields.of(st, configFile.toString()).string("activation_fn", null);
        Path single = transformer.resolve("model.safetensors");
        String weightsSource = (Files.exists(single) ? single : transformer).toString();
        Path tokenizer = tokenizerOverride != null ? tokenizerOverride : tokenizerIn(transformer);
        int seq = maxSeqLength(dir, transformer);
        String name = dir.toAbsolutePath().normalize().getFileName() == null
                ? "model"
                : dir.toAbsolutePath().normalize().getFileName().toString();
        // read once; merging writes into the weights, so a merged task takes weights no other model holds
        Map<String, Tensor> read = readWeights(transformer);
        boolean given = false, written = false; // read handed to a model; merged into
        List<TextModel> out = new java.util.ArrayList<>();
        for (String t : tasks) {
            // a folder written from a merged model (attn_task) asked for its own task: nothing left to merge
            boolean merged = t != null && t.equals(config.get(TASK_KEY));
            boolean merges = mode == TaskAdapters.Mode.MERGE && t != null && !merged;
            Map<String, Tensor> raw = (merges ? given : written) ? readWeights(transformer) : read;
            if (raw == read) {
                given = true;
                written |= merges;
            }
            Map<String, Tensor> weights = Quantization.check(
                    config,
                    TaskAdapters.apply(config, raw, merged ? null : t, mode, weightsSource),
                    transformer.toString());
            out.add(new TextModel(
                    name,
                    weightsSource,
                    t != null && !merged ? withoutAdapters(config, t) : config,
                    weights,
                    tokenizer,
                    pooling.pooling(),
                    dense,
                    normalize,
                    seq,
                    prompts,
                    activation));
        }
        return out;
    }

    /**
     * A config whose weights hold task {@code task}'s adapter merged: without {@code lora_adaptations} (its weights
     * hold no adapters any more, so a folder written from it, say by {@code attn quantize}, reads as a plain model), with
     * {@code attn_task} naming the task merged.
     */
    private static Map<String, Object> withoutAdapters(Map<String, Object> config, String task) {
        Map<String, Object> c = new LinkedHashMap<>(config);
        c.remove("lora_adaptations");
        c.put(TASK_KEY, task);
        return c;
    }

    /** The config key that names the task adapter merged into a model's weights ({@link #task()}). */
    public static final String TASK_KEY = TaskAdapters.TASK_KEY;

    /** A Pooling module's mode and whether prompt tokens take part. */
    private record PoolingConfig(Pooling pooling, boolean includePrompt) {}

    /**
     * A Pooling module's {@code config.json}: sentence-transformers 6's {@code {"pooling_mode": "mean",
     * "include_prompt": true, "embedding_dimension": 384}}, or the classic one boolean per mode ({@code
     * pooling_mode_mean_tokens}, ...). attn pools with one mode (sentence-transformers would concatenate several).
     */
    private static PoolingConfig poolingOf(Path file) {
        JsonFields o = JsonFields.read(file);
        boolean include = o.bool("include_prompt", true);
        Object mode = o.get("pooling_mode");
        if (mode != null) {
            if (!(mode instanceof String s))
                throw AttnException.badInput(
                        file + ": \"pooling_mode\" must be one mode's name (attn pools with one of " + Pooling.labels()
                                + "), got " + mode);
            try {
                return new PoolingConfig(Pooling.parse(s), include);
            } catch (AttnException e) {
                throw AttnException.badInput(file + ": " + e.getMessage());
            }
        }
        List<Pooling> on = new java.util.ArrayList<>();
        for (Pooling p : Pooling.values()) if (o.bool(p.configKey(), false)) on.add(p);
        if (on.size() != 1)
            throw AttnException.badInput(file + ": exactly one pooling mode must be on (attn pools with one of "
                    + Pooling.labels() + "), found " + on.size() + (on.isEmpty() ? "" : ": " + on));
        return new PoolingConfig(on.get(0), include);
    }

    /** {@code config_sentence_transformers.json}'s {@code prompts} and {@code default_prompt_name}; none without it. */
    private static Prompts promptsOf(Path file, boolean includePrompt) {
        if (file == null) return new Prompts(Map.of(), null, includePrompt);
        JsonFields o = JsonFields.read(file);
        Map<String, String> byName = new LinkedHashMap<>();
        Object p = o.get("prompts");
        if (p != null) {
            if (!(p instanceof Map<?, ?> m)) throw AttnException.badInput(file + ": \"prompts\" must be an object");
            for (var e : m.entrySet()) {
                if (!(e.getValue() instanceof String text))
                    throw AttnException.badInput(file + ": prompt \"" + e.getKey() + "\" must be a string");
                byName.put(String.valueOf(e.getKey()), text);
            }
        }
        String dflt = o.string("default_prompt_name", null);
        if (dflt != null && !byName.containsKey(dflt))
            throw AttnException.badInput(
                    file + ": default_prompt_name \"" + dflt + "\" is not one of the prompts " + byName.keySet());
        return new Prompts(byName, dflt, includePrompt);
    }

    /** model.safetensors, or the shards listed by model.safetensors.index.json. */
    /** The folder's tensors, int8 ones kept int8 (quantized weights; {@link Quantization#check} says what they are). */
    private static Map<String, Tensor> readWeights(Path dir) {
        Path single = dir.resolve("model.safetensors");
        if (Files.exists(single)) return SafeTensors.read(single, true).tensors();
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
            for (String s : shards)
                all.putAll(SafeTensors.read(inside(dir, s, index), true).tensors());
            return all;
        }
        if (Files.exists(dir.resolve("pytorch_model.bin")))
            throw AttnException.badInput(dir + ": holds only pytorch_model.bin (a Python pickle, which attn does not"
                    + " read): save the model with safe_serialization=True, or convert it to model.safetensors");
        throw AttnException.badInput(dir + ": no model.safetensors (nor model.safetensors.index.json)");
    }

    // ---------------------------------------------------------------------------------------------------- ONNX

    /** The folder's one {@code .onnx} file (say langchain4j's {@code all-minilm-l6-v2-q.onnx}), or null. */
    private static Path soleOnnx(Path dir) {
        try (var files = Files.list(dir)) {
            List<Path> onnx = files.filter(f -> f.getFileName()
                            .toString()
                            .toLowerCase(java.util.Locale.ROOT)
                            .endsWith(".onnx"))
                    .filter(Files::isRegularFile)
                    .toList();
            if (onnx.size() > 1)
                throw AttnException.badInput(dir + ": no config.json, and " + onnx.size() + " .onnx files ("
                        + onnx.stream()
                                .map(f -> f.getFileName().toString())
                                .sorted()
                                .collect(java.util.stream.Collectors.joining(", "))
                        + "): name the one to run");
            return onnx.size() == 1 ? onnx.get(0) : null;
        } catch (java.io.IOException e) {
            return null;
        }
    }

    private static TextModel readOnnx(Path onnx, Path tokenizerOverride) {
        OnnxBert.Imported imp = OnnxBert.read(onnx);
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
                imp.config(),
                imp.weights(),
                tokenizer,
                Pooling.MEAN,
                List.of(),
                false,
                0,
                Prompts.NONE,
                null);
    }

    // ---------------------------------------------------------------------------------------------------- helpers

    /**
     * sentence-transformers' maximum length of a folder: {@code sentence_bert_config.json}'s {@code max_seq_length} (in
     * the transformer's folder or the model's), else {@code tokenizer_config.json}'s {@code model_max_length}; 0 when
     * neither says.
     */
    private static int maxSeqLength(Path dir, Path transformer) {
        int seq = 0;
        Path sbert = firstExisting(
                transformer.resolve("sentence_bert_config.json"), dir.resolve("sentence_bert_config.json"));
        if (sbert != null) seq = JsonFields.read(sbert).integer("max_seq_length", 0);
        if (seq <= 0) seq = modelMaxLength(transformer.resolve("tokenizer_config.json"));
        return seq;
    }

    /**
     * {@code tokenizer_config.json}'s {@code model_max_length}: where sentence-transformers 6 keeps a model's maximum
     * length (its {@code sentence_bert_config.json} no longer has {@code max_seq_length}); 0 when absent or the "no
     * limit" value transformers writes (10^30).
     */
    private static int modelMaxLength(Path tokenizerConfig) {
        if (!Files.exists(tokenizerConfig)) return 0;
        Object v = Json.readObject(tokenizerConfig).get("model_max_length");
        if (v instanceof Number n && n.doubleValue() >= 1 && n.doubleValue() <= 1 << 24) return n.intValue();
        return 0;
    }

    /**
     * max_seq_length (sentence_bert_config.json, else tokenizer_config.json's model_max_length), as sentence-transformers
     * and text-embeddings-inference take it (both ignore tokenizer.json's truncation); else tokenizer.json's truncation
     * (a bare export with no other file: langchain4j's); else the model's positions; at most those.
     */
    private static int maxLength(Path tokenizer, int maxSeqLength, int maxPositions) {
        if (!Files.exists(tokenizer)) throw AttnException.badInput(tokenizer + ": no such file (tokenizer.json)");
        Object t = Json.topLevelMember(tokenizer, "truncation");
        int fromTokenizer = 0;
        if (t instanceof Map<?, ?>)
            fromTokenizer = JsonFields.of(t, tokenizer.toString()).integer("max_length", 0);
        int n = maxSeqLength;
        if (n <= 0) n = fromTokenizer;
        if (n <= 0) n = maxPositions;
        return Math.min(n, maxPositions);
    }

    private static Path tokenizerIn(Path dir) {
        Path t = dir.resolve("tokenizer.json");
        Path sp = firstExisting(
                dir.resolve("sentencepiece.bpe.model"), dir.resolve("spiece.model"), dir.resolve("tokenizer.model"));
        if (!Files.exists(t) && sp != null)
            throw AttnException.badInput(sp + ": a SentencePiece model without tokenizer.json; attn reads the Hugging"
                    + " Face tokenizers format: convert it once in Python with AutoTokenizer.from_pretrained(DIR)"
                    + ".save_pretrained(DIR) (a fast tokenizer writes tokenizer.json)");
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
