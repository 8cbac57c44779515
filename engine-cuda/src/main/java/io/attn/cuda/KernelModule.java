package io.attn.cuda;

import static io.attn.cuda.Cuda.check;

import io.attn.kernels.Kernels;
import java.util.HashMap;
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
        return f;
    }

    /** Loads every kernel file now (so that a JIT failure shows at start-up, not in the first request). */
    synchronized void loadAll() {
        for (var e : Kernels.ENTRIES.entrySet()) for (String entry : e.getValue()) function(e.getKey(), entry);
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
