package io.attn.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.io.Npy;
import io.attn.io.SafeTensors;
import io.attn.tensor.Tensor;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A hostile corpus, generated here (not committed), run through {@code attn run} and {@code attn inspect} in a separate
 * JVM with {@code -Xmx256m}, as an outside checker would: every case must exit non-zero with exactly one error line on
 * stderr (the "attn: device ..." info line and "attn: warning: ..." lines aside), print no stack trace, finish within 2
 * s, and leave no output or temporary file.
 *
 * <p>Timing: the cases run one after another in one child JVM ({@link HostileRunner}), each timed in process, so the 2
 * s bound holds for the work itself; a cold JVM adds its start-up (about 0.5-1 s here, more on a loaded machine), which
 * {@link #separateJvmPerCase} checks separately for a few cases with a 4 s wall bound (2 s + start-up slack).
 */
class HostileFilesTest {
    @TempDir
    Path dir;

    Path in, out, tmp;
    final List<String[]> cases = new ArrayList<>();

    static final int E = 8, H = 2;

    @BeforeEach
    void setUp() throws IOException {
        in = Files.createDirectories(dir.resolve("in"));
        out = Files.createDirectories(dir.resolve("out"));
        tmp = Files.createDirectories(dir.resolve("tmp"));
    }

    // ---------------------------------------------------------------- generators

    static Tensor random(long seed, int... dims) {
        int n = 1;
        for (int d : dims) n *= d;
        float[] v = new float[n];
        Random r = new Random(seed);
        for (int i = 0; i < n; i++) v[i] = (float) (r.nextGaussian() * 0.3);
        return Tensor.of(v, dims);
    }

    static String mhaConfig(int e, int h) {
        return "{\"module\":\"MultiheadAttention\",\"embed_dim\":" + e + ",\"num_heads\":" + h + "}";
    }

    static Map<String, Tensor> mhaWeights() {
        Map<String, Tensor> m = new LinkedHashMap<>();
        m.put("in_proj_weight", random(1, 3 * E, E));
        m.put("in_proj_bias", random(2, 3 * E));
        m.put("out_proj.weight", random(3, E, E));
        m.put("out_proj.bias", random(4, E));
        return m;
    }

    Path write(String name, byte[] b) throws IOException {
        return Files.write(in.resolve(name), b);
    }

    Path model(String name, Map<String, Tensor> sd, String config) {
        Path p = in.resolve(name);
        SafeTensors.write(p, sd, config == null ? Map.of() : Map.of("config", config));
        return p;
    }

    Path npy(String name, Tensor t) {
        Path p = in.resolve(name);
        Npy.write(p, t);
        return p;
    }

    static byte[] npyBytes(String dict, byte[] data) {
        int total = (10 + dict.length() + 1 + 63) / 64 * 64;
        ByteBuffer b = ByteBuffer.allocate(total + data.length).order(ByteOrder.LITTLE_ENDIAN);
        b.put(new byte[] {(byte) 0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0}).putShort((short) (total - 10));
        b.put(dict.getBytes(StandardCharsets.ISO_8859_1));
        while (b.position() < total - 1) b.put((byte) ' ');
        b.put((byte) '\n').put(data);
        return b.array();
    }

    static byte[] stBytes(String json, byte[] data) {
        byte[] h = json.getBytes(StandardCharsets.UTF_8);
        int padded = (h.length + 7) / 8 * 8;
        ByteBuffer b = ByteBuffer.allocate(8 + padded + data.length).order(ByteOrder.LITTLE_ENDIAN);
        b.putLong(padded).put(h);
        while (b.position() < 8 + padded) b.put((byte) ' ');
        return b.put(data).array();
    }

    static byte[] zip(Map<String, byte[]> entries, boolean deflate) throws IOException {
        ByteArrayOutputStream bo = new ByteArrayOutputStream();
        try (ZipOutputStream z = new ZipOutputStream(bo)) {
            z.setLevel(9);
            for (var e : entries.entrySet()) {
                ZipEntry ze = new ZipEntry(e.getKey());
                if (!deflate) {
                    java.util.zip.CRC32 crc = new java.util.zip.CRC32();
                    crc.update(e.getValue());
                    ze.setMethod(ZipEntry.STORED);
                    ze.setSize(e.getValue().length);
                    ze.setCrc(crc.getValue());
                }
                z.putNextEntry(ze);
                z.write(e.getValue());
                z.closeEntry();
            }
        }
        return bo.toByteArray();
    }

    static byte[] half(byte[] b) {
        return java.util.Arrays.copyOf(b, b.length / 2);
    }

    /** {@code attn run} with the good model and the given extra args; output to out/NAME/y.npy. */
    void run(String name, String... args) throws IOException {
        Path o = Files.createDirectories(out.resolve(name));
        List<String> a = new ArrayList<>(List.of(name, "run"));
        a.addAll(List.of(args));
        a.addAll(List.of("--output", o.resolve("y.npy").toString()));
        cases.add(a.toArray(String[]::new));
    }

    void inspect(String name, Path file) {
        cases.add(new String[] {name + "/inspect", "inspect", file.toString()});
    }

    /** Builds the corpus: files under in/, cases in {@link #cases}. */
    void corpus() throws IOException {
        Path good = model("good.safetensors", mhaWeights(), mhaConfig(E, H));
        String m = good.toString();
        Path x = npy("x.npy", random(5, 2, 3, E));
        String xs = x.toString();
        byte[] goodNpy = Files.readAllBytes(x), goodSt = Files.readAllBytes(good);
        byte[] f6 = new byte[24];

        // .npy inputs
        Map<String, byte[]> npys = new LinkedHashMap<>();
        npys.put("empty.npy", new byte[0]);
        npys.put("truncated.npy", half(goodNpy));
        npys.put("header_only.npy", java.util.Arrays.copyOf(goodNpy, 128));
        npys.put(
                "huge_shape.npy",
                npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000, 1000000000, 8), }", f6));
        npys.put("neg_dim.npy", npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (-2, 3, 8), }", f6));
        npys.put(
                "overflow_dim.npy",
                npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999, 8), }", f6));
        npys.put("complex_dtype.npy", npyBytes("{'descr': '<c8', 'fortran_order': False, 'shape': (3, 8), }", f6));
        npys.put("object_dtype.npy", npyBytes("{'descr': '|O', 'fortran_order': False, 'shape': (3, 8), }", f6));
        npys.put("lying_size.npy", npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (300, 8), }", f6));
        ByteBuffer hh = ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN);
        hh.put(new byte[] {(byte) 0x93, 'N', 'U', 'M', 'P', 'Y', 2, 0}).putInt(Integer.MAX_VALUE);
        npys.put("huge_header.npy", hh.array());
        npys.put("not_npy.npy", "this is not an array\n".getBytes(StandardCharsets.UTF_8));
        for (var e : npys.entrySet()) {
            Path p = write(e.getKey(), e.getValue());
            run("input-" + e.getKey(), "--model", m, "--input", p.toString());
            inspect("input-" + e.getKey(), p);
        }
        run(
                "input-wrong-width",
                "--model",
                m,
                "--input",
                npy("w7.npy", random(6, 2, 3, 7)).toString());
        run(
                "input-rank4",
                "--model",
                m,
                "--input",
                npy("r4.npy", random(6, 1, 2, 3, E)).toString());
        float[] nan = random(7, 1, 3, E).data().clone();
        nan[5] = Float.NaN;
        run(
                "input-nan",
                "--model",
                m,
                "--input",
                npy("nan.npy", Tensor.of(nan, 1, 3, E)).toString());
        run(
                "memory-wrong-width",
                "--model",
                m,
                "--input",
                xs,
                "--memory",
                npy("m7.npy", random(8, 2, 4, 7)).toString());
        run(
                "key-padding-wrong-shape",
                "--model",
                m,
                "--input",
                xs,
                "--key-padding-mask",
                npy("kp.npy", Tensor.of(new float[10], 2, 5)).toString());
        run("input-missing", "--model", m, "--input", in.resolve("nope.npy").toString());
        run(
                "model-is-directory",
                "--model",
                Files.createDirectories(in.resolve("dir.safetensors")).toString(),
                "--input",
                xs);
        run(
                "input-dir-without-npy",
                "--model",
                m,
                "--input",
                Files.createDirectories(in.resolve("emptydir")).toString());

        // .npz inputs
        Map<String, byte[]> npzs = new LinkedHashMap<>();
        npzs.put(
                "bomb.npz",
                zip(
                        Map.of(
                                "a.npy",
                                npyBytes(
                                        "{'descr': '<f4', 'fortran_order': False, 'shape': (16000000, 8), }",
                                        new byte[16_000_000 * 8 / 4])),
                        true));
        // an honest header over 80 MB of zeros, deflated to ~80 KB: refused from its header (ratio over 100:1 beyond 64
        // MB)
        ByteArrayOutputStream honest = new ByteArrayOutputStream();
        try (ZipOutputStream z = new ZipOutputStream(honest)) {
            z.putNextEntry(new ZipEntry("a.npy"));
            z.write(npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (20000000,), }", new byte[0]));
            byte[] zeros = new byte[1 << 20];
            for (int k = 0; k < 80_000_000 / zeros.length; k++) z.write(zeros);
            z.write(zeros, 0, 80_000_000 % zeros.length);
            z.closeEntry();
        }
        npzs.put("honest_bomb.npz", honest.toByteArray());
        npzs.put("not_zip.npz", "PK garbage".getBytes(StandardCharsets.UTF_8));
        npzs.put("truncated.npz", half(zip(Map.of("a.npy", goodNpy), false)));
        npzs.put("two_arrays.npz", zip(new LinkedHashMap<>(Map.of("a.npy", goodNpy, "b.npy", goodNpy)), false));
        npzs.put("txt_entry.npz", zip(Map.of("a.txt", goodNpy), false));
        for (var e : npzs.entrySet()) {
            Path p = write(e.getKey(), e.getValue());
            run("input-" + e.getKey(), "--model", m, "--input", p.toString());
            if (!e.getKey().equals("two_arrays.npz")) inspect("input-" + e.getKey(), p); // a valid archive
        }

        // .safetensors models
        Map<String, byte[]> sts = new LinkedHashMap<>();
        sts.put("empty.safetensors", new byte[0]);
        sts.put("truncated.safetensors", half(goodSt));
        ByteBuffer big = ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN).putLong(1L << 62);
        sts.put("huge_header_len.safetensors", big.array());
        sts.put(
                "huge_shape.safetensors",
                stBytes(
                        "{\"in_proj_weight\":{\"dtype\":\"F32\",\"shape\":[1099511627776,1099511627776],\"data_offsets\":[0,24]}}",
                        f6));
        sts.put(
                "overlap.safetensors",
                stBytes(
                        "{\"a\":{\"dtype\":\"F32\",\"shape\":[6],\"data_offsets\":[0,24]},\"b\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[12,24]}}",
                        f6));
        sts.put(
                "out_of_range.safetensors",
                stBytes("{\"a\":{\"dtype\":\"F32\",\"shape\":[6],\"data_offsets\":[0,2400]}}", f6));
        sts.put(
                "bad_dtype.safetensors",
                stBytes("{\"a\":{\"dtype\":\"C64\",\"shape\":[3],\"data_offsets\":[0,24]}}", f6));
        sts.put(
                "duplicate.safetensors",
                stBytes(
                        "{\"a\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,12]},\"a\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[12,24]}}",
                        f6));
        // a name with a line break and a terminal escape, quoted by the error: still one line (a Jazzer finding)
        sts.put(
                "newline_name.safetensors",
                stBytes("{\"a\\nb\\u001b[2J\":{\"dtype\":\"C64\",\"shape\":[3],\"data_offsets\":[0,24]}}", f6));
        sts.put("deep_json.safetensors", stBytes("[".repeat(100_000), f6));
        StringBuilder many = new StringBuilder("{");
        for (int k = 0; k < 40_000; k++)
            many.append(k == 0 ? "" : ",")
                    .append("\"t")
                    .append(k)
                    .append("\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[")
                    .append(4 * k)
                    .append(',')
                    .append(4 * k + 4)
                    .append("]}");
        // a real 2.6 MB header: over what a 256 MiB heap may parse (a 128th), refused before parsing
        sts.put("many_tensors.safetensors", stBytes(many.append('}').toString(), new byte[4 * 40_000]));
        byte[] nonUtf8 = stBytes("{\"a?\":{\"dtype\":\"F32\",\"shape\":[6],\"data_offsets\":[0,24]}}", f6);
        nonUtf8[11] = (byte) 0xff;
        sts.put("non_utf8.safetensors", nonUtf8);
        for (var e : sts.entrySet()) {
            Path p = write(e.getKey(), e.getValue());
            run("model-" + e.getKey(), "--model", p.toString(), "--input", xs);
            inspect("model-" + e.getKey(), p);
        }
        Map<String, Tensor> w = mhaWeights();
        w.remove("out_proj.bias");
        run(
                "model-missing-tensor",
                "--model",
                model("missing.safetensors", w, mhaConfig(E, H)).toString(),
                "--input",
                xs);
        w = mhaWeights();
        w.put("extra.weight", random(9, 2));
        run(
                "model-extra-tensor",
                "--model",
                model("extra.safetensors", w, mhaConfig(E, H)).toString(),
                "--input",
                xs);
        w = mhaWeights();
        w.put("out_proj.weight", random(9, E, E + 1));
        run(
                "model-wrong-shape",
                "--model",
                model("shape.safetensors", w, mhaConfig(E, H)).toString(),
                "--input",
                xs);
        w = mhaWeights();
        w.get("in_proj_bias").data()[3] = Float.POSITIVE_INFINITY;
        run(
                "model-inf-weight",
                "--model",
                model("inf.safetensors", w, mhaConfig(E, H)).toString(),
                "--input",
                xs);
        run(
                "model-no-config",
                "--model",
                model("nocfg.safetensors", mhaWeights(), null).toString(),
                "--input",
                xs);
        run(
                "model-config-metadata-garbage",
                "--model",
                model("garbage.safetensors", mhaWeights(), "{not json").toString(),
                "--input",
                xs);

        // config JSON
        Map<String, byte[]> cfgs = new LinkedHashMap<>();
        cfgs.put("not_divisible.json", mhaConfig(E, 3).getBytes(StandardCharsets.UTF_8));
        cfgs.put("unknown_module.json", "{\"module\":\"Mamba\"}".getBytes(StandardCharsets.UTF_8));
        cfgs.put(
                "unknown_key.json",
                "{\"module\":\"MultiheadAttention\",\"embed_dim\":8,\"num_heads\":2,\"kdim\":4}"
                        .getBytes(StandardCharsets.UTF_8));
        cfgs.put("negative.json", mhaConfig(-8, 2).getBytes(StandardCharsets.UTF_8));
        cfgs.put("truncated.json", "{\"module\":\"MultiheadAttention\",\"embed_".getBytes(StandardCharsets.UTF_8));
        cfgs.put("non_utf8.json", "{\"module\":\"Multihead\u00e9\"}".getBytes(StandardCharsets.ISO_8859_1));
        cfgs.put("array.json", "[1, 2]".getBytes(StandardCharsets.UTF_8));
        cfgs.put("deep.json", "[".repeat(50_000).getBytes(StandardCharsets.UTF_8));
        cfgs.put("huge_dim.json", mhaConfig(1_000_000_000, 1).getBytes(StandardCharsets.UTF_8));
        cfgs.put("wrong_width.json", mhaConfig(16, 2).getBytes(StandardCharsets.UTF_8));
        for (var e : cfgs.entrySet()) {
            Path p = write(e.getKey(), e.getValue());
            run("config-" + e.getKey(), "--model", m, "--config", p.toString(), "--input", xs);
            if (!e.getKey().equals("wrong_width.json")) inspect("config-" + e.getKey(), p); // valid on its own
        }

        // word vectors for --text
        Map<String, byte[]> vecs = new LinkedHashMap<>();
        vecs.put("non_utf8.txt", "the 0.1 0.2\ncaf\u00e9 1 2\n".getBytes(StandardCharsets.ISO_8859_1));
        vecs.put("ragged.txt", "the 1 2 3 4 5 6 7 8\nsky 1 2\n".getBytes(StandardCharsets.UTF_8));
        vecs.put("lying_count.txt", "99999999999 99999999\nthe 1 2\n".getBytes(StandardCharsets.UTF_8));
        vecs.put("empty.txt", new byte[0]);
        vecs.put("wrong_dim.txt", "the 1 2 3\nsky 4 5 6\n".getBytes(StandardCharsets.UTF_8));
        vecs.put("nan.txt", "the 1 2 3 4 5 6 7 NaN\nsky 1 2 3 4 5 6 7 8\n".getBytes(StandardCharsets.UTF_8));
        for (var e : vecs.entrySet()) {
            Path p = write(e.getKey(), e.getValue());
            run("vectors-" + e.getKey(), "--model", m, "--text", "the sky", "--vectors", p.toString());
            if (!e.getKey().startsWith("wrong_dim") && !e.getKey().startsWith("nan"))
                inspect("vectors-" + e.getKey(), p);
        }

        // not regular files: a named pipe would block a reader forever, /dev/zero is endless
        Path fifo = in.resolve("pipe.npy");
        try {
            if (new ProcessBuilder("mkfifo", fifo.toString()).start().waitFor() == 0) {
                run("input-named-pipe", "--model", m, "--input", fifo.toString());
                run("model-named-pipe", "--model", fifo.toString(), "--input", xs);
                inspect("named-pipe", fifo);
            }
        } catch (IOException | InterruptedException e) {
            // no mkfifo here: the /dev/zero cases below still cover special files
        }
        if (Files.exists(Path.of("/dev/zero"))) {
            run("input-dev-zero", "--model", m, "--input", "/dev/zero");
            run("vectors-dev-zero", "--model", m, "--text", "the sky", "--vectors", "/dev/zero");
            run("config-dev-zero", "--model", m, "--config", "/dev/zero", "--input", xs);
        }

        // attn generate: vocabulary files, and weights that are not a decoder-only LM
        Map<String, byte[]> vocabs = new LinkedHashMap<>();
        vocabs.put("vocab_non_utf8.txt", "<unk>\n<bos>\n<eos>\ncaf\u00e9\n".getBytes(StandardCharsets.ISO_8859_1));
        vocabs.put("vocab_empty.txt", new byte[0]);
        vocabs.put("vocab_no_specials.txt", "the\nsky\n".getBytes(StandardCharsets.UTF_8));
        vocabs.put("vocab_ok.txt", "<unk>\n<bos>\n<eos>\nthe\nsky\n".getBytes(StandardCharsets.UTF_8));
        for (var e : vocabs.entrySet()) {
            Path p = write(e.getKey(), e.getValue());
            cases.add(new String[] {
                "generate-" + e.getKey(), "generate", "--model", m, "--vocab", p.toString(), "--prompt", "the"
            });
        }
        if (Files.exists(fifo))
            cases.add(new String[] {
                "generate-vocab-pipe", "generate", "--model", m, "--vocab", fifo.toString(), "--prompt", "the"
            });
        if (Files.exists(Path.of("/dev/zero")))
            cases.add(new String[] {
                "generate-vocab-dev-zero", "generate", "--model", m, "--vocab", "/dev/zero", "--prompt", "the"
            });

        // outputs that cannot be written: nothing may be left behind
        run(
                "output-parent-missing",
                "--model",
                m,
                "--input",
                xs,
                "--attention-weights",
                out.resolve("missing-dir/w.npy").toString());
        inspect("unknown-extension", write("x.bin", goodNpy));
        inspect("directory", Files.createDirectories(in.resolve("d.npy")));
    }

    // ---------------------------------------------------------------- checks

    record Outcome(String name, int code, long cpuMillis, long millis, String err, String out) {}

    /** stderr lines that are not the error: the device line, warnings, the JDK's incubator notice. */
    static List<String> errorLines(String err) {
        return err.lines()
                .filter(l -> !l.isBlank())
                .filter(l -> !l.startsWith("attn: device "))
                .filter(l -> !l.startsWith("attn: warning: "))
                .filter(l -> !l.startsWith("WARNING: Using incubator modules"))
                .toList();
    }

    List<Outcome> runAll() throws Exception {
        Path caseFile = dir.resolve("cases.tsv"), results = dir.resolve("results.tsv");
        Files.write(caseFile, cases.stream().map(c -> String.join("\t", c)).toList(), StandardCharsets.UTF_8);
        Process p = childJvm(HostileRunner.class.getName(), caseFile.toString(), results.toString());
        String log = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(120, TimeUnit.SECONDS), "runner timed out:\n" + log);
        assertEquals(0, p.exitValue(), "runner failed:\n" + log);
        List<Outcome> r = new ArrayList<>();
        for (String line : Files.readAllLines(results, StandardCharsets.UTF_8)) {
            String[] f = line.split("\t", -1);
            Base64.Decoder d = Base64.getDecoder();
            r.add(new Outcome(
                    f[0],
                    Integer.parseInt(f[1]),
                    Long.parseLong(f[2]),
                    Long.parseLong(f[3]),
                    new String(d.decode(f[4]), StandardCharsets.UTF_8),
                    new String(d.decode(f[5]), StandardCharsets.UTF_8)));
        }
        return r;
    }

    Process childJvm(String mainClass, String... args) throws IOException {
        return childJvm(null, mainClass, args);
    }

    /** A JVM like the launcher's, with a 256 MiB heap; stderr to {@code errFile} when given, else merged. */
    Process childJvm(Path errFile, String mainClass, String... args) throws IOException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> cmd = new ArrayList<>(List.of(
                java,
                "-Xmx256m",
                "-Xss1m", // the default thread stack: deep-nesting inputs must not need more
                "--add-modules",
                "jdk.incubator.vector",
                "--enable-native-access=ALL-UNNAMED",
                "-Djava.io.tmpdir=" + tmp,
                "-cp",
                System.getProperty("java.class.path"),
                mainClass));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd);
        if (errFile == null) pb.redirectErrorStream(true);
        else pb.redirectError(errFile.toFile());
        pb.environment().remove("ATTN_DEVICE");
        return pb.start();
    }

    static String clip(String s) {
        return s.length() <= 400 ? s : s.substring(0, 400) + "...";
    }

    static List<Path> filesUnder(Path p) throws IOException {
        try (Stream<Path> s = Files.walk(p)) {
            return s.filter(Files::isRegularFile).toList();
        }
    }

    @Test
    void everyHostileFileGetsOneLineAndLeavesNothing() throws Exception {
        corpus();
        assertTrue(cases.size() >= 40, "corpus has " + cases.size() + " cases");
        List<Path> inputsBefore = filesUnder(in);
        List<Outcome> results = runAll();
        assertEquals(cases.size(), results.size());
        List<String> problems = new ArrayList<>();
        // a case may take 2 s of the JVM's CPU time, or 10x the median case's: a hostile file that makes attn do real
        // work (a size that lies, a bomb) takes far more than either. CPU time, not wall time: CI shares its cores
        // (a 0-byte file took 2.8 s of wall time at load average 145), and a wall limit of 30 s still catches a hang.
        long[] sorted = results.stream().mapToLong(Outcome::cpuMillis).sorted().toArray();
        long limit = Math.max(2000, 10 * sorted[sorted.length / 2]);
        for (Outcome o : results) {
            List<String> lines = errorLines(o.err());
            String what = o.name() + " -> exit " + o.code() + ", " + o.cpuMillis() + " ms CPU, " + o.millis()
                    + " ms wall, stderr: "
                    + clip(o.err().strip());
            if (o.code() <= 0) problems.add(what + " [exit code]");
            if (lines.size() != 1) problems.add(what + " [" + lines.size() + " error lines]");
            if (o.err().contains("Exception")
                    || o.err().contains("\tat ")
                    || o.err().contains("Error:")) problems.add(what + " [stack trace or exception name]");
            if (lines.size() == 1 && !lines.get(0).startsWith("attn: ")) problems.add(what + " [not an attn: line]");
            if (o.cpuMillis() > limit) problems.add(what + " [over " + limit + " ms of CPU]");
            if (o.millis() > 30_000) problems.add(what + " [over 30 s of wall time]");
        }
        // a few cases must also say the right thing (exit code, the file and the problem)
        Map<String, String> says = new LinkedHashMap<>();
        says.put("memory-wrong-width", "3|m7.npy: memory has shape (2, 4, 7) but the model width is 8");
        says.put("key-padding-wrong-shape", "3|kp.npy: key_padding_mask has shape (2, 5): expected (B, S) = (2, 3)");
        says.put("model-missing-tensor", "3|missing.safetensors: missing tensor 'out_proj.bias' (expected shape (8))");
        says.put("model-wrong-shape", "3|tensor 'out_proj.weight' has shape (8, 9), expected (8, 8)");
        says.put("model-extra-tensor", "3|unexpected tensor(s) not used by the model: extra.weight");
        says.put("config-not_divisible.json", "3|embed_dim 8 is not divisible by num_heads 3");
        says.put("input-nan", "6|nan.npy: input holds NaN at [0, 0, 5]: inputs must be finite");
        says.put("model-inf-weight", "6|tensor 'in_proj_bias' holds Infinity at [3]: weights must be finite");
        says.put("input-bomb.npz/inspect", "3|refusing a possible zip bomb");
        says.put("input-wrong-width", "3|w7.npy: input has shape (2, 3, 7) but the model width is 8");
        says.put("model-newline_name.safetensors", "3|tensor 'a\\nb\\u001b[2J' has unsupported dtype 'C64'");
        for (Outcome o : results) {
            String want = says.remove(o.name());
            if (want == null) continue;
            String[] w = want.split("\\|", 2);
            if (o.code() != Integer.parseInt(w[0]) || !o.err().contains(w[1]))
                problems.add(o.name() + " -> exit " + o.code() + ", "
                        + clip(o.err().strip()) + " [expected exit " + w[0] + " and \"" + w[1] + "\"]");
        }
        assertEquals(Map.of(), says, "cases not run");
        assertEquals(inputsBefore, filesUnder(in), "inputs changed");
        assertTrue(problems.isEmpty(), String.join("\n", problems));
        assertEquals(List.of(), filesUnder(out), "outputs or temporary files left");
        assertEquals(List.of(), filesUnder(tmp), "temporary files left");
        // print the table docs/robustness.md summarises
        for (Outcome o : results) System.out.println(o.name() + " | " + o.code() + " | " + errorLines(o.err()));
    }

    @Test
    void separateJvmPerCase() throws Exception {
        corpus();
        // the JVM's own start-up on this machine now (a loaded 2-core machine takes seconds): attn --version
        long b0 = System.nanoTime();
        Process v = childJvm(dir.resolve("version.txt"), Main.class.getName(), "--version");
        v.getInputStream().readAllBytes();
        assertTrue(v.waitFor(30, TimeUnit.SECONDS), "attn --version");
        long startup = (System.nanoTime() - b0) / 1_000_000;
        for (String name : List.of("model-huge_shape.safetensors", "input-bomb.npz", "config-deep.json/inspect")) {
            String[] c =
                    cases.stream().filter(k -> k[0].equals(name)).findFirst().orElseThrow();
            long t0 = System.nanoTime();
            Path errFile = dir.resolve("stderr.txt");
            Process p = childJvm(errFile, Main.class.getName(), java.util.Arrays.copyOfRange(c, 1, c.length));
            String stdout = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(p.waitFor(30, TimeUnit.SECONDS), name);
            long ms = (System.nanoTime() - t0) / 1_000_000;
            String all = Files.readString(errFile);
            assertEquals("", stdout, name + ": nothing on stdout for a bad file");
            assertTrue(p.exitValue() == 3, name + ": exit " + p.exitValue() + "\n" + all);
            assertEquals(1, errorLines(all).size(), name + ":\n" + all);
            assertFalse(all.contains("Exception") || all.contains("\tat "), name + ":\n" + all);
            // 2 s for the work beyond twice the JVM start-up measured above (4 s at least)
            long limit = Math.max(4000, 2 * startup + 2000);
            assertTrue(ms < limit, name + ": " + ms + " ms wall (limit " + limit + " ms, start-up " + startup + " ms)");
        }
        assertEquals(List.of(), filesUnder(out), "outputs or temporary files left");
        assertEquals(List.of(), filesUnder(tmp), "temporary files left");
    }
}
