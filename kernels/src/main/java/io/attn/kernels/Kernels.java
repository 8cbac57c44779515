package io.attn.kernels;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The engine's CUDA kernels as PTX text, compiled from {@code kernels/src/main/cuda/<name>.cu} by {@code
 * kernels/build-ptx.sh} and committed as resources {@code io/attn/kernels/<name>.ptx}, so that building the engine
 * needs no CUDA compiler. The driver JIT-compiles the PTX (ISA 9.0, target sm_75, or sm_80 for the files that need
 * tensor-core instructions: {@link #minCapability}) for the GPU it runs on.
 *
 * <p>This class touches no native code: it only reads resources.
 */
public final class Kernels {
    private Kernels() {}

    /** The kernel files, without extension: those the {@link Kernel} constants name, in their order. */
    public static final List<String> NAMES =
            Arrays.stream(Kernel.values()).map(Kernel::file).distinct().toList();

    /**
     * The lowest compute capability (major * 10 + minor) file {@code name} runs on: 75 for most, 80 for {@code
     * flash_attention_bf16}, {@code flash_attention_fa2} (bf16 / fp16 {@code mma.sync m16n8k16}, {@code ldmatrix},
     * {@code cp.async}) and {@code flash_attention_tf32} (tf32 {@code mma.sync m16n8k8}, {@code cp.async}). The host
     * loads a file only on a device that has
     * it; the host emulator compiles only the 75 ones (the others contain inline tensor-core PTX).
     */
    public static int minCapability(String name) {
        if (!NAMES.contains(name))
            throw new IllegalArgumentException("unknown kernel file '" + name + "': expected one of " + NAMES);
        return name.equals("flash_attention_bf16")
                        || name.equals("flash_attention_fa2")
                        || name.equals("flash_attention_tf32")
                ? 80
                : 75;
    }

    /** The nvcc virtual architecture file {@code name} is compiled for: {@code compute_75} or {@code compute_80}. */
    public static String arch(String name) {
        return "compute_" + minCapability(name);
    }

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
     * The PTX parameter types of {@code kernel}, in order: {@code u64} for pointers and 64-bit integers, {@code u32}
     * for ints, {@code f32} for floats. The host checks every launch against this, so a kernel signature changed
     * without its caller fails loudly instead of reading garbage.
     */
    public static List<String> params(Kernel kernel) {
        String name = kernel.file(), entry = kernel.entry();
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
