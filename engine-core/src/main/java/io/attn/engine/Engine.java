package io.attn.engine;

import io.attn.AttnException;
import io.attn.backend.Backend;
import io.attn.backend.BackendOptions;
import io.attn.backend.Backends;
import io.attn.io.Json;
import io.attn.nn.EncoderFamily;
import io.attn.nn.Model;
import io.attn.nn.ModelConfig;
import io.attn.nn.StateDict;
import io.attn.tensor.Tensor;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The entry point of the library: one compute device (CPU or CUDA backend, chosen when opened) and the models loaded
 * on it. Open one per process at service start, load models, call them from request threads, close at shutdown.
 *
 * <pre>{@code
 * try (Engine engine = Engine.open(EngineOptions.defaults().withDevice("cpu"));
 *         AttnModel model = engine.load(Path.of("enc.safetensors"))) {
 *     Tensor y = model.encode(Tensors.of(data, 2, 10, 64));
 * }
 * }</pre>
 *
 * <p>Thread-safe: {@code load} and the models' calls may run from many threads at once. {@link #close} waits for loads
 * in flight, closes every model it loaded (each waits for its calls in flight), then releases the device; it is
 * idempotent, and any use after it throws {@link IllegalStateException}.
 */
public final class Engine implements AutoCloseable {
    private final Backend backend;
    private final String description;
    private final Set<AttnModel> models = ConcurrentHashMap.newKeySet();
    private final Gate gate = new Gate("engine");

    static {
        // the engine's own modules (tests, benchmarks) open an engine over a backend of theirs through the internal
        // package; the public API names no backend type
        io.attn.engine.internal.Engines.factory(Engine::new);
    }

    private Engine(Backend backend, String description) {
        this.backend = backend;
        this.description = description;
    }

    /**
     * Opens the device named in {@code options}.
     *
     * @throws AttnException DEVICE_UNAVAILABLE when the device cannot be used (for {@code auto}: when none can), with
     *     the reason: no GPU or driver, or its backend not on the class path (the message names the artifact to add,
     *     {@code io.attn:engine-cuda} or {@code io.attn:engine-cpu}); BAD_INPUT for an unknown device name
     */
    public static Engine open(EngineOptions options) {
        if (options == null) options = EngineOptions.defaults();
        Backends.Selection s = Backends.open(
                options.device(), new BackendOptions(options.threads(), options.precision(), options.extra()));
        return new Engine(s.backend(), s.reason());
    }

    /** {@link #open(EngineOptions)} with the defaults. */
    public static Engine open() {
        return open(EngineOptions.defaults());
    }

    /** The backend (for the engine's own benchmark hooks, {@link KernelBench}). */
    Backend backend() {
        if (gate.isClosed()) throw new IllegalStateException("engine is closed");
        return backend;
    }

    /** The device that runs the models: {@code cpu} or {@code cuda}. */
    public String device() {
        return backend.name();
    }

    /**
     * Bytes of device memory that the weights of this engine's models hold now, or -1 where the models compute from
     * their own arrays in host memory (the CPU). On CUDA at precision bf16 / fp16 the GEMM weights are held in 16 bits
     * (2 bytes each), the other weights in fp32.
     */
    public long weightBytes() {
        return backend.constantBytes();
    }

    /** One line: the device, why it was chosen, threads or GPU. */
    public String description() {
        return description;
    }

    /**
     * Loads a model exported from PyTorch: a safetensors file with the module's {@code state_dict()} and the config
     * (module kind and constructor arguments) in its metadata entry {@code "config"}.
     *
     * @throws AttnException BAD_INPUT / SHAPE_MISMATCH naming the file and the problem
     */
    public AttnModel load(Path weights) {
        return load(weights, null);
    }

    /** Like {@link #load(Path)} with the config read from a JSON file ({@code null}: from the metadata). */
    public AttnModel load(Path weights, Path config) {
        if (weights == null) throw AttnException.badInput("weights path is null");
        return register(() -> Model.load(weights, config));
    }

