package io.attn.spark;

import io.attn.AttnException;
import io.attn.engine.AttnModel;
import io.attn.engine.Engine;
import io.attn.engine.EngineOptions;
import io.attn.text.Embedder;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;
import org.apache.spark.SparkEnv;
import org.apache.spark.TaskContext;
import org.apache.spark.resource.ResourceInformation;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The models of this JVM (an executor, or the driver in local mode): one {@link Engine} per device and thread count,
 * one loaded model per engine and settings, shared by every task thread of the executor and kept until the JVM exits
 * (a shutdown hook closes them). A task asks for its model; the first asking task loads it while the others wait, so
 * a model is loaded once per executor and device whatever the number of tasks, partitions or jobs.
 *
 * <p>The device comes from the task's Spark resources ({@link DeviceChoice}). Opening an engine logs the device it
 * got and, when it is not the GPU one might expect (none assigned, one CUDA cannot use), why: once per executor and
 * device. A model that fails to load is not kept: the failure goes to the task that asked, the next task tries again.
 *
 * <p>Thread-safe.
 */
public final class ExecutorModels {
    private static final Logger LOG = LoggerFactory.getLogger(ExecutorModels.class);
    private static final Map<EngineKey, Once<Engine>> ENGINES = new ConcurrentHashMap<>();
    private static final Map<ModelKey, Once<AutoCloseable>> MODELS = new ConcurrentHashMap<>();
    private static final AtomicInteger LOADS = new AtomicInteger();
    private static final List<String> DEVICES = new CopyOnWriteArrayList<>();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(ExecutorModels::closeAll, "attn-spark-close"));
    }

    private ExecutorModels() {}

    /** An engine: the device opened and its CPU threads. */
    private record EngineKey(String device, int ordinal, boolean cpuIfUnusable, int threads) {}

    /** A model: its engine and the settings it was loaded with. */
    private record ModelKey(EngineKey engine, Object settings) {}

    /** The sentence-embedding model for these settings on the calling task's device. */
    public static Embedder embedder(EmbedSettings s) {
        return (Embedder) model(
                s.engine(), s, engine -> Embedder.load(engine, ModelLocation.resolve(s.modelPath()), s.options()));
    }

    /** The tensor model for these settings on the calling task's device. */
    public static AttnModel tensorModel(TensorSettings s) {
        return (AttnModel) model(
                s.engine(),
                s,
                engine -> engine.load(
                        ModelLocation.resolve(s.modelPath()),
                        s.configPath() == null ? null : ModelLocation.resolve(s.configPath())));
    }

    /** How many models this JVM has loaded (for monitoring and tests). */
    public static int loads() {
        return LOADS.get();
    }

    /**
     * One line per engine this JVM opened: the node, the device with its description and, when it is not the GPU one
     * might expect, why (the line the executor log shows).
     */
    public static List<String> devices() {
        return List.copyOf(DEVICES);
    }

    /** Closes every model and engine of this JVM (at JVM exit; later tasks would load again). */
    public static void closeAll() {
        List<AutoCloseable> closing = new ArrayList<>();
        MODELS.values().forEach(o -> o.ifMade(closing::add));
        ENGINES.values().forEach(o -> o.ifMade(closing::add));
        MODELS.clear();
        ENGINES.clear();
        for (AutoCloseable c : closing) {
            try {
                c.close();
            } catch (Exception | Error e) {
                System.err.println("attn: closing a model failed: " + e);
            }
        }
    }

    private static AutoCloseable model(EngineSettings es, Object settings, Function<Engine, AutoCloseable> load) {
        DeviceChoice choice = DeviceChoice.choose(es.device(), taskGpus());
        EngineKey ek = new EngineKey(choice.device(), choice.ordinal(), choice.cpuIfUnusable(), threads(es.threads()));
        return MODELS.computeIfAbsent(new ModelKey(ek, settings), k -> new Once<>())
                .get(() -> {
                    Engine engine =
                            ENGINES.computeIfAbsent(ek, k -> new Once<>()).get(() -> open(ek, choice.note()));
                    long t0 = System.nanoTime();
                    AutoCloseable m = load.apply(engine);
                    int n = LOADS.incrementAndGet();
                    LOG.info(
                            "attn: loaded {} on {} in {} ms (load {} in this JVM)",
                            settings,
                            ModelLocation.node(),
                            (System.nanoTime() - t0) / 1_000_000,
                            n);
                    return m;
                });
    }

    /** The GPU addresses Spark assigned to the calling task (none outside a task or without GPU scheduling). */
    private static List<String> taskGpus() {
        TaskContext tc = TaskContext.get();
        if (tc == null) return List.of();
        ResourceInformation r = tc.resourcesJMap().get(DeviceChoice.GPU);
        return r == null ? List.of() : List.of(r.addresses());
    }

    private static Engine open(EngineKey k, String note) {
        EngineOptions o = EngineOptions.defaults().withDevice(k.device()).withThreads(k.threads());
        if (k.ordinal() >= 0) o = o.withExtra(Map.of("cuda.device", Integer.toString(k.ordinal())));
        Engine e;
        try {
            e = Engine.open(o);
        } catch (AttnException x) {
            if (!k.cpuIfUnusable() || x.code() != AttnException.Code.DEVICE_UNAVAILABLE) throw x;
            note = "Spark assigned GPU " + k.ordinal() + " to the task but CUDA cannot use it: " + x.getMessage();
            e = Engine.open(o.withDevice("cpu"));
        }
        String line = "attn on " + ModelLocation.node() + ": " + e.description() + (note == null ? "" : "; " + note);
        DEVICES.add(line);
        if (e.device().equals("cpu") && !k.device().equals("cpu")) LOG.warn("{} (running on the CPU)", line);
        else LOG.info(line);
        return e;
    }

    /** The engine's CPU threads: as asked, else {@code spark.executor.cores}, else every processor of the node. */
    static int threads(int requested) {
        if (requested > 0) return requested;
        SparkEnv env = SparkEnv.get();
        int cores = env == null ? 0 : env.conf().getInt("spark.executor.cores", 0);
        return cores > 0 ? cores : Runtime.getRuntime().availableProcessors();
    }

    /** A value made once, by the first caller while later callers wait; a failure is not kept. Thread-safe. */
    private static final class Once<T> {
        private T value;

        synchronized T get(Supplier<T> make) {
            if (value == null) value = make.get();
            return value;
        }

        synchronized void ifMade(Consumer<? super T> action) {
            if (value != null) action.accept(value);
        }
    }
}
