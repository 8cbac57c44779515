package io.attn.cli;

import io.attn.AttnException;
import io.attn.engine.AttentionWeights;
import io.attn.engine.AttnModel;
import io.attn.engine.Engine;
import io.attn.engine.Request;
import io.attn.engine.Request.MaskArg;
import io.attn.engine.Result;
import io.attn.io.AtomicFiles;
import io.attn.io.Npy;
import io.attn.io.Npz;
import io.attn.tensor.Tensor;
import java.io.IOException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.PathMatcher;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.function.DoubleConsumer;
import java.util.stream.Stream;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code attn run}: runs a PyTorch-exported module (safetensors named as its {@code state_dict()}, config JSON) on
 * embeddings files and writes outputs, attention weights and heatmaps. The masks are the ones PyTorch's {@code
 * forward} takes, as {@code .npy} files with PyTorch's meaning (bool: true = not allowed to attend; float: added to the
 * scores). Every output is written to a temporary file and renamed into place, so a failure leaves no half-written
 * file.
 */
@Command(
        name = "run",
        sortOptions = false,
        description = "Run a PyTorch-exported attention module on embeddings (.npy/.npz, or --text with word vectors).")
final class RunCommand implements Callable<Integer> {
    @Option(
            names = "--model",
            required = true,
            paramLabel = "MODEL.safetensors",
            description = "Weights, named as the PyTorch state_dict.")
    Path model;

    @Option(
            names = "--config",
            paramLabel = "CONFIG.json",
            description = "Module config (default: the \"config\" entry of the safetensors metadata).")
    Path config;

    @Option(
            names = "--input",
            paramLabel = "X.npy|DIR|GLOB",
            description =
                    "Input (B, L, E) or (L, E): the query (MHA), src (encoders, Transformer) or tgt (decoders). A directory or glob runs every .npy in it.")
    String input;

    @Option(names = "--text", description = "Input as text: tokens looked up in --vectors.")
    String text;

    @Option(
            names = "--vectors",
            paramLabel = "VECTORS.txt",
            description = "Word vectors (GloVe / word2vec text) for --text.")
    Path vectors;

    @Option(
            names = "--unknown",
            paramLabel = "zero|skip|error",
            description = "Unknown words in --text: zero vector, skipped, or an error (default: ${DEFAULT-VALUE}).")
    String unknown = "zero";

    @Option(
            names = "--memory",
            paramLabel = "M.npy",
            description = "Key = value for MHA cross-attention; the encoder output for decoders.")
    Path memory;

    @Option(names = "--target", paramLabel = "T.npy", description = "tgt for Transformer.")
    Path target;

    @Option(
            names = "--causal",
            description = "Causal self-attention: is_causal (MHA, encoders), tgt_is_causal (decoders, Transformer).")
    boolean causal;

    @Option(
            names = "--memory-causal",
            description = "memory_is_causal: a causal mask on the decoder's cross-attention.")
    boolean memoryCausal;

    @Option(
            names = "--attn-mask",
            paramLabel = "M.npy",
            description = "attn_mask (MHA), mask / src_mask (encoders, Transformer): (L, S) or (B*num_heads, L, S).")
    Path attnMask;

    @Option(
            names = "--key-padding-mask",
            paramLabel = "P.npy",
            description = "key_padding_mask (MHA), src_key_padding_mask (encoders, Transformer): (B, S).")
    Path keyPaddingMask;

    @Option(names = "--tgt-mask", paramLabel = "M.npy", description = "tgt_mask: (T, T) or (B*num_heads, T, T).")
    Path tgtMask;

    @Option(names = "--memory-mask", paramLabel = "M.npy", description = "memory_mask: (T, S) or (B*num_heads, T, S).")
    Path memoryMask;

    @Option(names = "--tgt-key-padding-mask", paramLabel = "P.npy", description = "tgt_key_padding_mask: (B, T).")
    Path tgtKeyPaddingMask;

    @Option(
            names = "--memory-key-padding-mask",
            paramLabel = "P.npy",
            description = "memory_key_padding_mask: (B, S). Every mask is an .npy, bool (true = not allowed to attend,"
                    + " as PyTorch) or float (added to the scores).")
    Path memoryKeyPaddingMask;

