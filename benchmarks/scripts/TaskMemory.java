import io.attn.engine.Engine;
import io.attn.engine.EngineOptions;
import io.attn.engine.TaskAdapters;
import io.attn.text.Embedder;
import io.attn.text.EmbedderOptions;
import io.attn.text.TextModel;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The Java heap that serving several tasks of one task LoRA folder (jina-embeddings-v3's hub layout) holds, with the
 * adapters merged (a copy of the weights per task) or beside shared weights ({@link TaskAdapters.Mode#SHARE}, as
 * {@code attn serve} reads one folder for several tasks): the first {@code tasks} of the model's tasks read in {@code
 * mode}, each loaded on the CPU backend and run once on one text (so that the backend packs its weights, as a served
 * model's warm-up does), then the heap in use after a full collection, and the load time. The CPU and load are the
 * caller's to record.
 *
 * <p>A single-file program on the CLI's classpath (the text module is not one of the benchmarks jar's):
 *
 * <pre>
 * $JAVA_HOME/bin/java --add-modules jdk.incubator.vector -XX:+UseSerialGC -Xmx18g -cp 'cli/target/lib/*' \
 *     benchmarks/scripts/TaskMemory.java DIR merge|share TASKS
 * </pre>
 *
 * <p>The serial collector, not the launcher's parallel one: its full collection slides every live object together, so
 * the heap in use after it is the live set (the parallel collector leaves dead space among large live arrays: 5.08 GB
 * "used" where its class histogram counted 3.45 GB of live float arrays, one jina-embeddings-v3 model).
 */
public final class TaskMemory {
    private TaskMemory() {}

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        TaskAdapters.Mode mode = TaskAdapters.Mode.parse(args[1]);
        int n = Integer.parseInt(args[2]);
        long before = heapAfterGc();
        long t0 = System.nanoTime();
        List<String> tasks = TextModel.read(dir).tasks().subList(0, n);
        List<TextModel> read = TextModel.read(dir, null, tasks, mode);
        List<Embedder> loaded = new ArrayList<>();
        try (Engine engine = Engine.open(EngineOptions.defaults().withDevice("cpu"))) {
            for (int i = 0; i < n; i++) {
                Embedder m = Embedder.load(
                        engine,
                        read.get(i),
                        EmbedderOptions.defaults().withTask(tasks.get(i)).withTaskAdapters(mode));
                m.embed(List.of("How much memory does a task take?"));
                loaded.add(m);
            }
            read = null; // what stays is what the loaded models hold
            double s = (System.nanoTime() - t0) / 1e9;
            long used = heapAfterGc() - before;
            System.out.printf(
                    Locale.ROOT,
                    "{\"bench\":\"task-memory\",\"mode\":\"%s\",\"tasks\":%d,\"heap_gb\":%.3f,\"per_task_gb\":%.3f,"
                            + "\"load_s\":%.1f}%n",
                    mode.name().toLowerCase(Locale.ROOT),
                    n,
                    used / 1e9,
                    used / 1e9 / n,
                    s);
            for (Embedder m : loaded) m.close();
        }
    }

    private static long heapAfterGc() throws InterruptedException {
        var mx = ManagementFactory.getMemoryMXBean();
        for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.sleep(200);
        }
        return mx.getHeapMemoryUsage().getUsed();
    }
}
