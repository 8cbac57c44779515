package io.attn.cli;

import io.attn.AttnException;
import io.attn.backend.Backend;
import io.attn.backend.Backends;
import io.attn.engine.AttentionWeights;
import io.attn.engine.Request;
import io.attn.engine.Result;
import io.attn.io.AtomicFiles;
import io.attn.io.Npy;
import io.attn.io.Npz;
import io.attn.io.SafeTensors;
import io.attn.nn.Model;
import io.attn.nn.ModelConfig;
import io.attn.nn.StateDict;
import io.attn.tensor.Tensor;
import java.io.IOException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.PathMatcher;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.stream.Stream;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code attn run}: runs a PyTorch-exported module (safetensors named as its {@code state_dict()}, config JSON) on
 * embeddings files and writes outputs, attention weights and heatmaps. Every output is written to a temporary file
 * and renamed into place, so a failure leaves no half-written file.
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
            description = "Causal self-attention (the decoder's; the encoder's or MHA's when given for them).")
    boolean causal;

    @Option(names = "--key-padding-mask", paramLabel = "P.npy", description = "(B, S) bool or 0/1; true/1 = padding.")
    Path keyPaddingMask;

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
            description = "NaN/Inf in inputs or weights: fail or warn (default: ${DEFAULT-VALUE}).")
    String nonFinite = "error";

    @Mixin
    DeviceOptions device;

    @Override
    public Integer call() throws IOException {
        if ((input == null) == (text == null)) throw AttnException.badInput("give exactly one of --input and --text");
        if (!nonFinite.equals("error") && !nonFinite.equals("warn"))
            throw AttnException.badInput("--non-finite must be error or warn, got " + nonFinite);
        Model m = loadModel();
        Backends.Selection sel = device.open();
        System.err.println("attn: device " + sel.reason());
        backend = sel.backend();
        try (m) {
            List<Path> batch = input == null ? null : expand(input);
            if (batch == null) {
                runOne(m, input == null ? null : Path.of(input), output, attentionWeights, heatmap);
                return 0;
            }
            return runBatch(m, batch);
        } finally {
            if (fallback != null) fallback.close();
            sel.backend().close();
        }
    }

    /** The backend runs go to: the selected one, or the CPU after a device fault with {@code --device auto}. */
    private Backend backend;

    private Backend fallback;

    /**
     * Runs the model; with {@code --device auto}, a device failure (out of memory, device lost) on a non-CPU backend
     * is reported as a warning and the run is repeated on the CPU, which then takes every later run too.
     */
    private Result compute(Model m, Request inputs) {
        try {
            return m.run(backend, inputs);
        } catch (AttnException e) {
            boolean deviceFault = e.code() == AttnException.Code.DEVICE_OUT_OF_MEMORY
                    || e.code() == AttnException.Code.DEVICE_UNAVAILABLE;
            if (!deviceFault || !device.auto() || backend.name().equals("cpu")) throw e;
            System.err.println(
                    "attn: warning: " + backend.name() + " failed (" + e.getMessage() + "); falling back to the CPU");
            fallback = device.open("cpu").backend();
            backend = fallback;
            return m.run(backend, inputs);
        }
    }

    private Model loadModel() {
        SafeTensors.File f = SafeTensors.read(model);
        ModelConfig c = Model.readConfig(f, model, config);
        for (var e : f.tensors().entrySet()) checkFinite(e.getValue(), model + ": tensor '" + e.getKey() + "'");
        return Model.load(c, new StateDict(f.tensors(), model.toString()));
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

    private int runBatch(Model m, List<Path> files) throws IOException {
        if (files.isEmpty()) throw AttnException.badInput(input + ": no .npy files found");
        if (output == null)
            throw AttnException.badInput("--output DIR is required when --input is a directory or glob");
        if (Files.exists(output) && !Files.isDirectory(output))
            throw AttnException.badInput(output + ": must be a directory when --input is a directory or glob");
        Files.createDirectories(output);
        Progress progress = new Progress(files.size());
        int failed = 0;
        for (Path f : files) {
            String stem = stem(f);
            try {
                runOne(
                        m,
                        f,
                        output.resolve(stem + ".npy"),
                        attentionWeights == null ? null : dir(attentionWeights).resolve(stem + ".npz"),
                        heatmap == null ? null : dir(heatmap).resolve(stem + ".png"));
                progress.ok(f);
            } catch (AttnException | IOException e) {
                failed++;
                progress.failed(f, Main.oneLine(e));
            }
        }
        progress.done(failed);
        return failed == 0 ? 0 : Main.EXIT_BAD_INPUT;
    }

    private static Path dir(Path p) throws IOException {
        Files.createDirectories(p);
        return p;
    }

    private void runOne(Model m, Path in, Path out, Path weightsOut, Path heatmapOut) throws IOException {
        List<String> labels = new ArrayList<>();
        Tensor x;
        if (in != null) {
            x = readArray(in);
        } else {
            TextInput t = TextInput.embed(text, vectors, unknown);
            x = t.embeddings();
            labels = t.tokens();
        }
        checkFinite(x, String.valueOf(in == null ? "--text" : in));
        Tensor mem = memory == null ? null : readArray(memory);
        Tensor tgt = target == null ? null : readArray(target);
        Tensor kp = keyPaddingMask == null ? null : readArray(keyPaddingMask);
        if (mem != null) checkFinite(mem, memory.toString());
        if (tgt != null) checkFinite(tgt, target.toString());
        boolean wantWeights = weightsOut != null || heatmapOut != null;
        AttentionWeights w =
                !wantWeights ? AttentionWeights.NONE : perHead ? AttentionWeights.PER_HEAD : AttentionWeights.AVERAGED;
        Request inputs = Request.of(x)
                .withMemory(mem)
                .withTarget(tgt)
                .withKeyPaddingMask(kp)
                .withCausal(causal)
                .withAttentionWeights(w);
        Result r;
        try {
            r = compute(m, inputs);
        } catch (AttnException e) {
            // name the file the problem is about: the memory, target or mask file when the message is about it
            String msg = e.getMessage();
            Object file = in == null ? "--text" : in;
            if (memory != null && msg.startsWith("memory ")) file = memory;
            else if (target != null && msg.startsWith("target ")) file = target;
            else if (keyPaddingMask != null && msg.startsWith("key-padding mask")) file = keyPaddingMask;
            throw new AttnException(e.code(), file + ": " + msg, e);
        }
        checkFinite(r.output(), "output");
        // everything computed: now write every output as one unit (all or none)
        Map<Path, AtomicFiles.Writer> files = new LinkedHashMap<>();
        if (out != null) files.put(out, arrayWriter(out, "output", r.output()));
        else if (!wantWeights) printSummary(r.output());
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

    private void checkFinite(Tensor t, String what) {
        if (t.allFinite()) return;
        String msg = what + ": contains NaN or Inf values";
        if (nonFinite.equals("error")) throw new AttnException(AttnException.Code.NON_FINITE, msg);
        System.err.println("attn: warning: " + msg);
    }

    private static void printSummary(Tensor out) {
        double s = 0, s2 = 0;
        for (float v : out.data()) {
            s += v;
            s2 += (double) v * v;
        }
        System.out.printf(
                java.util.Locale.ROOT,
                "output %s: mean %.6f, rms %.6f (use --output to save it)%n",
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