    @Option(
            names = "--output",
            paramLabel = "Y.npy|DIR",
            description = "Output (.npy, or .npz); a directory with a directory/glob input.")
    Path output;

    @Option(
            names = "--attention-weights",
            paramLabel = "W.npy|W.npz",
            description =
                    "Attention weights: (B, L, S) averaged over heads (MHA), or an .npz with one array per attention block.")
    Path attentionWeights;

    @Option(names = "--per-head", description = "Weights per head (B, H, L, S) instead of averaged.")
    boolean perHead;

    @Option(
            names = "--heatmap",
            paramLabel = "A.png",
            description = "PNG heatmap of the (first block's) attention weights for the first batch item.")
    Path heatmap;

    @Option(
            names = "--non-finite",
            paramLabel = "error|warn",
            description = "NaN/Inf in the inputs: fail or warn and run on (default: ${DEFAULT-VALUE}). Weights must be"
                    + " finite.")
    String nonFinite = "error";

    @Mixin
    DeviceOptions device;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() throws IOException {
        if ((input == null) == (text == null))
            throw new ParameterException(spec.commandLine(), "give exactly one of --input and --text");
        if (!nonFinite.equals("error") && !nonFinite.equals("warn"))
            throw new ParameterException(spec.commandLine(), "--non-finite must be error or warn, got " + nonFinite);
        engine = device.open();
        System.err.println("attn: device " + engine.description());
        try {
            AttnModel m = engine.load(model, config); // names the file and the problem: BAD_INPUT, exit 3
            loaded = m;
            List<Path> batch = input == null ? null : expand(input);
            if (batch == null) {
                Path in = input == null ? null : Path.of(input);
                progress = new Progress(1, false);
                String summary;
                try {
                    summary = runOne(in, output, attentionWeights, heatmap, progress.within(in));
                } finally {
                    progress.done(0);
                }
                if (summary != null) System.out.println(summary);
                return 0;
            }
            return runBatch(batch);
        } finally {
            if (fallback != null) fallback.close();
            engine.close(); // closes the model too
        }
    }

    /** The engine the runs go to: the selected device, or the CPU after a device fault with {@code --device auto}. */
    private Engine engine;

    /** The model on {@link #engine}. */
    private AttnModel loaded;

    /** The progress of the files being run (its bar, on a terminal). */
    private Progress progress;

    private Engine fallback;

    /**
     * Runs the model; with {@code --device auto}, a device failure (out of memory, device lost) on a non-CPU device is
     * reported as a warning and the run is repeated on the CPU (the model loaded there), which then takes every later
     * run too.
     */
    private Result compute(Request inputs) {
        try {
            return loaded.run(inputs);
        } catch (AttnException e) {
            boolean deviceFault = e.code() == AttnException.Code.DEVICE_OUT_OF_MEMORY
                    || e.code() == AttnException.Code.DEVICE_UNAVAILABLE;
            Engine on = fallback != null ? fallback : engine;
            if (!deviceFault || !device.auto() || on.device().equals("cpu")) throw e;
            warn(on.device() + " failed (" + e.getMessage() + "); falling back to the CPU");
            fallback = Engine.open(device.engineOptions().withDevice("cpu"));
            loaded = fallback.load(model, config);
            return loaded.run(inputs);
        }
    }

    /** Null for a single file; the sorted file list for a directory or a glob. */
    private static List<Path> expand(String in) throws IOException {
        Path p = Path.of(in);
        if (Files.isDirectory(p)) {
            try (Stream<Path> s = Files.list(p)) {
                return s.filter(x -> x.toString().endsWith(".npy")).sorted().toList();
            }
        }
        if (in.contains("*") || in.contains("?") || in.contains("[")) {
            Path dir = p.getParent() == null ? Path.of(".") : p.getParent();
            PathMatcher pm = FileSystems.getDefault().getPathMatcher("glob:" + p.getFileName());
            try (Stream<Path> s = Files.list(dir)) {
                return s.filter(x -> pm.matches(x.getFileName())).sorted().toList();
            }
        }
        return null;
    }