    /**
     * Builds a model in code from a config and weights under PyTorch's {@code state_dict} names. The weights are
     * copied, so later changes to the caller's arrays do not reach the model (loading holds the weights twice for a
     * moment); {@link #loadOwned} takes the arrays without a copy. Non-finite weights are refused (NON_FINITE).
     *
     * @param configJson e.g. {@code {"module":"MultiheadAttention","embed_dim":64,"num_heads":4}}
     */
    public AttnModel load(String configJson, Map<String, Tensor> stateDict) {
        return load(configJson, stateDict, "state_dict");
    }

    /**
     * Like {@link #load(String, Map)}; {@code source} names the weights in error messages (the file they came from).
     */
    public AttnModel load(String configJson, Map<String, Tensor> stateDict, String source) {
        ModelConfig c = parse(configJson);
        if (stateDict == null) throw AttnException.badInput("state dict is null");
        return register(() -> Model.load(c, new StateDict(copied(stateDict), source == null ? "state_dict" : source)));
    }

    /**
     * Like {@link #load(String, Map, String)} without copying: the engine takes ownership of the tensors' arrays. The
     * model reads them for as long as it is open, so the caller must not change them, now or later. For a loader that
     * has just read the weights from a file and keeps no other use for them (peak memory: the weights once).
     */
    public AttnModel loadOwned(String configJson, Map<String, Tensor> stateDict, String source) {
        ModelConfig c = parse(configJson);
        if (stateDict == null) throw AttnException.badInput("state dict is null");
        return register(() -> Model.load(c, new StateDict(stateDict, source == null ? "state_dict" : source)));
    }

    /**
     * Like {@link #loadOwned(String, Map, String)} with the config already parsed: a module config ({@code "module"}) or
     * a Hugging Face {@code config.json} as read ({@code "model_type"} {@code bert}, {@code xlm-roberta}, {@code
     * roberta}, {@code camembert}, {@code distilbert}, {@code mpnet}; the keys the engine does not use are ignored, as transformers
     * ignores them for inference), whose checkpoint names are taken as transformers takes them (a task model's prefix
     * such as {@code bert.} removed, its heads and pooler left out). For loaders of model folders: the config travels
     * as read, once.
     */
    public AttnModel loadOwned(Map<String, Object> config, Map<String, Tensor> stateDict, String source) {
        if (config == null) throw AttnException.badInput("config is null");
        String name = source == null ? "config" : source;
        ModelConfig c = ModelConfig.parse(config, name);
        if (stateDict == null) throw AttnException.badInput("state dict is null");
        Map<String, Tensor> weights = c.encoder() != null && !config.containsKey("module")
                ? EncoderFamily.encoderWeights(
                        EncoderFamily.of(c.encoder().modelType(), name),
                        stateDict,
                        name,
                        c.head() == null ? List.of() : c.head().prefixes())
                : stateDict;
        return register(() -> Model.load(c, new StateDict(weights, source == null ? "state_dict" : source)));
    }

    private static ModelConfig parse(String configJson) {
        return ModelConfig.parse(configObject(configJson), "config");
    }

    private static Map<String, Object> configObject(String configJson) {
        if (configJson == null) throw AttnException.badInput("config is null");
        return Json.parseObject(configJson, "config");
    }

    /** A copy of every tensor (inside {@link #register}: running out of heap here is DEVICE_OUT_OF_MEMORY too). */
    private static Map<String, Tensor> copied(Map<String, Tensor> stateDict) {
        Map<String, Tensor> copy = new LinkedHashMap<>();
        for (var e : stateDict.entrySet()) {
            if (e.getValue() == null) throw AttnException.badInput("state dict: tensor '" + e.getKey() + "' is null");
            copy.put(e.getKey(), e.getValue().copy());
        }
        return copy;
    }

    /** The models loaded and not yet closed. */
    public List<AttnModel> models() {
        return List.copyOf(models);
    }

    public boolean isClosed() {
        return gate.isClosed();
    }

    /** Waits for loads in flight, closes every model (waiting for their calls), releases the device. Idempotent. */
    @Override
    public void close() {
        gate.close(() -> {
            try {
                for (AttnModel m : List.copyOf(models)) m.close();
                for (LanguageModel m : List.copyOf(languageModels)) m.close();
            } finally {
                backend.close();
            }
        });
    }

    void forget(AttnModel m) {
        models.remove(m);
    }

    private interface Loader {
        Model load();
    }

    private AttnModel register(Loader loader) {
        return register(() -> new AttnModel(this, backend, loader.load()), models);
    }

