package io.attn.engine;

import io.attn.AttnException;
import io.attn.io.JsonFields;
import io.attn.tensor.DType;
import io.attn.tensor.Tensor;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Task LoRA adapters stored inside a checkpoint, as jina-embeddings-v3 stores its five ({@code retrieval.query}, {@code
 * retrieval.passage}, {@code separation}, {@code classification}, {@code text-matching}): every linear layer and
 * embedding table {@code X} is saved by {@code torch.nn.utils.parametrize} as {@code X.parametrizations.weight.original}
 * with {@code X.parametrizations.weight.0.lora_A} and {@code .lora_B} holding one low-rank pair per task, the tasks
 * named in order by {@code config.json}'s {@code lora_adaptations}, with {@code lora_rank} r and {@code lora_alpha}.
 *
 * <p>The model's remote code ({@code LoRAParametrization.lora_forward}) runs task t with the weight {@code W +
 * scaling * delta_t}, {@code scaling = lora_alpha / lora_rank}: for a linear layer ({@code W} (out, in), {@code lora_A}
 * (tasks, r, in), {@code lora_B} (tasks, out, r)) {@code delta_t = lora_B[t] @ lora_A[t]}; for an embedding table
 * ({@code W} (rows, width), {@code lora_A} (tasks, rows, r), {@code lora_B} (tasks, r, width)) {@code delta_t =
 * lora_A[t] @ lora_B[t]}; without a task, {@code W} alone (its adapters off). attn merges the chosen task's adapter
 * into the weights once, when the model loads ({@link #apply}): one task per loaded model, no cost per call. The sum
 * is taken in float32 (the remote code adds in the weights' dtype: bfloat16 for the hub's checkpoint when loaded in
 * bfloat16).
 *
 * <p>Or, for several tasks served from one process, the adapter kept apart ({@link Mode#SHARE}): the original weights
 * untouched, so the models of every task read from the same weights share them (and their packed copies), and each
 * layer runs its task's low-rank product beside the weight, {@code y = x W^T + (x A^T)(scaling B)^T}: rank r extra
 * columns per layer, a small cost per call instead of a copy of the model per task.
 */
public final class TaskAdapters {
    private TaskAdapters() {}

    /** How a task's adapter reaches the model. */
    public enum Mode {
        /** Merged into the weights once, at load: no cost per call, a private copy of the weights per task. */
        MERGE,
        /**
         * Run beside the weights, which stay as saved: the models of several tasks read from the same weights share
         * them; each call pays for the adapter's rank-r products.
         */
        SHARE;

        /** {@code merge} or {@code share}, as the CLI takes it. */
        public static Mode parse(String s) {
            for (Mode m : values()) if (m.name().equalsIgnoreCase(s)) return m;
            throw AttnException.badInput("task adapter mode \"" + s + "\": use merge or share");
        }
    }

    /**
     * The {@code config.json} key that names the task whose adapter is merged into a folder's weights (one written from
     * a merged model, such as {@code attn quantize --task}'s output).
     */
    public static final String TASK_KEY = "attn_task";

    static final String ORIGINAL = ".parametrizations.weight.original";
    static final String A = ".parametrizations.weight.0.lora_A";
    static final String B = ".parametrizations.weight.0.lora_B";

    /** Whether {@code weights} hold a task's adapter beside the weights ({@link Mode#SHARE}'s output). */
    public static boolean separate(Map<String, Tensor> weights) {
        return weights.keySet().stream().anyMatch(k -> k.endsWith(io.attn.nn.Linear.LORA_A));
    }

    /** The tasks of a config's {@code lora_adaptations}, in order; empty when it has none. */
    public static List<String> tasks(Map<String, ?> config, String source) {
        Object l = config.get("lora_adaptations");
        if (l == null) return List.of();
        List<String> out = new ArrayList<>();
        if (l instanceof List<?> list) for (Object o : list) if (o instanceof String s) out.add(s);
        if (!(l instanceof List<?> list) || out.size() != list.size() || out.isEmpty())
            throw AttnException.badInput(source + ": \"lora_adaptations\" must be a list of task names, got " + l);
        return List.copyOf(out);
    }

    /**
     * The weights with task {@code task}'s adapter merged into every parametrized tensor ({@code X.weight = original +
     * scaling * delta}), or the originals alone for {@code task} null; weights without adapters come back as they are.
     * The merged sums are written into the original tensors' arrays, so {@code weights} must be the caller's own (just
     * read from a file).
     *
     * @param source names the weights (their file) in messages
     * @throws AttnException BAD_INPUT for a task the config does not list (the line lists them), a task asked of a model
     *     without adapters, adapters without {@code lora_adaptations}, or a tensor whose shape does not fit (named)
     */
    public static Map<String, Tensor> apply(
            Map<String, ?> config, Map<String, Tensor> weights, String task, String source) {
        return apply(config, weights, task, Mode.MERGE, source);
    }

    /**
     * Like {@link #apply(Map, Map, String, String)} in {@code mode}: {@link Mode#SHARE} leaves every tensor of {@code
     * weights} as it is (the same objects come back under the layers' names) and adds the task's adapter beside each
     * parametrized layer {@code X}: {@code X.lora_A} {@code (r, in)} and {@code X.lora_B} {@code (out, r)} times the
     * scaling for a linear layer; {@code X.lora_A} {@code (rows, r)} and {@code X.lora_B} {@code (width, r)} times the
     * scaling for an embedding table (the names the encoders read beside each layer).
     */
    public static Map<String, Tensor> apply(
            Map<String, ?> config, Map<String, Tensor> weights, String task, Mode mode, String source) {
        boolean parametrized = weights.keySet().stream().anyMatch(k -> k.contains(".parametrizations."));
        List<String> tasks = tasks(config, source);
        if (!parametrized) {
            if (task != null)
                throw AttnException.badInput(source + ": task \"" + task
                        + "\" asked, but the model has no task adapters"
                        + (config.get(TASK_KEY) instanceof String merged
                                ? " (task \"" + merged + "\" is merged into its weights: config.json's attn_task)"
                                : tasks.isEmpty()
                                        ? " (its config.json lists no lora_adaptations)"
                                        : " (its config.json lists " + tasks
                                                + " but the weights hold no LoRA tensors)"));
            return weights;
        }
        if (tasks.isEmpty())
            throw AttnException.badInput(source + ": the weights hold LoRA parametrizations ("
                    + weights.keySet().stream()
                            .filter(k -> k.contains(".parametrizations."))
                            .findFirst()
                            .orElseThrow()
                    + ") but config.json lists no lora_adaptations");
        int t = task == null ? -1 : tasks.indexOf(task);
        if (task != null && t < 0)
            throw AttnException.badInput(
                    source + ": task \"" + task + "\" is not one of the model's lora_adaptations " + tasks);
        JsonFields c = new JsonFields(config, source);
        int rank = c.integer("lora_rank", 4);
        if (rank <= 0) throw AttnException.badInput(source + ": lora_rank must be positive, got " + rank);
        float scaling = (float) (c.number("lora_alpha", 1) / rank);
        Map<String, Tensor> out = new LinkedHashMap<>();
        for (var e : weights.entrySet()) {
            String k = e.getKey();
            if (k.endsWith(A) || k.endsWith(B)) {
                String base = k.substring(0, k.length() - A.length());
                if (!weights.containsKey(base + ORIGINAL))
                    throw AttnException.badInput(source + ": tensor '" + k + "' has no '" + base + ORIGINAL + "'");
                continue;
            }
            if (!k.endsWith(ORIGINAL)) {
                if (k.contains(".parametrizations."))
                    throw AttnException.badInput(source + ": tensor '" + k + "' is a parametrization attn does not"
                            + " know (it reads LoRA's original, lora_A and lora_B)");
                if (out.put(k, e.getValue()) != null)
                    throw AttnException.badInput(source + ": tensor '" + k + "' appears twice");
                continue;
            }
            String base = k.substring(0, k.length() - ORIGINAL.length());
            Tensor w = e.getValue(), a = weights.get(base + A), b = weights.get(base + B);
            if (a == null || b == null)
                throw AttnException.badInput(
                        source + ": tensor '" + k + "' has no '" + base + (a == null ? A : B) + "' beside it");
            if (out.put(base + ".weight", w) != null)
                throw AttnException.badInput(
                        source + ": tensor '" + base + ".weight' appears twice (also as '" + k + "')");
            if (t < 0) continue;
            Tensor[] pair = adapter(base, w, a, b, t, tasks.size(), rank, scaling, mode == Mode.MERGE, source);
            if (pair != null) {
                out.put(base + io.attn.nn.Linear.LORA_A, pair[0]);
                out.put(base + io.attn.nn.Linear.LORA_B, pair[1]);
            }
        }
        return out;
    }

    /**
     * {@code w += scaling * delta_t} in place when {@code merge} (see the class comment for the two layouts), and null;
     * else task t's factors as the encoders run them beside {@code w} (see {@link #apply(Map, Map, String, Mode,
     * String)}), {@code w} untouched.
     */
    private static Tensor[] adapter(
            String name,
            Tensor w,
            Tensor a,
            Tensor b,
            int t,
            int tasks,
            int r,
            float scaling,
            boolean merge,
            String source) {
        for (Tensor x : new Tensor[] {w, a, b})
            if (x.dtype() != DType.F32)
                throw AttnException.badInput(source + ": '" + name + "': LoRA adapters over " + x.dtype()
                        + " weights are not supported (attn merges them into float weights)");
        if (w.rank() != 2 || a.rank() != 3 || b.rank() != 3) throw shape(name, w, a, b, tasks, r, source);
        int rows = w.dim(0), cols = w.dim(1);
        // an embedding table (rows = vocabulary) stores A (tasks, rows, r) and B (tasks, r, cols); a linear layer
        // (rows = out) stores A (tasks, r, cols) and B (tasks, rows, r): the shapes say which, and where both fit (a
        // square weight of side r) the name does, as in the remote code
        boolean asEmbedding = a.dim(1) == rows && a.dim(2) == r && b.dim(1) == r && b.dim(2) == cols;
        boolean asLinear = a.dim(1) == r && a.dim(2) == cols && b.dim(1) == rows && b.dim(2) == r;
        boolean embedding =
                asEmbedding && asLinear ? name.endsWith("embeddings") || name.contains("embeddings.") : asEmbedding;
        int[] wantA = embedding ? new int[] {tasks, rows, r} : new int[] {tasks, r, cols};
        int[] wantB = embedding ? new int[] {tasks, r, cols} : new int[] {tasks, rows, r};
        for (int i = 0; i < 3; i++)
            if (a.dim(i) != wantA[i] || b.dim(i) != wantB[i]) throw shape(name, w, a, b, tasks, r, source);
        float[] wd = w.data(), ad = a.data(), bd = b.data();
        if (!merge) {
            // a linear layer: A[t] (r, cols) as it is, B[t] (rows, r) scaled; a table: A[t] (rows, r) as it is (looked
            // up by id), B[t] (r, cols) transposed to (cols, r) and scaled
            int aSize = a.size() / tasks, bSize = b.size() / tasks;
            Tensor at = Tensor.of(
                    java.util.Arrays.copyOfRange(ad, t * aSize, (t + 1) * aSize),
                    embedding ? rows : r,
                    embedding ? r : cols);
            float[] bt = new float[bSize];
            for (int i = 0; i < bSize; i++) {
                int from = embedding ? (i % r) * cols + i / r : i; // out (cols, r)[j][k] = B[t][k][j]
                bt[i] = bd[t * bSize + from] * scaling;
            }
            return new Tensor[] {at, Tensor.of(bt, embedding ? cols : rows, r)};
        }
        float[] left = new float[r]; // row i of the (rows, r) factor
        for (int i = 0; i < rows; i++) {
            for (int k = 0; k < r; k++) left[k] = embedding ? ad[(t * rows + i) * r + k] : bd[(t * rows + i) * r + k];
            float[] right = embedding ? bd : ad; // (tasks, r, cols)
            int off = t * r * cols;
            for (int j = 0; j < cols; j++) {
                float s = 0;
                for (int k = 0; k < r; k++) s += left[k] * right[off + k * cols + j];
                wd[i * cols + j] += s * scaling;
            }
        }
        return null;
    }

    private static AttnException shape(String name, Tensor w, Tensor a, Tensor b, int tasks, int r, String source) {
        return AttnException.badInput(source + ": '" + name + "': LoRA shapes " + a.shape() + " (lora_A) and "
                + b.shape() + " (lora_B) do not fit the weight " + w.shape() + " with " + tasks + " tasks of rank "
                + r);
    }
}