    private int runBatch(List<Path> files) throws IOException {
        if (files.isEmpty()) throw AttnException.badInput(input + ": no .npy files found");
        if (output == null)
            throw AttnException.badInput("--output DIR is required when --input is a directory or glob");
        if (Files.exists(output) && !Files.isDirectory(output))
            throw AttnException.badInput(output + ": must be a directory when --input is a directory or glob");
        Files.createDirectories(output);
        progress = new Progress(files.size(), true);
        int failed = 0;
        try {
            for (Path f : files) {
                String stem = stem(f);
                try {
                    runOne(
                            f,
                            output.resolve(stem + ".npy"),
                            attentionWeights == null
                                    ? null
                                    : dir(attentionWeights).resolve(stem + ".npz"),
                            heatmap == null ? null : dir(heatmap).resolve(stem + ".png"),
                            progress.within(f));
                    progress.ok(f);
                } catch (AttnException | IOException e) {
                    failed++;
                    progress.failed(f, Main.oneLine(e));
                }
            }
        } finally {
            progress.done(failed);
        }
        return failed == 0 ? 0 : Main.EXIT_BAD_INPUT;
    }

    private static Path dir(Path p) throws IOException {
        Files.createDirectories(p);
        return p;
    }

    /** Runs one input; returns the output's summary line when nothing is written, else null. */
    private String runOne(Path in, Path out, Path weightsOut, Path heatmapOut, DoubleConsumer progress)
            throws IOException {
        List<String> labels = new ArrayList<>();
        Tensor x;
        if (in != null) {
            x = readInput(in);
        } else {
            TextInput t = TextInput.embed(text, vectors, unknown);
            x = t.embeddings();
            labels = t.tokens();
        }
        Tensor mem = memory == null ? null : readInput(memory);
        Tensor tgt = target == null ? null : readInput(target);
        boolean wantWeights = weightsOut != null || heatmapOut != null;
        AttentionWeights w =
                !wantWeights ? AttentionWeights.NONE : perHead ? AttentionWeights.PER_HEAD : AttentionWeights.AVERAGED;
        Request inputs = Request.of(x)
                .withMemory(mem)
                .withTarget(tgt)
                .withCausal(causal)
                .withMemoryCausal(memoryCausal)
                .withAttentionWeights(w)
                .withProgress(progress);
        Map<MaskArg, Path> maskFiles = maskFiles();
        for (var e : maskFiles.entrySet()) {
            Npy.Typed mask = readMask(e.getValue());
            inputs = inputs.withMask(e.getKey(), mask.tensor(), mask.isBool());
        }
        if (nonFinite.equals("warn")) {
            warnNonFinite(x, String.valueOf(in == null ? "--text" : in));
            if (mem != null) warnNonFinite(mem, memory.toString());
            if (tgt != null) warnNonFinite(tgt, target.toString());
            inputs = inputs.withFiniteCheck(false);
        }
        Result r;
        try {
            r = compute(inputs);
        } catch (AttnException e) {
            // name the file the problem is about: the memory, target or mask file when the engine says it is about it
            Object file = in == null ? "--text" : in;
            String arg = e.argument();
            if (memory != null && "memory".equals(arg)) file = memory;
            else if (target != null && "target".equals(arg)) file = target;
            for (var f : maskFiles.entrySet()) if (f.getKey().torchName().equals(arg)) file = f.getValue();
            throw new AttnException(e.code(), file + ": " + e.getMessage(), e);
        }
        if (nonFinite.equals("warn")) warnNonFinite(r.output(), "output");
        // everything computed: now write every output as one unit (all or none)
        Map<Path, AtomicFiles.Writer> files = new LinkedHashMap<>();
        if (out != null) files.put(out, arrayWriter(out, "output", r.output()));
        if (weightsOut != null) files.put(weightsOut, weightsWriter(weightsOut, r.attentionWeights()));
        if (heatmapOut != null) {
            var first = r.attentionWeights().entrySet().iterator().next();
            Tensor wt = first.getValue();
            if (wt.rank() >= 3 && (wt.rank() == 4 || !perHead) && wt.rank() > 2)
                wt = wt.slice0(0, 1).reshape(wt.shape().remove(0));
            List<String> cols = mem == null && tgt == null ? labels : List.of();
            byte[] png = Heatmap.png(Heatmap.panels(first.getKey(), wt), labels, cols);
            files.put(heatmapOut, o -> o.write(png));
        }
        AtomicFiles.writeAll(files);
        return out == null && !wantWeights ? summary(r.output()) : null;
    }

