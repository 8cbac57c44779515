package io.attn.cli;

import io.attn.AttnException;
import io.attn.engine.ModelConfigs;
import io.attn.io.Json;
import io.attn.io.Npy;
import io.attn.io.Npz;
import io.attn.io.SafeTensors;
import io.attn.io.WordVectors;
import io.attn.tensor.Shape;
import io.attn.tensor.Tensor;
import io.attn.text.Dense;
import io.attn.text.TextModel;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code attn inspect FILE}: what a file holds. The file is first read and validated in full by the same reader {@code
 * attn run} uses (so a bad file fails here exactly as it would there), then described: for a safetensors file a table
 * of its tensors (name, stored dtype, shape, elements, bytes), the config as the engine understands it (every
 * constructor argument, defaults filled in) and the other metadata; for an .npy its version, dtype, shape and value
 * range; for an .npz a table of its arrays; for a config JSON the config as understood; for word vectors their count
 * and width; for a Hugging Face model folder its family, its config as the engine understands it and its
 * sentence-transformers settings (pooling, normalization, maximum length, prompts). {@code --json} prints the same as
 * one JSON object, for scripts.
 */
@Command(
        name = "inspect",
        description =
                "Describe a .safetensors, .npy, .npz, config .json or word-vector file, a Hugging Face model folder,"
                        + " or a BERT .onnx export.")
final class InspectCommand implements Callable<Integer> {
    @Parameters(paramLabel = "FILE")
    Path file;

    @Option(names = "--json", description = "One JSON object instead of the tables (for scripts).")
    boolean json;

    @Option(names = "--verbose", description = "Stack traces for errors.")
    boolean verbose;

    @Override
    public Integer call() throws IOException {
        if (Files.isDirectory(file)
                || file.getFileName().toString().toLowerCase(Locale.ROOT).endsWith(".onnx")) {
            Map<String, Object> d = folder();
            System.out.println(json ? Json.write(d) : text(d));
            return 0;
        }
        if (!Files.exists(file)) throw AttnException.badInput(file + ": no such file");
        if (!Files.isRegularFile(file))
            throw AttnException.badInput(file + ": not a regular file (a pipe, socket or device): give a file");
        String n = file.getFileName().toString().toLowerCase(Locale.ROOT);
        Map<String, Object> d;
        if (n.endsWith(".safetensors")) d = safetensors();
        else if (n.endsWith(".npy")) d = npy();
        else if (n.endsWith(".npz")) d = npz();
        else if (n.endsWith(".json")) d = config();
        else if (n.endsWith(".txt") || n.endsWith(".vec")) d = vectors();
        else
            throw AttnException.badInput(
                    file + ": unknown file type (expected .safetensors, .onnx, .npy, .npz, .json, .txt or .vec)");
        System.out.println(json ? Json.write(d) : text(d));
        return 0;
    }

    // ------------------------------------------------------------------------------------ descriptions (JSON-able)

    private Map<String, Object> safetensors() throws IOException {
        SafeTensors.File f = SafeTensors.read(file); // validates offsets, sizes, dtypes
        Map<String, Object> header = rawSafetensorsHeader();
        Map<String, Object> d = start("safetensors");
        List<Object> tensors = new ArrayList<>();
        long elements = 0, bytes = 0;
        for (var e : f.tensors().entrySet()) {
            Map<?, ?> info = (Map<?, ?>) header.get(e.getKey());
            List<?> offsets = (List<?>) info.get("data_offsets");
            long size = ((Number) offsets.get(1)).longValue() - ((Number) offsets.get(0)).longValue();
            tensors.add(array(
                    e.getKey(), String.valueOf(info.get("dtype")), e.getValue().shape(), size));
            elements += e.getValue().size();
            bytes += size;
        }
        d.put("tensors", tensors);
        d.put("parameters", elements);
        d.put("bytes", bytes);
        Map<String, Object> meta = new LinkedHashMap<>(f.metadata());
        String cfgText = (String) meta.remove("config");
        if (cfgText != null) {
            Map<String, Object> raw = Json.parseObject(cfgText, file + " (metadata \"config\")");
            d.put("config", understand(raw, file + " (metadata \"config\")"));
            // a quantized language model (attn quantize M.safetensors): the block that says how, as for a folder
            if (raw.get(io.attn.engine.Quantization.CONFIG_KEY) instanceof Map<?, ?> block) {
                Map<String, Object> q = new LinkedHashMap<>();
                for (var e : block.entrySet()) q.put(String.valueOf(e.getKey()), e.getValue());
                long int8 = header.entrySet().stream()
                        .filter(e -> e.getValue() instanceof Map<?, ?> info
                                && "I8".equals(info.get("dtype"))
                                && !e.getKey().endsWith("_zero_point"))
                        .count();
                q.put("int8_tensors", int8);
                d.put("quantization", q);
            }
        }
        d.put("metadata", meta);
        return d;
    }

