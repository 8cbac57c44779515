package io.attn.text;

import io.attn.AttnException;
import io.attn.engine.AttnModel;
import io.attn.engine.Engine;
import io.attn.engine.Gate;
import io.attn.engine.Request;
import io.attn.engine.TaskAdapters;
import io.attn.tensor.Tensor;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A sentence-embedding model on an {@link Engine}: text in, one vector per text out, as sentence-transformers computes
 * it (put the prompt before the text, tokenize, run the encoder, pool over the non-padding tokens (without the prompt's
 * when the model says so), apply the model's {@link Dense} modules, L2-normalize when the model says so).
 *
 * <pre>{@code
 * try (Engine engine = Engine.open(EngineOptions.defaults());
 *         Embedder model = Embedder.load(engine, Path.of("all-MiniLM-L6-v2"))) {
 *     float[][] v = model.embed(List.of("first text", "second text"));
 * }
 * }</pre>
 *
 * <p>Batching: the texts of one call are tokenized and run in batches of at most {@link EmbedderOptions#maxBatchSize}
 * texts and {@link EmbedderOptions#maxBatchTokens} tokens. On a device that runs ragged batches (the CPU) a batch is its
 * texts' tokens one after another, without padding, each text attending to itself; elsewhere the texts are sorted by
 * length and batched with similar lengths, padded to the batch's longest with the padding masked out of the attention.
 * Either way a text's vector is bitwise what it is alone, and results come back in input order.
 * Working memory is bounded by the batch limits whatever the number of texts (the vectors returned are the caller's).
 * An empty text embeds {@code [CLS] [SEP]}, as Hugging Face does.
 *
 * <p>Thread-safe: load once, call from many threads. {@link #close} waits for calls in flight, releases the model and
 * the tokenizer; it is idempotent; any call after it throws {@link IllegalStateException}. Failures are {@link
 * AttnException}s (BAD_INPUT for a bad text or model file).
 */
public final class Embedder implements AutoCloseable {
    private final Gate gate = new Gate("embedder");
    private final String name;
    private final AttnModel model;
    private final TextTokenizer tokenizer;
    private final int width, dimension; // the encoder's hidden size; the sentence vectors' (after the Dense modules)
    private final Pooling pooling;
    private final List<Dense> dense;
    private final boolean normalize;
    private final int maxBatchSize, maxBatchTokens, maxPositions;
    private final boolean ragged;
    private final TextModel.Prompts prompts;
    private final String task; // the task adapter merged into the weights (TextModel#task), or null
    private final List<String> tasks; // the task adapters the model holds unmerged (TextModel#tasks), or empty
    private final boolean sharedAdapter; // the task's adapter runs beside shared weights (TaskAdapters.Mode.SHARE)
    private final Prompt defaultPrompt;
    private final java.util.concurrent.ConcurrentHashMap<String, Prompt> promptCache =
            new java.util.concurrent.ConcurrentHashMap<>();

    /** A prompt's text and the tokens the pooling leaves out for it (0 when the model pools its prompt too). */
    private record Prompt(String text, int skip) {}

    private Embedder(
            String name,
            AttnModel model,
            TextTokenizer tokenizer,
            Pooling pooling,
            List<Dense> dense,
            boolean normalize,
            EmbedderOptions o,
            int maxPositions,
            TextModel.Prompts prompts,
            String task,
            List<String> tasks,
            boolean sharedAdapter) {
        this.maxPositions = maxPositions;
        this.sharedAdapter = sharedAdapter;
        this.prompts = prompts;
        this.task = task;
        this.tasks = List.copyOf(tasks);
        this.ragged = model.supportsRaggedBatches();
        this.name = name;
        this.model = model;
        this.tokenizer = tokenizer;
        this.width = model.width();
        this.dense = List.copyOf(dense);
        this.dimension = dense.isEmpty() ? width : dense.get(dense.size() - 1).out();
        this.pooling = pooling;
        this.normalize = normalize;
        this.maxBatchSize = o.maxBatchSize();
        this.maxBatchTokens = o.batchTokensFor(tokenizer.maxLength());
        this.defaultPrompt = o.prompt() != null
                ? prompt(o.prompt())
                : prompt(o.promptName() != null ? prompts.get(o.promptName()) : prompts.defaultPrompt());
    }

    /** Loads a Hugging Face model folder or a BERT-family {@code .onnx} export (see {@link TextModel}). */
    public static Embedder load(Engine engine, Path model) {
        return load(engine, model, EmbedderOptions.defaults());
    }

    /** Loads a model folder or {@code .onnx} file with options. */
    public static Embedder load(Engine engine, Path model, EmbedderOptions options) {
        if (options == null) options = EmbedderOptions.defaults();
        return load(
                engine, TextModel.read(model, options.tokenizer(), options.task(), options.taskAdapters()), options);
    }

    /**
     * Embedders for several tasks of one task LoRA folder (jina-embeddings-v3's), by task in the order given (a null
     * task: the base weights), read once: their weights shared and each task's adapter run beside them ({@link
     * TaskAdapters.Mode#SHARE}), unless {@code options} ask for merged copies ({@code withTaskAdapters(MERGE)}). Each
     * embedder takes its task's prompt as {@link #load(Engine, Path, EmbedderOptions)} does; close each.
     *
     * @throws AttnException BAD_INPUT for a task the model does not have, or a task given twice
     */
    public static java.util.Map<String, Embedder> loadTasks(
            Engine engine, Path model, List<String> tasks, EmbedderOptions options) {
        if (options == null) options = EmbedderOptions.defaults();
        if (tasks == null || tasks.isEmpty()) throw AttnException.badInput(model + ": no task to load");
        if (new java.util.HashSet<>(tasks).size() != tasks.size())
            throw AttnException.badInput(model + ": a task is given twice in " + tasks);
        TaskAdapters.Mode mode =
                options.taskAdapters() == TaskAdapters.Mode.MERGE ? TaskAdapters.Mode.MERGE : TaskAdapters.Mode.SHARE;
        List<TextModel> read = TextModel.read(model, options.tokenizer(), tasks, mode);
        java.util.Map<String, Embedder> out = new java.util.LinkedHashMap<>();
        try {
            for (int i = 0; i < tasks.size(); i++)
                out.put(tasks.get(i), load(engine, read.get(i), options.withTask(tasks.get(i))));
        } catch (RuntimeException | Error e) {
            for (Embedder m : out.values()) m.close();
            throw e;
        }
        return java.util.Collections.unmodifiableMap(out);
    }

    /**
     * Loads a model already read from disk onto {@code engine}. The engine takes the model's weight arrays as they are
     * ({@link Engine#loadOwned}: no copy, so loading holds the weights once): do not change {@code m.weights()}
     * afterwards.
     */
    public static Embedder load(Engine engine, TextModel m, EmbedderOptions o) {
        if (engine == null || m == null) throw AttnException.badInput("engine and model are required");
        if (o == null) o = EmbedderOptions.defaults();
        o = withTask(m, o);
        if (m.isClassifier())
            throw AttnException.badInput(
                    m.source() + ": a sequence classifier (" + m.labels().size()
                            + " label" + (m.labels().size() == 1 ? "" : "s")
                            + ", a *ForSequenceClassification model), not an embedding model: score pairs with a Reranker,"
                            + " texts with a Classifier");
        int maxLength = o.maxLength() > 0 ? o.maxLength() : m.maxLength();
        if (maxLength > m.maxPositions())
            throw AttnException.badInput("max length " + maxLength + " is more than the model's " + m.maxPositions()
                    + " positions (max_position_embeddings)");
        if (maxLength < 2) throw AttnException.badInput("max length " + maxLength + " leaves no room for a text");
        o.batchTokensFor(maxLength); // a budget below the max length is refused here, before the weights load
        TextTokenizer t = TextTokenizer.load(m.tokenizer(), maxLength);
        try {
            AttnModel am = engine.loadOwned(m.config(), m.weights(), m.source());
            return new Embedder(
                    m.name(),
                    am,
                    t,
                    o.pooling() != null ? o.pooling() : m.pooling(),
                    m.dense(),
                    o.normalize() != null ? o.normalize() : m.normalize(),
                    o,
                    m.maxPositions(),
                    m.prompts(),
                    m.task(),
                    m.tasks(),
                    TaskAdapters.separate(m.weights()));
        } catch (RuntimeException | Error e) {
            t.close();
            throw e;
        }
    }

    /**
     * The options for model {@code m} read with its task adapter: the task's prompt by default (the model's prompt of
     * the task's name, when it has one and the options name no prompt), as Jina's API applies a task's instruction
     * with its adapter. A task in the options that {@code m} was not read with is refused.
     */
    static EmbedderOptions withTask(TextModel m, EmbedderOptions o) {
        if (o.task() != null && !o.task().equals(m.task()))
            throw AttnException.badInput(m.source() + ": task \"" + o.task() + "\" asked, but the model was read "
                    + (m.task() == null ? "without a task" : "with task \"" + m.task() + "\"")
                    + " (TextModel.read(model, tokenizer, task) merges its adapter)");
        if (m.task() != null
                && o.prompt() == null
                && o.promptName() == null
                && m.prompts().byName().containsKey(m.task())) return o.withPromptName(m.task());
        return o;
    }

    /** The task adapter merged into the model's weights ({@link EmbedderOptions#task}), or null for none. */
    public String task() {
        return task;
    }

    /** The model's name (its folder's). */
    public String name() {
        return name;
    }

    /** The length of the sentence vectors: the model's hidden size, or its last Dense module's out_features. */
    public int dimension() {
        return dimension;
    }

    /** Texts longer than this many tokens (special tokens included) are cut. */
    public int maxLength() {
        return tokenizer.maxLength();
    }

    public Pooling pooling() {
        return pooling;
    }

    public boolean normalize() {
        return normalize;
    }

    /** One text's vector. */
    public float[] embed(String text) {
        return embed(List.of(text))[0];
    }

    /** One vector per text, in input order, each text after the default prompt (if any). */
    public float[][] embed(List<String> texts) {
        return embedWithUsage(texts).vectors();
    }

    /**
     * One vector per text after the model's prompt {@code promptName} (null: the default prompt), as
     * sentence-transformers' {@code encode(texts, prompt_name=...)}.
     *
     * @throws AttnException BAD_INPUT for a name the model's {@code config_sentence_transformers.json} does not have
     */
    public float[][] embed(List<String> texts, String promptName) {
        return embed(tokenize(texts, promptName)).vectors();
    }

    /** The vectors with each text's token count and whether it was cut. */
    public Embeddings embedWithUsage(List<String> texts) {
        gate.enter();
        try {
            return embed(tokens(texts, defaultPrompt));
        } finally {
            gate.exit();
        }
    }

    /** The model's prompts by name (sentence-transformers' {@code prompts}), and the default one's name. */
    public TextModel.Prompts prompts() {
        return prompts;
    }

    /** The prompt put before every text by default ("" for none). */
    public String defaultPrompt() {
        return defaultPrompt.text();
    }

    /**
     * Tokenizes texts for {@link #embed(TokenizedTexts)}: the token counts are then known (to check limits) before
     * anything runs, and several callers' texts can be embedded in one call ({@link TokenizedTexts#concat}).
     */
    public TokenizedTexts tokenize(List<String> texts) {
        return tokenize(texts, null);
    }

    /**
     * {@link #tokenize(List, String)}, cutting texts over the maximum length on the left when {@code left} (their
     * first tokens dropped, the special tokens kept; transformers' {@code truncation_side="left"}). Left truncation
     * takes no prompt (it would cut the prompt first).
     */
    public TokenizedTexts tokenize(List<String> texts, String promptName, boolean left) {
        if (!left) return tokenize(texts, promptName);
        gate.enter();
        try {
            Prompt p = promptName == null ? defaultPrompt : prompt(prompts.get(promptName));
            if (!p.text().isEmpty())
                throw AttnException.badInput("left truncation takes no prompt (it would cut the prompt first)");
            tokens(texts, p); // checks the texts
            return new TokenizedTexts(
                    texts.isEmpty() ? new TextTokenizer.Tokens[0] : tokenizer.encodeLeft(texts), tokenizer);
        } finally {
            gate.exit();
        }
    }

    /** {@link #tokenize(List)} after the model's prompt {@code promptName} (null: the default prompt). */
    public TokenizedTexts tokenize(List<String> texts, String promptName) {
        gate.enter();
        try {
            Prompt p = promptName == null ? defaultPrompt : prompt(prompts.get(promptName));
            return new TokenizedTexts(tokens(texts, p), tokenizer);
        } finally {
            gate.exit();
        }
    }

    /** A prompt text with the tokens its pooling leaves out (counted once per text). */
    private Prompt prompt(String text) {
        if (text.isEmpty() || prompts.includePrompt()) return new Prompt(text, 0);
        return promptCache.computeIfAbsent(text, t -> new Prompt(t, tokenizer.promptLength(t)));
    }

    /**
     * The vectors of texts tokenized by this embedder ({@link #tokenize}); each text's vector is bitwise what it is
     * embedded alone.
     */
    public Embeddings embed(TokenizedTexts texts) {
        if (texts == null) throw AttnException.badInput("texts is null");
        if (texts.owner != tokenizer)
            throw AttnException.badInput("these texts were tokenized by another embedder (another vocabulary)");
        gate.enter();
        try {
            return embed(texts.tokens);
        } finally {
            gate.exit();
        }
    }

    private Embeddings embed(TextTokenizer.Tokens[] toks) {
        float[][] out = new float[toks.length][];
        forEachBatch(toks, (index, hidden, len, offset) -> out[index] = pool(hidden, offset, len, toks[index].skip()));
        int[] counts = new int[toks.length];
        boolean[] cut = new boolean[toks.length];
        for (int i = 0; i < toks.length; i++) {
            counts[i] = toks[i].ids().length;
            cut[i] = toks[i].truncated();
        }
        return new Embeddings(out, counts, cut);
    }

    /** Token-level output: each text's token ids and last hidden state {@code (L, E)}, in input order. */
    public List<TokenEmbeddings> embedTokens(List<String> texts) {
        gate.enter();
        try {
            TextTokenizer.Tokens[] toks = tokens(texts, defaultPrompt);
            TokenEmbeddings[] out = new TokenEmbeddings[toks.length];
            forEachBatch(
                    toks,
                    (index, hidden, len, offset) -> out[index] = new TokenEmbeddings(
                            toks[index].ids(),
                            Tensor.of(Arrays.copyOfRange(hidden, offset, offset + len * width), len, width)));
            return Arrays.asList(out);
        } finally {
            gate.exit();
        }
    }

    /** The number of token ids of each text (special tokens included, after truncation). */
    public int[] countTokens(List<String> texts) {
        gate.enter();
        try {
            TextTokenizer.Tokens[] toks = tokens(texts, defaultPrompt);
            int[] n = new int[toks.length];
            for (int i = 0; i < n.length; i++) n[i] = toks[i].ids().length;
            return n;
        } finally {
            gate.exit();
        }
    }

    /** Whether batches run ragged (the sequences one after another) rather than padded, on this model's device. */
    boolean ragged() {
        return ragged;
    }

    /** One line: the model, its width, pooling, normalization, maximum length, prompt and task adapter. */
    public String description() {
        StringBuilder dn = new StringBuilder();
        for (Dense d : dense) dn.append(", dense ").append(d.describe());
        return name + ": " + dimension + " dimensions, " + pooling.label() + " pooling" + dn
                + (normalize ? ", normalized" : "") + ", max " + maxLength() + " tokens"
                + (defaultPrompt.text().isEmpty()
                        ? ""
                        : ", prompt \"" + defaultPrompt.text() + "\""
                                + (defaultPrompt.skip() > 0 ? " (left out of the pooling)" : ""))
                + (task != null
                        ? ", task " + task
                                + (sharedAdapter ? " (its adapter beside weights shared by the model's tasks)" : "")
                        : tasks.isEmpty() ? "" : ", no task adapter merged (the base weights; tasks " + tasks + ")");
    }

    /** Each text's tokens (strings, special flags, character spans), not truncated; for tools such as TEI's /tokenize. */
    public List<List<Token>> tokenDetails(List<String> texts, boolean addSpecial) {
        return tokenizer.details(gate, texts, addSpecial);
    }

    /** The text of token ids (special tokens left out when {@code skipSpecial}), as transformers' decode. */
    public String decode(int[] ids, boolean skipSpecial) {
        return tokenizer.decode(gate, ids, skipSpecial);
    }

    public boolean isClosed() {
        return gate.isClosed();
    }

    /** Waits for calls in flight, then releases the model and the tokenizer. Idempotent. */
    @Override
    public void close() {
        gate.close(() -> {
            try {
                model.close();
            } finally {
                tokenizer.close();
            }
        });
    }

    // ------------------------------------------------------------------------------------------------ internals

    /** The texts' tokens, each after {@code prompt} (its leading tokens marked for the pooling to leave out). */
    private TextTokenizer.Tokens[] tokens(List<String> texts, Prompt prompt) {
        if (texts == null) throw AttnException.badInput("texts is null");
        for (int i = 0; i < texts.size(); i++) {
            String t = texts.get(i);
            if (t == null) throw AttnException.badInput("text " + i + " is null");
            for (int j = 0; j < t.length(); j++) {
                char c = t.charAt(j);
                if (Character.isSurrogate(c)) {
                    if (Character.isHighSurrogate(c) && j + 1 < t.length() && Character.isLowSurrogate(t.charAt(j + 1)))
                        j++;
                    else
                        throw AttnException.badInput(
                                "text " + i + " holds an unpaired surrogate at char " + j + " (not valid Unicode)");
                }
            }
        }
        if (texts.isEmpty()) return new TextTokenizer.Tokens[0];
        if (prompt.text().isEmpty()) return tokenizer.encode(texts);
        TextTokenizer.Tokens[] toks =
                tokenizer.encode(texts.stream().map(t -> prompt.text() + t).toList());
        if (prompt.skip() == 0) return toks;
        for (int i = 0; i < toks.length; i++)
            toks[i] = new TextTokenizer.Tokens(toks[i].ids(), toks[i].truncated(), prompt.skip());
        return toks;
    }

    /** Receives one text's rows of a batch's last hidden state: {@code len} rows of E floats from {@code offset}. */
    private interface RowSink {
        void accept(int index, float[] hidden, int len, int offset);
    }

    /**
     * Fixed cost of one forward pass, in tokens: what a batch costs beyond its tokens (reading every weight once, the
     * per-op hand-offs). It makes the planner prefer fewer, fuller batches when the padding they add is small.
     */
    static final int BATCH_OVERHEAD_TOKENS = 16;

    /**
     * The batches of a call: the texts' indices sorted by token count, and batches {@code {start, end, length}} over
     * that order, each padded to its longest text. The split points minimize the padded tokens plus {@link
     * #BATCH_OVERHEAD_TOKENS} per batch (dynamic programming over the sorted lengths), within {@link #maxBatchSize}
     * texts and {@link #maxBatchTokens} padded tokens per batch.
     */
    record Plan(Integer[] order, List<int[]> batches) {}

    static Plan plan(TextTokenizer.Tokens[] toks, int maxBatchSize, int maxBatchTokens) {
        int n = toks.length;
        Integer[] order = new Integer[n];
        for (int i = 0; i < n; i++) order[i] = i;
        Arrays.sort(order, (a, b) -> Integer.compare(toks[a].ids().length, toks[b].ids().length));
        int[] len = new int[n];
        for (int i = 0; i < n; i++) len[i] = toks[order[i]].ids().length;
        long[] best = new long[n + 1]; // best[i]: cost of the first i texts
        int[] from = new int[n + 1];
        for (int i = 1; i <= n; i++) {
            best[i] = Long.MAX_VALUE;
            int longest = len[i - 1]; // sorted: the batch (j, i] is padded to the i-th length
            for (int j = i - 1; j >= 0 && i - j <= maxBatchSize; j--) {
                if (j < i - 1 && (long) (i - j) * longest > maxBatchTokens) break;
                long c = best[j] + (long) (i - j) * longest + BATCH_OVERHEAD_TOKENS;
                if (c < best[i]) {
                    best[i] = c;
                    from[i] = j;
                }
            }
        }
        List<int[]> batches = new ArrayList<>();
        for (int i = n; i > 0; i = from[i]) batches.add(0, new int[] {from[i], i, len[i - 1]});
        return new Plan(order, batches);
    }

    /**
     * A ragged plan: the texts in input order, cut into batches of at most {@link #maxBatchSize} texts and {@link
     * #maxBatchTokens} tokens (no padding to count).
     */
    static Plan raggedPlan(TextTokenizer.Tokens[] toks, int maxBatchSize, int maxBatchTokens) {
        int n = toks.length;
        Integer[] order = new Integer[n];
        for (int i = 0; i < n; i++) order[i] = i;
        List<int[]> batches = new ArrayList<>();
        for (int start = 0; start < n; ) {
            int end = start + 1;
            long tokens = toks[start].ids().length;
            while (end < n && end - start < maxBatchSize && tokens + toks[end].ids().length <= maxBatchTokens)
                tokens += toks[end++].ids().length;
            batches.add(new int[] {start, end, 0});
            start = end;
        }
        return new Plan(order, batches);
    }

    private void forEachBatch(TextTokenizer.Tokens[] toks, RowSink sink) {
        if (ragged) {
            for (int[] b : raggedPlan(toks, maxBatchSize, maxBatchTokens).batches()) runRagged(toks, b[0], b[1], sink);
            return;
        }
        Plan p = plan(toks, maxBatchSize, maxBatchTokens);
        for (int[] b : p.batches()) runBatch(toks, p.order(), b[0], b[1], b[2], sink);
    }

    /**
     * Texts {@code [start, end)} as one ragged batch: their tokens one after another, no padding, each text attending
     * to itself. A batch shorter than {@link #MIN_BATCH_ROWS} tokens gets a dummy sequence of padding ids after it.
     */
    private void runRagged(TextTokenizer.Tokens[] toks, int start, int end, RowSink sink) {
        int total = 0;
        for (int i = start; i < end; i++) total += toks[i].ids().length;
        int extra = Math.max(0, MIN_BATCH_ROWS - total);
        int[] lengths = new int[end - start + (extra > 0 ? 1 : 0)];
        float[] ids = new float[total + extra];
        for (int i = start, at = 0; i < end; i++) {
            int[] t = toks[i].ids();
            for (int j = 0; j < t.length; j++) ids[at + j] = t[j];
            lengths[i - start] = t.length;
            at += t.length;
        }
        if (extra > 0) lengths[lengths.length - 1] = extra;
        float[] hidden = model.run(Request.of(Tensor.of(ids, 1, ids.length)).withSequenceLengths(lengths))
                .output()
                .data();
        for (int i = start, at = 0; i < end; i++) {
            sink.accept(i, hidden, toks[i].ids().length, at * width);
            at += toks[i].ids().length;
        }
    }

    /**
     * Batches have at least this many token rows (a lone short text is padded up to it, the padding masked): the CPU
     * backend computes products of at most 4 rows by another summation order (matrix-vector kernels), and from 5 rows on
     * every row of a product sees the same operations whatever the number of rows. So a text's vector is bitwise the
     * same alone or in any batch.
     */
    static final int MIN_BATCH_ROWS = 8;

    private void runBatch(TextTokenizer.Tokens[] toks, Integer[] order, int start, int end, int longest, RowSink sink) {
        int b = end - start;
        int len = Math.max(longest, Math.min(maxPositions, (MIN_BATCH_ROWS + b - 1) / b));
        float[] ids = new float[b * len];
        float[] pad = new float[b * len];
        for (int r = 0; r < b; r++) {
            int[] t = toks[order[start + r]].ids();
            for (int j = 0; j < t.length; j++) ids[r * len + j] = t[j];
            Arrays.fill(pad, r * len + t.length, (r + 1) * len, 1f);
        }
        // the mask goes in even when no text is padded: the attention then takes the same path for a text whatever
        // its batch, so a text's vector is bitwise the same alone or batched with any others
        Request req = Request.of(Tensor.of(ids, b, len)).withKeyPaddingMask(Tensor.of(pad, b, len));
        float[] hidden = model.run(req).output().data();
        for (int r = 0; r < b; r++) {
            int index = order[start + r];
            sink.accept(index, hidden, toks[index].ids().length, r * len * width);
        }
    }

    /**
     * The sentence vector of {@code len} token rows of {@code hidden} from {@code offset}, the first {@code skip} (a
     * prompt's) left out, as sentence-transformers' Pooling computes it over the tokens its mask keeps.
     */
    private float[] pool(float[] hidden, int offset, int len, int skip) {
        int e = width, from = Math.min(skip, len), n = len - from;
        float[] v = new float[e];
        switch (pooling) {
            case CLS -> System.arraycopy(hidden, offset + (n > 0 ? from : 0) * e, v, 0, e);
            case LAST_TOKEN -> {
                if (n > 0) System.arraycopy(hidden, offset + (len - 1) * e, v, 0, e);
            }
            case MEAN, MEAN_SQRT_LEN -> {
                double[] sum = new double[e];
                for (int t = from; t < len; t++) for (int k = 0; k < e; k++) sum[k] += hidden[offset + t * e + k];
                double d = Math.max(pooling == Pooling.MEAN ? n : Math.sqrt(n), 1e-9);
                for (int k = 0; k < e; k++) v[k] = (float) (sum[k] / d);
            }
            case WEIGHTED_MEAN -> {
                double[] sum = new double[e];
                double w = 0;
                for (int t = from; t < len; t++) {
                    w += t + 1;
                    for (int k = 0; k < e; k++) sum[k] += (t + 1) * (double) hidden[offset + t * e + k];
                }
                double d = Math.max(w, 1e-9);
                for (int k = 0; k < e; k++) v[k] = (float) (sum[k] / d);
            }
            case MAX -> {
                java.util.Arrays.fill(v, Float.NEGATIVE_INFINITY);
                for (int t = from; t < len; t++)
                    for (int k = 0; k < e; k++) v[k] = Math.max(v[k], hidden[offset + t * e + k]);
            }
        }
        for (Dense d : dense) v = d.apply(v);
        if (normalize) normalize(v);
        return v;
    }

    /**
     * L2-normalizes {@code v} in place as sentence-transformers' Normalize module does ({@code
     * torch.nn.functional.normalize}: {@code v / max(||v||, 1e-12)}), the norm summed in double: the same bits as an
     * embedder that normalizes.
     */
    public static void normalize(float[] v) {
        double ss = 0;
        for (float x : v) ss += (double) x * x;
        double norm = Math.max(Math.sqrt(ss), 1e-12);
        for (int k = 0; k < v.length; k++) v[k] = (float) (v[k] / norm);
    }
}
