package io.attn.kernels;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The engine's CUDA kernels as PTX text, compiled from {@code kernels/src/main/cuda/<name>.cu} by {@code
 * kernels/build-ptx.sh} and committed as resources {@code io/attn/kernels/<name>.ptx}, so that building the engine
 * needs no CUDA compiler. The driver JIT-compiles the PTX (ISA 9.0, target sm_75) for the GPU it runs on.
 *
 * <p>This class touches no native code: it only reads resources.
 */
public final class Kernels {
    private Kernels() {}

    /** The kernel files, one per op, without extension. */
    public static final List<String> NAMES = List.of(
            "add",
            "attention",
            "bias_act",
            "cache",
            "concat",
            "embedding",
            "gemm",
            "heads",
            "layer_norm",
            "mean",
            "positional_encoding",
            "softmax");

    /** The {@code extern "C"} entry points each file defines. */
    public static final Map<String, List<String>> ENTRIES = Map.ofEntries(
            Map.entry("add", List.of("add_f32", "scale_f32")),
            Map.entry("attention", List.of("attention_f32")),
            Map.entry("bias_act", List.of("bias_act_f32")),
            Map.entry("cache", List.of("cache_write_f32")),
            Map.entry("concat", List.of("concat_f32")),
            Map.entry("embedding", List.of("embedding_f32")),
            Map.entry("gemm", List.of("gemm_f32")),
            Map.entry("heads", List.of("split_heads_f32", "merge_heads_f32")),
            Map.entry("layer_norm", List.of("layer_norm_f32")),
            Map.entry("mean", List.of("mean_f32")),
            Map.entry("positional_encoding", List.of("positional_encoding_f32")),
            Map.entry("softmax", List.of("softmax_f32")));

    /**
     * The PTX of kernel file {@code name} as bytes ending in one NUL, ready for {@code cuModuleLoadData}.
     *
     * @throws IllegalArgumentException for a name not in {@link #NAMES}
     */
    public static byte[] ptx(String name) {
        if (!NAMES.contains(name))
            throw new IllegalArgumentException("unknown kernel file '" + name + "': expected one of " + NAMES);
        String res = name + ".ptx";
        try (InputStream in = Kernels.class.getResourceAsStream(res)) {
            if (in == null) throw new IllegalStateException("PTX resource io/attn/kernels/" + res + " is missing");
            byte[] text = in.readAllBytes();
            byte[] z = new byte[text.length + 1];
            System.arraycopy(text, 0, z, 0, text.length);
            return z; // z[text.length] == 0
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read PTX resource io/attn/kernels/" + res, e);
        }
    }

    private static final Pattern PARAM = Pattern.compile("\\.param\\s+\\.(\\w+)\\s+(\\w+)_param_(\\d+)");

    /**
     * The PTX parameter types of entry point {@code entry} in file {@code name}, in order: {@code u64} for pointers and
     * 64-bit integers, {@code u32} for ints, {@code f32} for floats. The host checks every launch against this, so a
     * kernel signature changed without its caller fails loudly instead of reading garbage.
     */
    public static List<String> params(String name, String entry) {
        byte[] z = ptx(name);
        String text = new String(z, 0, z.length - 1, StandardCharsets.US_ASCII);
        List<String> types = new ArrayList<>();
        Matcher m = PARAM.matcher(text);
        while (m.find()) {
            if (!m.group(2).equals(entry)) continue;
            if (Integer.parseInt(m.group(3)) != types.size())
                throw new IllegalStateException("PTX parameters of " + entry + " out of order");
            types.add(m.group(1));
        }
        if (types.isEmpty() && !text.contains(".entry " + entry + "("))
            throw new IllegalArgumentException("no entry " + entry + " in " + name + ".ptx");
        return List.copyOf(types);
    }
}