    @SuppressWarnings("unchecked")
    private Map<String, Object> rawSafetensorsHeader() throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            ByteBuffer len = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
            ch.read(len, 0);
            ByteBuffer h = ByteBuffer.allocate((int) len.getLong(0)); // bounded: read() above validated it
            ch.read(h, 8);
            return (Map<String, Object>) Json.parse(new String(h.array(), StandardCharsets.UTF_8), file.toString());
        }
    }

    private Map<String, Object> npy() throws IOException {
        Npy.Typed t = Npy.readTyped(file); // validates header against the file size
        byte[] head = new byte[12];
        try (var in = Files.newInputStream(file)) {
            in.readNBytes(head, 0, 12);
        }
        Map<String, Object> d = start("npy");
        d.put("version", head[6] + "." + head[7]);
        d.putAll(array(null, t.dtype(), t.tensor().shape(), Files.size(file)));
        stats(t.tensor(), d);
        return d;
    }

    private Map<String, Object> npz() {
        Map<String, Npy.Typed> arrays = Npz.readTyped(file);
        Map<String, Object> d = start("npz");
        List<Object> list = new ArrayList<>();
        for (var e : arrays.entrySet()) {
            Tensor t = e.getValue().tensor();
            list.add(array(e.getKey(), e.getValue().dtype(), t.shape(), -1));
        }
        d.put("arrays", list);
        return d;
    }

    private Map<String, Object> config() {
        Map<String, Object> m = Json.readObject(file); // UTF-8, size cap, nesting cap
        Map<String, Object> d = start("config");
        d.put("config", understand(m, file.toString()));
        return d;
    }

    /**
     * A Hugging Face model folder as the text models read it: its family ({@code model_type}), the encoder's config as
     * the engine understands it (defaults filled in), and the sentence-transformers settings (pooling, normalization,
     * maximum length, prompts).
     */
    private Map<String, Object> folder() {
        TextModel m = TextModel.read(file);
        // a BERT .onnx export (the file, or the folder holding it) reads as the folder attn convert would write
        Map<String, Object> d = start(m.fromOnnx() ? "onnx export" : "model folder");
        if (m.fromOnnx()) d.put("onnx", m.source());
        d.put("model_type", m.modelType());
        d.put("config", ModelConfigs.withDefaults(m.config(), m.source()));
        if (!m.tasks().isEmpty() || m.task() != null) {
            Map<String, Object> t = new LinkedHashMap<>();
            if (m.task() != null) t.put("merged", m.task());
            else {
                t.put("tasks", new java.util.ArrayList<Object>(m.tasks()));
                t.put("rank", m.config().getOrDefault("lora_rank", 4));
                t.put("alpha", m.config().getOrDefault("lora_alpha", 1));
                t.put("run", "attn embed --task NAME merges one task's adapter; without --task, the base weights");
            }
            d.put("task_adapters", t);
        }
        Map<String, Object> st = new LinkedHashMap<>();
        st.put("pooling", m.pooling().label());
        List<Object> dense = new java.util.ArrayList<>();
        for (Dense x : m.dense()) {
            Map<String, Object> one = new LinkedHashMap<>();
            one.put("path", x.path());
            one.put("in_features", (long) x.in());
            one.put("out_features", (long) x.out());
            one.put("bias", x.bias());
            one.put("activation", x.activation().className());
            one.put("use_residual", x.useResidual());
            dense.add(one);
        }
        st.put("dense", dense);
        st.put("dimension", (long) m.dimension());
        st.put("normalize", m.normalize());
        st.put("max_length", (long) m.maxLength());
        st.put("prompts", new LinkedHashMap<String, Object>(m.prompts().byName()));
        st.put("default_prompt_name", m.prompts().defaultName());
        st.put("include_prompt", m.prompts().includePrompt());
        st.put("tokenizer", m.tokenizer().toString());
        d.put("sentence_transformers", st);
        Object described = m.config().get(io.attn.engine.Quantization.CONFIG_KEY);
        if (described == null && !m.int8Tensors().isEmpty()) // an int8 (-q) export: what attn convert would record
        described = io.attn.engine.Quantization.describe(
                m.config(), m.weights(), Path.of(m.source()).getFileName().toString());
        if (described instanceof Map<?, ?> block) {
            Map<String, Object> q = new LinkedHashMap<>();
            for (var e : block.entrySet()) q.put(String.valueOf(e.getKey()), e.getValue());
            q.put("int8_tensors", (long) m.int8Tensors().size());
            d.put("quantization", q);
        }
        long params = 0;
        for (Tensor t : m.weights().values()) params += t.size();
        d.put("tensors", (long) m.weights().size());
        d.put("parameters", params);
        return d;
    }

    private Map<String, Object> vectors() {
        WordVectors wv = WordVectors.load(file);
        Map<String, Object> d = start("word vectors");
        d.put("words", wv.size());
        d.put("dim", wv.dim());
        d.put("duplicates_ignored", wv.duplicates());
        return d;
    }

    private Map<String, Object> start(String format) {
        Map<String, Object> d = new LinkedHashMap<>();
        d.put("file", file.toString());
        d.put("format", format);
        return d;
    }

    private static Map<String, Object> array(String name, String dtype, Shape shape, long bytes) {
        Map<String, Object> a = new LinkedHashMap<>();
        if (name != null) a.put("name", name);
        a.put("dtype", dtype);
        List<Object> dims = new ArrayList<>();
        for (int x : shape.dims()) dims.add((long) x);
        a.put("shape", dims);
        a.put("elements", (long) shape.size());
        if (bytes >= 0) a.put("bytes", bytes);
        return a;
    }

    /** A config as the engine understands it: a decoder-only LM config or a module config, defaults filled in. */
    private static Map<String, Object> understand(Map<String, Object> m, String source) {
        return ModelConfigs.withDefaults(m, source);
    }

    private static Map<String, Object> understand(String json, String source) {
        return understand(Json.parseObject(json, source), source);
    }

    private static void stats(Tensor t, Map<String, Object> d) {
        double min = Double.POSITIVE_INFINITY, max = Double.NEGATIVE_INFINITY, sum = 0;
        long nonFinite = 0;
        for (float v : t.data()) {
            if (!Float.isFinite(v)) {
                nonFinite++;
                continue;
            }
            min = Math.min(min, v);
            max = Math.max(max, v);
            sum += v;
        }
        long n = t.size() - nonFinite;
        if (n > 0) {
            d.put("min", min);
            d.put("max", max);
            d.put("mean", sum / n);
        }
        d.put("non_finite", nonFinite);
    }

    // ------------------------------------------------------------------------------------------------------ text

    @SuppressWarnings("unchecked")
    private static String text(Map<String, Object> d) {
        StringBuilder b = new StringBuilder();
        String format = (String) d.get("format");
        b.append(d.get("file")).append(": ");
        switch (format) {
            case "safetensors" -> {
                List<Object> tensors = (List<Object>) d.get("tensors");
                b.append(String.format(
                        Locale.ROOT,
                        "safetensors, %d tensors, %,d parameters, %s%n",
                        tensors.size(),
                        (Long) d.get("parameters"),
                        size((Long) d.get("bytes"))));
                table(b, tensors, true);
                if (d.containsKey("config")) {
                    b.append(String.format("config (from the metadata, as understood):%n"));
                    fields(b, (Map<String, Object>) d.get("config"));
                }
                if (d.get("quantization") instanceof Map<?, ?> q) {
                    b.append(String.format("quantization:%n"));
                    fields(b, (Map<String, Object>) q);
                }
                Map<String, Object> meta = (Map<String, Object>) d.get("metadata");
                if (!meta.isEmpty()) {
                    b.append(String.format("metadata:%n"));
                    fields(b, meta);
                }
            }
            case "npy" -> {
                b.append(String.format(
                        Locale.ROOT,
                        ".npy version %s, %s, shape %s, %,d elements (%s file)%n",
                        d.get("version"),
                        d.get("dtype"),
                        shape((List<Object>) d.get("shape")),
                        (Long) d.get("elements"),
                        size((Long) d.get("bytes"))));
                if (d.containsKey("min"))
                    b.append(String.format(
                            Locale.ROOT, "  min %.6g, max %.6g, mean %.6g", d.get("min"), d.get("max"), d.get("mean")));
                long bad = (Long) d.get("non_finite");
                if (bad > 0)
                    b.append(d.containsKey("min") ? ", " : "  ").append(bad).append(" NaN/Inf");
                if (d.containsKey("min") || bad > 0) b.append(String.format("%n"));
            }
            case "npz" -> {
                List<Object> arrays = (List<Object>) d.get("arrays");
                b.append(String.format(".npz, %d arrays%n", arrays.size()));
                table(b, arrays, false);
            }
            case "config" -> {
                b.append(String.format("config, as understood:%n"));
                fields(b, (Map<String, Object>) d.get("config"));
            }
            case "model folder", "onnx export" -> {
                b.append(String.format(
                        Locale.ROOT,
                        "%s, model_type %s, %d tensors, %,d parameters%n",
                        d.containsKey("onnx")
                                ? "ONNX export " + d.get("onnx") + " (read as attn convert writes it)"
                                : "Hugging Face model folder",
                        d.get("model_type"),
                        (Long) d.get("tensors"),
                        (Long) d.get("parameters")));
                b.append(String.format("config, as understood:%n"));
                fields(b, (Map<String, Object>) d.get("config"));
                b.append(String.format("sentence embedding:%n"));
                fields(b, (Map<String, Object>) d.get("sentence_transformers"));
                if (d.get("task_adapters") instanceof Map<?, ?> t) {
                    b.append(String.format("task adapters (LoRA):%n"));
                    fields(b, (Map<String, Object>) t);
                }
                if (d.get("quantization") instanceof Map<?, ?> q) {
                    b.append(String.format("quantization:%n"));
                    fields(b, (Map<String, Object>) q);
                }
            }
            default ->
                b.append(String.format(
                        Locale.ROOT,
                        "word vectors, %,d words, dim %d%s%n",
                        (Integer) d.get("words"),
                        (Integer) d.get("dim"),
                        (Integer) d.get("duplicates_ignored") > 0
                                ? ", " + d.get("duplicates_ignored") + " duplicate words ignored (first kept)"
                                : ""));
        }
        return b.toString().stripTrailing();
    }

    /** Rows of {@code name, dtype, shape, elements[, bytes]}, columns as wide as their widest cell. */
    @SuppressWarnings("unchecked")
    private static void table(StringBuilder b, List<Object> rows, boolean withBytes) {
        List<String[]> cells = new ArrayList<>();
        cells.add(
                withBytes
                        ? new String[] {"name", "dtype", "shape", "elements", "bytes"}
                        : new String[] {"name", "dtype", "shape", "elements"});
        for (Object o : rows) {
            Map<String, Object> r = (Map<String, Object>) o;
            String[] c = {
                (String) r.get("name"),
                (String) r.get("dtype"),
                shape((List<Object>) r.get("shape")),
                String.format(Locale.ROOT, "%,d", (Long) r.get("elements")),
                withBytes ? size((Long) r.get("bytes")) : null
            };
            cells.add(withBytes ? c : java.util.Arrays.copyOf(c, 4));
        }
        int[] w = new int[cells.get(0).length];
        for (String[] c : cells) for (int i = 0; i < c.length; i++) w[i] = Math.max(w[i], c[i].length());
        for (String[] c : cells) {
            StringBuilder line = new StringBuilder(" ");
            for (int i = 0; i < c.length; i++) {
                boolean right = i >= 3; // numbers
                String cell = right ? " ".repeat(w[i] - c[i].length()) + c[i] : c[i] + " ".repeat(w[i] - c[i].length());
                line.append(' ').append(cell).append(' ');
            }
            b.append(line.toString().stripTrailing()).append(String.format("%n"));
        }
    }

    private static void fields(StringBuilder b, Map<String, Object> m) {
        int w = 0;
        for (String k : m.keySet()) w = Math.max(w, k.length());
        for (var e : m.entrySet())
            b.append("  ")
                    .append(e.getKey())
                    .append(" ".repeat(w - e.getKey().length() + 2))
                    .append(
                            e.getValue() instanceof Map<?, ?> || e.getValue() instanceof List<?>
                                    ? Json.write(e.getValue())
                                    : e.getValue())
                    .append(String.format("%n"));
    }

    private static String shape(List<Object> dims) {
        List<String> s = new ArrayList<>();
        for (Object o : dims) s.add(String.valueOf(o));
        return "(" + String.join(", ", s) + ")";
    }

    /** Bytes in binary units: {@code 640 B}, {@code 3.0 KiB}, {@code 86.8 MiB}. */
    private static String size(long n) {
        if (n < 1024) return n + " B";
        String[] units = {"KiB", "MiB", "GiB", "TiB"};
        double v = n;
        int u = -1;
        while (v >= 1024 && u < units.length - 1) {
            v /= 1024;
            u++;
        }
        return String.format(Locale.ROOT, "%.1f %s", v, units[u]);
    }
}
