package io.attn.cuda;

import static io.attn.cuda.Cuda.check;

import io.attn.AttnException;
import io.attn.kernels.Kernels;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import jcuda.driver.CUfunction;
import jcuda.driver.CUmodule;
import jcuda.driver.JCudaDriver;

/**
 * Loads the engine's PTX (from the {@code kernels} module) into the current context, one {@code CUmodule} per kernel
 * file, on first use, and caches the {@code CUfunction} handles. The driver JIT-compiles the PTX for the device when
 * a module is loaded (and keeps its own on-disk cache). Unloads every module on close; idempotent.
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
            m = new CUmodule();
            check(JCudaDriver.cuModuleLoadData(m, Kernels.ptx(file)), "cuModuleLoadData(" + file + ".ptx)");
            modules.put(file, m);
        }
        f = new CUfunction();
        check(JCudaDriver.cuModuleGetFunction(f, m, entry), "cuModuleGetFunction(" + file + "." + entry + ")");
        functions.put(entry, f);
        params.put(entry, Kernels.params(file, entry));
        return f;
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