    private static AtomicFiles.Writer weightsWriter(Path p, Map<String, Tensor> weights) {
        if (p.toString().endsWith(".npz")) return o -> Npz.write(o, new LinkedHashMap<>(weights), true);
        if (weights.size() != 1)
            throw AttnException.badInput(p + ": this model has " + weights.size() + " attention blocks "
                    + weights.keySet() + "; write them to an .npz");
        Tensor w = weights.values().iterator().next();
        return o -> Npy.write(o, w);
    }

    private static AtomicFiles.Writer arrayWriter(Path p, String key, Tensor t) {
        if (p.toString().endsWith(".npz")) return o -> Npz.write(o, Map.of(key, t), true);
        return o -> Npy.write(o, t);
    }

    static Tensor readArray(Path p) {
        if (p.toString().endsWith(".npz")) {
            Map<String, Tensor> all = Npz.read(p);
            if (all.size() != 1)
                throw AttnException.badInput(p + ": expected one array in the .npz, found " + all.keySet());
            return all.values().iterator().next();
        }
        return Npy.read(p);
    }

    /** An input, memory or target array: something to run on. */
    private static Tensor readInput(Path p) {
        Tensor t = readArray(p);
        if (t.size() == 0) throw AttnException.badInput(p + ": the array " + t.shape() + " is empty: nothing to run");
        return t;
    }

    /** The mask options given, by the PyTorch argument each one is. */
    private Map<MaskArg, Path> maskFiles() {
        Map<MaskArg, Path> m = new EnumMap<>(MaskArg.class);
        if (attnMask != null) m.put(MaskArg.ATTN_MASK, attnMask);
        if (keyPaddingMask != null) m.put(MaskArg.KEY_PADDING_MASK, keyPaddingMask);
        if (tgtMask != null) m.put(MaskArg.TGT_MASK, tgtMask);
        if (memoryMask != null) m.put(MaskArg.MEMORY_MASK, memoryMask);
        if (tgtKeyPaddingMask != null) m.put(MaskArg.TGT_KEY_PADDING_MASK, tgtKeyPaddingMask);
        if (memoryKeyPaddingMask != null) m.put(MaskArg.MEMORY_KEY_PADDING_MASK, memoryKeyPaddingMask);
        return m;
    }

    /** A mask file: an .npy of bool (true = not allowed to attend) or float (added to the scores), as PyTorch takes. */
    private static Npy.Typed readMask(Path p) {
        if (!p.toString().endsWith(".npy")) throw AttnException.badInput(p + ": a mask is an .npy file");
        Npy.Typed t = Npy.readTyped(p);
        if (!t.isBool() && !t.isFloat())
            throw AttnException.badInput(p + ": a mask of " + t.dtype() + ": PyTorch takes bool masks (true = not"
                    + " allowed to attend) or float masks (added to the scores); save it with .astype(bool)");
        return t;
    }

    private void warnNonFinite(Tensor t, String what) {
        float[] d = t.data();
        int bad = -1;
        for (int i = 0; i < d.length && bad < 0; i++) if (!Float.isFinite(d[i])) bad = i;
        if (bad >= 0) warn(what + ": holds " + t.data()[bad] + " at " + t.indexString(bad));
    }

    /** A warning line on stderr, on a line of its own when a progress bar is drawn. */
    private void warn(String message) {
        progress.line("attn: warning: " + message);
    }

    private static String summary(Tensor out) {
        double s = 0, s2 = 0;
        for (float v : out.data()) {
            s += v;
            s2 += (double) v * v;
        }
        return String.format(
                java.util.Locale.ROOT,
                "output %s: mean %.6f, rms %.6f (use --output to save it)",
                out.shape(),
                s / out.size(),
                Math.sqrt(s2 / out.size()));
    }

    private static String stem(Path f) {
        String n = f.getFileName().toString();
        int dot = n.lastIndexOf('.');
        return dot > 0 ? n.substring(0, dot) : n;
    }
}
