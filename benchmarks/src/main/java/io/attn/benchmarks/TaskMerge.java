package io.attn.benchmarks;

import io.attn.engine.TaskAdapters;
import io.attn.tensor.Tensor;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * What merging a task LoRA adapter costs when a model loads ({@link TaskAdapters#apply}): jina-embeddings-v3's whole
 * parametrized checkpoint at its real shapes (24 layers, 1024 wide, 4096 feed-forward, 250002-row vocabulary; five
 * tasks of rank 4; random float32 values, as the checkpoint's bfloat16 ones are once read), merged {@code reps} times in
 * place (each merge the same work). Prints the seconds of each merge and the weights' size; the CPU and its load are the
 * caller's to record.
 *
 * <p>args: [reps] [layers] (default 3, 24). Needs about 3 GB of heap ({@code -Xmx4g}).
 */
public final class TaskMerge {
    private TaskMerge() {}

    public static void main(String[] args) {
        int reps = args.length > 0 ? Integer.parseInt(args[0]) : 3;
        int layers = args.length > 1 ? Integer.parseInt(args[1]) : 24;
        int e = 1024, f = 4096, vocab = 250002, tasks = 5, r = 4;
        SplittableRandom rnd = new SplittableRandom(7);
        Map<String, Tensor> w = new LinkedHashMap<>();
        long params = 0;
        params += parametrized(w, rnd, "roberta.embeddings.word_embeddings", vocab, e, tasks, r, true);
        params += parametrized(w, rnd, "roberta.embeddings.token_type_embeddings", 1, e, tasks, r, true);
        for (int i = 0; i < layers; i++) {
            String p = "roberta.encoder.layers." + i + ".";
            params += parametrized(w, rnd, p + "mixer.Wqkv", 3 * e, e, tasks, r, false);
            params += parametrized(w, rnd, p + "mixer.out_proj", e, e, tasks, r, false);
            params += parametrized(w, rnd, p + "mlp.fc1", f, e, tasks, r, false);
            params += parametrized(w, rnd, p + "mlp.fc2", e, f, tasks, r, false);
        }
        Map<String, Object> config = Map.of(
                "lora_adaptations",
                List.of("retrieval.query", "retrieval.passage", "separation", "classification", "text-matching"),
                "lora_rank",
                r,
                "lora_alpha",
                1);
        System.out.printf(
                Locale.ROOT,
                "task merge: %d layers, %.1f M parametrized weights (%.2f GB float32), %d tasks of rank %d%n",
                layers,
                params / 1e6,
                params * 4 / 1e9,
                tasks,
                r);
        for (int k = 0; k < reps; k++) {
            long t0 = System.nanoTime();
            Map<String, Tensor> out = TaskAdapters.apply(config, w, "retrieval.query", "bench");
            double s = (System.nanoTime() - t0) / 1e9;
            System.out.printf(
                    Locale.ROOT,
                    "merge %d: %.3f s (%.2f G weights/s), %d tensors out%n",
                    k + 1,
                    s,
                    params / s / 1e9,
                    out.size());
        }
    }

    /** X.parametrizations.weight.original (rows, cols) with its adapters; returns the weight's element count. */
    private static long parametrized(
            Map<String, Tensor> w,
            SplittableRandom rnd,
            String name,
            int rows,
            int cols,
            int tasks,
            int r,
            boolean embedding) {
        String stem = name + ".parametrizations.weight";
        w.put(stem + ".original", random(rnd, rows, cols));
        w.put(stem + ".0.lora_A", embedding ? random(rnd, tasks, rows, r) : random(rnd, tasks, r, cols));
        w.put(stem + ".0.lora_B", embedding ? random(rnd, tasks, r, cols) : random(rnd, tasks, rows, r));
        return (long) rows * cols;
    }

    private static Tensor random(SplittableRandom rnd, int... dims) {
        long n = 1;
        for (int d : dims) n *= d;
        float[] a = new float[Math.toIntExact(n)];
        for (int i = 0; i < a.length; i++) a[i] = (float) (rnd.nextDouble() - 0.5);
        return Tensor.of(a, dims);
    }
}