    /**
     * Makes a model inside the gate (so close() waits for it) and adds it to {@code into}; every failure but an
     * AttnException becomes one: the heap running out is DEVICE_OUT_OF_MEMORY, anything else INTERNAL.
     */
    private <M> M register(java.util.function.Supplier<M> make, Set<M> into) {
        gate.enter();
        try {
            M m;
            try {
                m = make.get();
            } catch (RuntimeException | OutOfMemoryError e) {
                throw Failures.of(e, "loading the model");
            }
            into.add(m);
            return m;
        } finally {
            gate.exit();
        }
    }

    // Language models (decoder-only generation)

    private final Set<LanguageModel> languageModels = ConcurrentHashMap.newKeySet();

    /** {@link #loadLanguageModel(Path, Path)} with the config from the safetensors metadata. */
    public LanguageModel loadLanguageModel(Path weights) {
        return loadLanguageModel(weights, null);
    }

    /**
     * Loads a decoder-only language model ({@code "module":"DecoderOnlyLM"}) for {@link LanguageModel#generate}: a
     * safetensors file with its {@code state_dict()} and the config in the metadata entry {@code "config"}, or in a JSON
     * file {@code config} (when not null). Config keys: {@code vocab_size, d_model, nhead, num_layers,
     * dim_feedforward, max_len, positional ("sinusoidal" or "learned"), norm_first, activation, tied_embeddings,
     * final_norm, layer_norm_eps, bias}.
     *
     * @throws AttnException BAD_INPUT / SHAPE_MISMATCH naming the file and the problem (a config of another module
     *     too), NON_FINITE for NaN or infinite weights
     */
    public LanguageModel loadLanguageModel(Path weights, Path config) {
        if (weights == null) throw AttnException.badInput("weights path is null");
        return registerLanguageModel(() -> readLanguageModel(weights, config));
    }

    /**
     * The model of a safetensors file (its config from {@code config} or the metadata), its quantization checked:
     * int8 weights need {@link Quantization#PER_TOKEN} activations.
     */
    static io.attn.nn.DecoderOnlyLM readLanguageModel(Path weights, Path config) {
        io.attn.io.SafeTensors.File f = io.attn.io.SafeTensors.read(weights, true);
        io.attn.nn.ConfigFiles.Read c = io.attn.nn.ConfigFiles.read(f, weights, config);
        io.attn.nn.DecoderOnlyConfig parsed = io.attn.nn.DecoderOnlyConfig.parse(c.json(), c.source());
        var tensors = Quantization.check(c.json(), f.tensors(), weights.toString(), Quantization.PER_TOKEN);
        return io.attn.nn.DecoderOnlyLM.load(parsed, new StateDict(tensors, weights.toString()));
    }

    /**
     * Builds a decoder-only language model in code from a config (as in {@link #loadLanguageModel(Path, Path)}, e.g.
     * {@code {"module":"DecoderOnlyLM","vocab_size":1000,"d_model":512,"nhead":8,"num_layers":6}}) and weights under
     * PyTorch's {@code state_dict} names ({@code embed.weight}, {@code layers.N.self_attn.in_proj_weight}, ...). The
     * weights are copied, as by {@link #load(String, Map)}.
     */
    public LanguageModel loadLanguageModel(String configJson, Map<String, Tensor> stateDict) {
        Map<String, Object> json = configObject(configJson);
        if (stateDict == null) throw AttnException.badInput("state dict is null");
        io.attn.nn.DecoderOnlyConfig c = io.attn.nn.DecoderOnlyConfig.parse(json, "config");
        return registerLanguageModel(() -> io.attn.nn.DecoderOnlyLM.load(
                c, new StateDict(Quantization.check(json, copied(stateDict), "state dict", Quantization.PER_TOKEN))));
    }

    /** The language models loaded and not yet closed. */
    public List<LanguageModel> languageModels() {
        return List.copyOf(languageModels);
    }

    void forget(LanguageModel m) {
        languageModels.remove(m);
    }

    private LanguageModel registerLanguageModel(java.util.function.Supplier<io.attn.nn.DecoderOnlyLM> loader) {
        return register(() -> new LanguageModel(this, backend, loader.get()), languageModels);
    }
}
