package io.attn.text;

import static io.attn.text.FamiliesTest.strings;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.engine.TaskAdapters;
import io.attn.tensor.Tensor;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@link TaskAdaptersTest}'s judges and bounds with each task's adapter run beside the saved weights ({@link
 * TaskAdapters.Mode#SHARE}: {@code y = x W^T + (x A^T)(scaling B)^T} per layer, {@code W[ids] + A[ids](scaling B)} per
 * table) instead of merged into them; and the models of several tasks read together hold one copy of the weights.
 */
class SharedTaskAdaptersTest extends TaskAdaptersTest {
    @Override
    TaskAdapters.Mode mode() {
        return TaskAdapters.Mode.SHARE;
    }

    @Test
    void theTasksReadTogetherShareTheWeightsAndKeepTheirOwnAdapters() {
        List<String> tasks = new ArrayList<>(strings(expected().get("tasks")));
        tasks.add(null); // the base weights beside them
        List<TextModel> read = TextModel.read(HUB, null, tasks, TaskAdapters.Mode.SHARE);
        assertEquals(tasks.size(), read.size());
        Map<String, Tensor> first = read.get(0).weights();
        String wqkv = "roberta.encoder.layers.0.mixer.Wqkv";
        String word = "roberta.embeddings.word_embeddings";
        for (int i = 0; i < tasks.size(); i++) {
            TextModel m = read.get(i);
            assertEquals(tasks.get(i), m.task());
            // each task's model runs its task; the base model's lists them, as a model read without a task does
            assertEquals(tasks.get(i) == null ? strings(expected().get("tasks")) : List.of(), m.tasks());
            for (var e : m.weights().entrySet())
                if (!e.getKey().endsWith(".lora_A") && !e.getKey().endsWith(".lora_B"))
                    assertSame(first.get(e.getKey()), e.getValue(), e.getKey() + " is shared");
            boolean adapted = tasks.get(i) != null;
            assertEquals(adapted, m.weights().containsKey(wqkv + ".lora_A"), wqkv + " adapter of " + tasks.get(i));
            assertEquals(adapted, m.weights().containsKey(word + ".lora_B"), word + " adapter of " + tasks.get(i));
        }
        // two tasks' adapters differ; the layer's rank-4 factors are (r, in) and (out, r), the table's (rows, r), (e,
        // r)
        Tensor a0 = read.get(0).weights().get(wqkv + ".lora_B"),
                a1 = read.get(1).weights().get(wqkv + ".lora_B");
        assertNotSame(a0, a1);
        assertTrue(!Arrays.equals(a0.data(), a1.data()), "tasks 0 and 1 have different adapters");
        Tensor w = first.get(wqkv + ".weight"), table = first.get(word + ".weight");
        assertEquals(List.of(4, w.dim(1)), dims(read.get(0).weights().get(wqkv + ".lora_A")));
        assertEquals(List.of(w.dim(0), 4), dims(a0));
        assertEquals(List.of(table.dim(0), 4), dims(read.get(0).weights().get(word + ".lora_A")));
        assertEquals(List.of(table.dim(1), 4), dims(read.get(0).weights().get(word + ".lora_B")));
        // and each runs its own task: the hidden states of every pair of tasks differ
        try (Embedder q = Embedder.load(engine, read.get(0), task(tasks.get(0)).withPrompt(""));
                Embedder p =
                        Embedder.load(engine, read.get(1), task(tasks.get(1)).withPrompt(""))) {
            float[] x = q.embed(List.of("hello"))[0], y = p.embed(List.of("hello"))[0];
            assertTrue(!Arrays.equals(x, y), "two tasks gave the same vector");
            assertTrue(q.description().contains("beside weights shared"), q.description());
        }
    }

    /** {@link Embedder#loadTasks}: the judge's vectors for each task, from one reading of the folder. */
    @Test
    void loadTasksEmbedsEachTaskAsItsJudge() {
        var x = expected();
        List<String> texts = strings(x.get("texts"));
        List<String> tasks = new ArrayList<>();
        for (Object o : (List<?>) x.get("runs"))
            tasks.add((String) FamiliesTest.map(o).get("task"));
        Map<String, Embedder> loaded = Embedder.loadTasks(engine, HUB, tasks, EmbedderOptions.defaults());
        try {
            assertEquals(tasks, new ArrayList<>(loaded.keySet()));
            for (Object o : (List<?>) x.get("runs")) {
                var run = FamiliesTest.map(o);
                Embedder m = loaded.get((String) run.get("task"));
                assertEquals(run.get("task"), m.task());
                FamiliesTest.compare(
                        "loadTasks " + run.get("task"), FamiliesTest.lists(run.get("embeddings")), m.embed(texts));
            }
        } finally {
            for (Embedder m : loaded.values()) m.close();
        }
        bad(
                () -> Embedder.loadTasks(engine, HUB, List.of("separation", "separation"), EmbedderOptions.defaults()),
                "a task is given twice");
    }

    @Test
    void aModelWithItsAdapterBesideTheWeightsIsNotQuantizedOrWritten(@org.junit.jupiter.api.io.TempDir Path tmp) {
        TextModel m = TextModel.read(HUB, null, List.of("separation"), TaskAdapters.Mode.SHARE)
                .get(0);
        bad(
                () -> m.quantized(new io.attn.engine.Quantization.Options(true, false)),
                "read with task \"separation\"'s adapter beside its weights (shared mode) is not quantized");
        bad(() -> m.writeFolderFrom(HUB, tmp.resolve("out"), io.attn.tensor.DType.F32), "is not written as a folder");
        org.junit.jupiter.api.Assertions.assertFalse(java.nio.file.Files.exists(tmp.resolve("out")));
    }

    private static List<Integer> dims(Tensor t) {
        return Arrays.stream(t.shape().dims()).boxed().toList();
    }
}
