package io.attn.cuda;

import static io.attn.cuda.Cuda.check;

import io.attn.AttnException;
import io.attn.kernels.Kernels;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import jcuda.Pointer;
import jcuda.driver.CUfunction;
import jcuda.driver.CUjit_option;
import jcuda.driver.CUmodule;
import jcuda.driver.CUresult;
import jcuda.driver.JCudaDriver;
import jcuda.driver.JITOptions;

/**
 * Loads the engine's PTX (from the {@code kernels} module) into the current context, one {@code CUmodule} per kernel
 * file, on first use, and caches the {@code CUfunction} handles. The driver JIT-compiles the PTX for the device when
 * a module is loaded (and keeps its own on-disk cache); a JIT failure names the file and shows the JIT's log. Unloads every module on close; idempotent.
 */
final class KernelModule implements AutoCloseable {
    private final Map<String, CUmodule> modules = new HashMap<>();
    private final Map<String, CUfunction> functions = new HashMap<>();
    private final Map<String, List<String>> params = new HashMap<>();
    private boolean closed;

    /** The function {@code entry} of kernel file {@code file} (e.g. {@code "softmax", "softmax_f32"}). */
    synchronized CUfunction function(String file, String entry) {
        if (closed) throw new IllegalStateException("kernel module is closed");
        CUfunction f = functions.get(entry);
        if (f != null) return f;
        CUmodule m = modules.get(file);
        if (m == null) {
            m = load(file, Kernels.ptx(file));
            modules.put(file, m);
        }
        f = new CUfunction();
        check(JCudaDriver.cuModuleGetFunction(f, m, entry), "cuModuleGetFunction(" + file + "." + entry + ")");
        functions.put(entry, f);
        params.put(entry, Kernels.params(file, entry));
        return f;
    }

    static final int LOG_BYTES = 16 * 1024;

    /**
     * Loads one PTX image ({@code ptx}: NUL-terminated) with {@code cuModuleLoadDataEx}, the JIT's error and info log
     * buffers attached: a failure is an INTERNAL error naming {@code <file>.ptx} and carrying the JIT's error log
     * (e.g. "ptxas application ptx input, line 12; fatal : Unsupported .version 9.1; current version is '9.0'"),
     * on one line.
     */
    static CUmodule load(String file, byte[] ptx) {
        JITOptions o = new JITOptions();
        o.putInt(CUjit_option.CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, LOG_BYTES);
        o.putBytes(CUjit_option.CU_JIT_ERROR_LOG_BUFFER, new byte[LOG_BYTES]);
        o.putInt(CUjit_option.CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, LOG_BYTES);
        o.putBytes(CUjit_option.CU_JIT_INFO_LOG_BUFFER, new byte[LOG_BYTES]);
        CUmodule m = new CUmodule();
        int status = JCudaDriver.cuModuleLoadDataJIT(m, Pointer.to(ptx), o);
        if (status == CUresult.CUDA_SUCCESS) return m;
        String log = logText(o.getBytes(CUjit_option.CU_JIT_ERROR_LOG_BUFFER));
        String info = logText(o.getBytes(CUjit_option.CU_JIT_INFO_LOG_BUFFER));
        String detail = (log.isEmpty() ? "the JIT's error log is empty" : "JIT error log: " + log)
                + (info.isEmpty() ? "" : "; JIT info log: " + info);
        throw new AttnException(
                AttnException.Code.INTERNAL,
                "loading kernel file " + file + ".ptx failed (cuModuleLoadDataEx: " + CUresult.stringFor(status) + "); "
                        + detail);
    }

    /** The text of a NUL-terminated log buffer, its lines joined with " | " (errors are one line). */
    static String logText(byte[] buf) {
        if (buf == null) return "";
        int n = 0;
        while (n < buf.length && buf[n] != 0) n++;
        return new String(buf, 0, n, StandardCharsets.UTF_8)
                .lines()
                .map(String::strip)
                .filter(l -> !l.isEmpty())
                .collect(Collectors.joining(" | "));
    }

    /**
     * The function, after checking that {@code args} match the entry's PTX parameter list (count and types), so a
     * kernel whose C signature changed without its caller fails with a clear error instead of reading garbage.
     */
    synchronized CUfunction function(String file, String entry, KernelArgs args) {
        CUfunction f = function(file, entry);
        List<String> want = params.get(entry);
        if (!want.equals(args.types()))
            throw new AttnException(
                    AttnException.Code.INTERNAL,
                    "kernel " + entry + " takes (" + String.join(", ", want) + ") but the caller passes ("
                            + String.join(", ", args.types()) + ")");
        return f;
    }

    /**
     * Loads every kernel file the device can run (compute capability {@code capability} = major * 10 + minor, vs
     * {@link Kernels#minCapability}) now, so that a JIT failure shows at start-up, not in the first request.
     */
    synchronized void loadAll(int capability) {
        for (var e : Kernels.ENTRIES.entrySet())
            if (Kernels.minCapability(e.getKey()) <= capability)
                for (String entry : e.getValue()) function(e.getKey(), entry);
    }

    @Override
    public synchronized void close() {
        if (closed) return;
        closed = true;
        functions.clear();
        for (CUmodule m : modules.values()) JCudaDriver.cuModuleUnload(m);
        modules.clear();
    }
}
