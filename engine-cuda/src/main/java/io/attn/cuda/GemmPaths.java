package io.attn.cuda;

import io.attn.AttnException;
import io.attn.engine.Precision;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Chooses the GEMM implementation. Option {@code gemm} ({@code BackendOptions.extra}): {@code auto} (default) tries
 * cuBLAS through FFM ({@link FfmCublas}: libcublas.so.13, then .so.12, searched by {@link CublasLocator}), then
 * JCublas2 ({@link JCublasBlas}, needs libcublas.so.12), then falls back to our own kernel ({@link KernelGemm}).
 * {@code cublas}, {@code jcublas} or {@code kernel} forces one path (and fails if it cannot load).
 */
final class GemmPaths {
    static final String OPTION = "gemm";

    private GemmPaths() {}

    static String mode(Map<String, String> extra) {
        String m = extra.getOrDefault(OPTION, "auto").trim().toLowerCase(Locale.ROOT);
        if (!List.of("auto", "cublas", "jcublas", "kernel").contains(m))
            throw AttnException.badInput("option gemm=" + m + ": expected auto, cublas, jcublas or kernel");
        return m;
    }

    /** Which path {@link #open} would take, for the probe; loads libraries but creates no handle. Never throws. */
    static String wouldUse(Map<String, String> extra) {
        try {
            String mode = mode(extra);
            if (mode.equals("kernel")) return "built-in SGEMM kernel (gemm=kernel)";
            List<String> why = new ArrayList<>();
            if (!mode.equals("jcublas")) {
                CublasLocator.Result r = CublasLocator.locate(extra);
                if (r.found() != null)
                    return "cuBLAS via java.lang.foreign (" + r.found().where() + ")";
                why.add(r.notFoundMessage());
                if (mode.equals("cublas")) return "none: " + why.getFirst();
            }
            String jc = jcublasLoads();
            if (jc == null) return "cuBLAS via JCublas2 (libcublas.so.12)";
            why.add("JCublas2: " + jc);
            if (mode.equals("jcublas")) return "none: JCublas2: " + jc;
            return "built-in SGEMM kernel, because " + String.join("; ", why);
        } catch (Throwable t) {
            return "unknown (" + t + ")";
        }
    }

    /** Null when the JCublas2 classes and natives load, else why not. */
    static String jcublasLoads() {
        try {
            jcuda.jcublas.JCublas2.setExceptionsEnabled(false); // class init loads the JNI library
            return null;
        } catch (Throwable t) {
            return Cuda.linkReason(t);
        }
    }

    /** Opens the GEMM path for a backend; {@code notes} receives why better paths were skipped. */
    static Blas open(
            Map<String, String> extra, Launcher kernels, RawStream stream, Precision precision, List<String> notes) {
        String mode = mode(extra);
        if (!mode.equals("kernel") && !mode.equals("jcublas")) {
            CublasLocator.Result r = CublasLocator.locate(extra);
            if (r.found() != null) {
                try {
                    return FfmCublas.open(r.found(), stream, precision);
                } catch (AttnException | LinkageError e) {
                    if (mode.equals("cublas")) throw unavailable("cuBLAS via FFM: " + e.getMessage(), e);
                    notes.add("cuBLAS via FFM failed: " + e.getMessage());
                }
            } else {
                if (mode.equals("cublas")) throw unavailable(r.notFoundMessage(), null);
                notes.add(r.notFoundSummary());
            }
        }
        if (!mode.equals("kernel")) {
            try {
                return new JCublasBlas(stream, precision);
            } catch (AttnException | LinkageError e) {
                if (mode.equals("jcublas")) throw unavailable("JCublas2: " + Cuda.linkReason(e), e);
                notes.add("JCublas2 unusable: " + Cuda.linkReason(e));
            }
        }
        return new KernelGemm(kernels);
    }

    private static AttnException unavailable(String msg, Throwable cause) {
        return new AttnException(AttnException.Code.DEVICE_UNAVAILABLE, msg, cause);
    }
}
