import io.attn.engine.Engine;
import io.attn.engine.EngineOptions;
import io.attn.text.Embedder;
import io.attn.text.EmbedderOptions;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.function.ToLongFunction;

/**
 * One build's side of {@code EmbedAB}: loaded by that build's class loader, it opens a CPU engine and the model once;
 * {@code applyAsLong(reps)} embeds the texts {@code reps} times (all in one call, or {@code batch} texts per call) and
 * returns the nanoseconds. Compiled against any build's jars: it uses only the public API.
 */
public final class EmbedDriver implements ToLongFunction<Integer> {
    private final Embedder model;
    private final List<String> texts;
    private final int batch;

    public EmbedDriver(String model, String input, Integer threads, Integer batch) throws Exception {
        texts = Files.readAllLines(Path.of(input)).stream().filter(s -> !s.isEmpty()).toList();
        this.batch = batch;
        Engine engine = Engine.open(EngineOptions.defaults().withDevice("cpu").withThreads(threads));
        // EmbedAB's LIB#OPTIONS: task=T (a task LoRA model's adapter), adapters=merge|share (how it reaches the model)
        EmbedderOptions o = EmbedderOptions.defaults();
        for (String kv : System.getProperty("ab.options", "").split(",")) {
            if (kv.startsWith("task=")) o = o.withTask(kv.substring(5));
            else if (kv.startsWith("adapters="))
                o = o.withTaskAdapters(io.attn.engine.TaskAdapters.Mode.parse(kv.substring(9)));
            else if (!kv.isEmpty()) throw new IllegalArgumentException("ab option " + kv);
        }
        this.model = Embedder.load(engine, Path.of(model), o);
    }

    @Override
    public long applyAsLong(Integer reps) {
        long s = System.nanoTime();
        for (int i = 0; i < reps; i++) {
            if (batch <= 0) model.embed(texts);
            else
                for (int j = 0; j < texts.size(); j += batch)
                    model.embed(texts.subList(j, Math.min(texts.size(), j + batch)));
        }
        return System.nanoTime() - s;
    }
}
