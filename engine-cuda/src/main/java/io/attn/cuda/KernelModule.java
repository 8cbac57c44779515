package io.attn.cuda;

import static io.attn.cuda.Cuda.check;

import io.attn.AttnException;
import io.attn.kernels.Kernel;
import io.attn.kernels.Kernels;
import java.nio.charset.StandardCharsets;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import jcuda.Pointer;
import jcuda.driver.CUfunction;
import jcuda.driver.CUfunction_attribute;
import jcuda.driver.CUjit_option;
import jcuda.driver.CUmodule;
import jcuda.driver.CUresult;
import jcuda.driver.JCudaDriver;
import jcuda.driver.JITOptions;

/**
 * Loads the engine's PTX (from the {@code kernels} module) into the current context, one {@code CUmodule} per kernel
 * file, on first use, and caches the {@code CUfunction} of each {@link Kernel}. The driver JIT-compiles the PTX for the
 * device when a module is loaded (and keeps its own on-disk cache); a JIT failure names the file and shows the JIT's
 * log. Unloads every module on close; idempotent.
 *
 * <p>Not synchronised itself: every method runs with the lock of the backend's stream held ({@link RawStream#lock}),
 * which the backend takes once per call, not once per launch.
 */
final class KernelModule implements AutoCloseable {
    private final RawStream stream;
    private final Map<String, CUmodule> modules = new HashMap<>();
    private final Map<Kernel, CUfunction> functions = new EnumMap<>(Kernel.class);
    private final Map<Kernel, List<String>> params = new EnumMap<>(Kernel.class);
    private final Map<Kernel, Integer> dynamicSmem = new EnumMap<>(Kernel.class); // the limit set per function
    private boolean closed;

    /** Kernels launched on {@code stream}, whose lock guards this cache. */
    KernelModule(RawStream stream) {
        this.stream = stream;
    }

    /** The function of {@code kernel}, its file loaded first if need be. */
    CUfunction function(Kernel kernel) {
        stream.checkLocked("kernel lookup");
        if (closed) throw new IllegalStateException("kernel module is closed");
        CUfunction f = functions.get(kernel);
        if (f != null) return f;
        CUmodule m = modules.get(kernel.file());
        if (m == null) {
            m = load(kernel.file(), Kernels.ptx(kernel.file()));
            modules.put(kernel.file(), m);
        }
        f = new CUfunction();
        check(
                JCudaDriver.cuModuleGetFunction(f, m, kernel.entry()),
                "cuModuleGetFunction(" + kernel.file() + "." + kernel.entry() + ")");
        functions.put(kernel, f);
        params.put(kernel, Kernels.params(kernel));
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
    CUfunction function(Kernel kernel, KernelArgs args) {
        CUfunction f = function(kernel);
        List<String> want = params.get(kernel);
        if (!want.equals(args.types()))
            throw new AttnException(
                    AttnException.Code.INTERNAL,
                    "kernel " + kernel.entry() + " takes (" + String.join(", ", want) + ") but the caller passes ("
                            + String.join(", ", args.types()) + ")");
        return f;
    }

    /** Dynamic shared memory a launch may use without raising the function's limit: 48 KiB. */
    static final int DEFAULT_DYNAMIC_SMEM = 48 * 1024;

    /**
     * The function, its arguments checked as {@link #function(Kernel, KernelArgs)} does, ready for a launch with {@code
     * smemBytes} of dynamic shared memory: above 48 KiB, {@code CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES} is set
     * (once per function and size; a failure, e.g. more than the device offers, is an error naming the kernel).
     */
    CUfunction function(Kernel kernel, KernelArgs args, int smemBytes) {
        CUfunction f = function(kernel, args);
        if (smemBytes > DEFAULT_DYNAMIC_SMEM && dynamicSmem.getOrDefault(kernel, 0) < smemBytes) {
            check(
                    JCudaDriver.cuFuncSetAttribute(
                            f, CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smemBytes),
                    "cuFuncSetAttribute(" + kernel.entry() + ", MAX_DYNAMIC_SHARED_SIZE_BYTES, " + smemBytes + ")");
            dynamicSmem.put(kernel, smemBytes);
        }
        return f;
    }

    /**
     * Loads every kernel file the device can run (compute capability {@code capability} = major * 10 + minor, vs
     * {@link Kernel#minCapability}) now, so that a JIT failure shows at start-up, not in the first request.
     */
    void loadAll(int capability) {
        for (Kernel k : Kernel.values()) if (k.minCapability() <= capability) function(k);
    }

    /** Unloads the modules; called with the stream lock held (the backend's close). */
    @Override
    public void close() {
        if (closed) return;
        closed = true;
        functions.clear();
        dynamicSmem.clear();
        for (CUmodule m : modules.values()) JCudaDriver.cuModuleUnload(m);
        modules.clear();
    }
}
