package io.attn.cli;

import io.attn.AttnException;
import io.attn.io.Json;
import io.attn.io.Npy;
import io.attn.io.Npz;
import io.attn.io.SafeTensors;
import io.attn.io.WordVectors;
import io.attn.nn.ModelConfig;
import io.attn.tensor.Tensor;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code attn inspect FILE}: what a file holds. The file is first read and validated in full by the same reader {@code
 * attn run} uses (so a bad file fails here exactly as it would there), then described: tensor names, dtypes and shapes
 * and the metadata / config of a safetensors file; the header of an .npy; the arrays of an .npz; the size of a
 * word-vector file; a config JSON as the engine understands it.
 */
@Command(name = "inspect", description = "Describe a .safetensors, .npy, .npz, config .json or word-vector file.")
final class InspectCommand implements Callable<Integer> {
    @Parameters(paramLabel = "FILE")
    Path file;

    @Option(names = "--verbose", description = "Stack traces for errors.")
    boolean verbose;

    @Override
    public Integer call() throws IOException {
        if (Files.isDirectory(file)) throw AttnException.badInput(file + ": is a directory, not a file");
        if (!Files.exists(file)) throw AttnException.badInput(file + ": no such file");
        if (!Files.isRegularFile(file))
            throw AttnException.badInput(file + ": not a regular file (a pipe, socket or device): give a file");
        String n = file.getFileName().toString().toLowerCase(java.util.Locale.ROOT);
        if (n.endsWith(".safetensors")) safetensors();
        else if (n.endsWith(".npy")) npy();
        else if (n.endsWith(".npz")) npz();
        else if (n.endsWith(".json")) config();
        else if (n.endsWith(".txt") || n.endsWith(".vec")) vectors();
        else
            throw AttnException.badInput(
                    file + ": unknown file type (expected .safetensors, .npy, .npz, .json, .txt or .vec)");
        return 0;
    }

    private void safetensors() throws IOException {
        SafeTensors.File f = SafeTensors.read(file); // validates offsets, sizes, dtypes
        Map<String, Object> header = rawSafetensorsHeader();
        String cfgText = f.metadata().get("config");
        Object cfg = cfgText == null ? null : describeConfig(cfgText, file + " (metadata \"config\")");
        System.out.println(file + ": safetensors, " + f.tensors().size() + " tensors");
        long total = 0;
        for (var e : f.tensors().entrySet()) {
            Object info = header.get(e.getKey());
            String dtype = info instanceof Map<?, ?> m ? String.valueOf(m.get("dtype")) : "?";
            System.out.printf(
                    "  %-48s %-5s %s%n", e.getKey(), dtype, e.getValue().shape());
            total += e.getValue().size();
        }
        System.out.println("  parameters: " + total);
        for (var m : f.metadata().entrySet()) {
            if (!m.getKey().equals("config")) {
                System.out.println("  metadata " + m.getKey() + " = " + m.getValue());
                continue;
            }
            System.out.println("  config: " + m.getValue());
            System.out.println("  understood as: " + cfg);
        }
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

    private void npy() throws IOException {
        Tensor t = Npy.read(file); // validates header against the file size
        byte[] head = new byte[12];
        try (var in = Files.newInputStream(file)) {
            in.readNBytes(head, 0, 12);
        }
        ByteBuffer b = ByteBuffer.wrap(head).order(ByteOrder.LITTLE_ENDIAN);
        int major = head[6];
        int hlen = major == 1 ? b.getShort(8) & 0xffff : b.getInt(8);
        int off = major == 1 ? 10 : 12;
        byte[] all = new byte[off + hlen];
        try (var in = Files.newInputStream(file)) {
            in.readNBytes(all, 0, all.length);
        }
        String dict = new String(all, off, hlen, major == 3 ? StandardCharsets.UTF_8 : StandardCharsets.ISO_8859_1);
        System.out.println(file + ": npy version " + major + "." + head[7]);
        System.out.println("  header: " + dict.trim());
        System.out.println("  shape " + t.shape() + ", " + t.size() + " elements (read as float32)");
        stats(t);
    }

    private void npz() {
        Map<String, Tensor> arrays = Npz.read(file);
        System.out.println(file + ": npz, " + arrays.size() + " arrays");
        for (var e : arrays.entrySet())
            System.out.printf("  %-40s %s%n", e.getKey(), e.getValue().shape());
    }

    @SuppressWarnings("unchecked")
    private void config() {
        Object json = Json.read(file); // UTF-8, size cap, nesting cap
        if (!(json instanceof Map<?, ?> m)) throw AttnException.badInput(file + ": config must be a JSON object");
        Object c = understand((Map<String, Object>) m, file.toString());
        System.out.println(file + ": config " + Json.write(json));
        System.out.println("  understood as: " + c);
    }

    /** A config map as the engine understands it: a decoder-only LM config or a module config. */
    private static Object understand(Map<String, Object> m, String source) {
        return io.attn.nn.DecoderOnlyConfig.MODULE.equals(m.get("module"))
                ? io.attn.nn.DecoderOnlyConfig.parse(m, source)
                : ModelConfig.parse(m, source);
    }

    /** Parses and checks a config (nothing printed, so a bad one fails before any output). */
    @SuppressWarnings("unchecked")
    private static Object describeConfig(String json, String source) {
        if (!(Json.parse(json, source) instanceof Map<?, ?> m))
            throw AttnException.badInput(source + ": config must be a JSON object");
        return understand((Map<String, Object>) m, source);
    }

    private void vectors() {
        WordVectors wv = WordVectors.load(file);
        System.out.println(file + ": word vectors, " + wv.size() + " words, dim " + wv.dim()
                + (wv.duplicates() > 0 ? ", " + wv.duplicates() + " duplicate words ignored (first kept)" : ""));
    }

    private static void stats(Tensor t) {
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
        System.out.printf(
                java.util.Locale.ROOT,
                "  min %.6g, max %.6g, mean %.6g%s%n",
                n == 0 ? Double.NaN : min,
                n == 0 ? Double.NaN : max,
                n == 0 ? Double.NaN : sum / n,
                nonFinite > 0 ? ", " + nonFinite + " NaN/Inf" : "");
    }
}
