package io.attn.cuda;

import io.attn.AttnException;
import io.attn.backend.Backend;
import io.attn.backend.BackendOptions;
import io.attn.backend.BackendProvider;
import io.attn.backend.ProbeResult;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The {@code cuda} backend provider (rank 100: preferred over the CPU when a usable GPU is present). This class
 * refers to no JCuda type, so loading it never loads native code; {@link #probe} and {@link #create} reach JCuda
 * only inside try/catch, and every failure, {@link Error}s included, becomes an unavailable probe result or an
 * {@link AttnException} (DEVICE_UNAVAILABLE) with the reason.
 *
 * <p>Options ({@code BackendOptions.extra}): {@code cuda.device} (ordinal, default 0), {@code gemm}
 * (auto|cublas|jcublas|kernel), {@code cublas.path} (file or directory), {@code attention} (unfused|fused), {@code flash.variant} (a 16-bit flash entry: Attention.VARIANTS).
 */
public final class CudaBackendProvider implements BackendProvider {
    public CudaBackendProvider() {}

    @Override
    public String name() {
        return "cuda";
    }

    @Override
    public int rank() {
        return 100;
    }

    @Override
    public ProbeResult probe() {
        return probe(BackendOptions.defaults());
    }

    /** Probes with the given options (device ordinal, cuBLAS path and GEMM choice are read from them). */
    public ProbeResult probe(BackendOptions options) {
        try {
            return CudaProbe.probe(options);
        } catch (Throwable t) {
            return ProbeResult.unavailable(name(), t.getClass().getSimpleName() + ": " + t.getMessage());
        }
    }

    /**
     * For {@code attn probe}: where the driver library was found, which cuBLAS the GEMMs would use (or why none and
     * how to point to one), and which cuDNN {@code attention=cudnn} would use. All are known without a GPU: the
     * searches run even where there is no driver.
     */
    @Override
    public List<String> probeDetails() {
        List<String> out = new ArrayList<>();
        try {
            out.add("driver: " + CudaProbe.driverLine());
        } catch (Throwable t) {
            out.add("driver: unknown (" + t.getClass().getSimpleName() + ": " + t.getMessage() + ")");
        }
        try {
            out.add("cublas: " + CublasLocator.locate(Map.of()).probeLine());
        } catch (Throwable t) {
            out.add("cublas: unknown (" + t.getClass().getSimpleName() + ": " + t.getMessage() + ")");
        }
        try {
            out.add("cudnn: " + CudnnAttention.probeLine(Map.of()));
        } catch (Throwable t) {
            out.add("cudnn: unknown (" + t.getClass().getSimpleName() + ": " + t.getMessage() + ")");
        }
        return out;
    }

    /**
     * Besides the default (flash attention where it applies, cuBLAS GEMMs): the fused, unfused and cuDNN attention paths
     * (cuDNN: where the library opens and the case is one it takes; the flash path otherwise, as the backend line says), and
     * the GEMMs on our own kernel and on JCublas (where it does not load, that variant is reported unavailable).
     */
    @Override
    public List<Map<String, String>> parityVariants() {
        return List.of(
                Map.of(CudaBackend.ATTENTION_OPTION, "fused"),
                Map.of(CudaBackend.ATTENTION_OPTION, "unfused"),
                Map.of(CudaBackend.ATTENTION_OPTION, "cudnn"), // cuDNN's fused SDPA at bf16 / fp16, else flash
                Map.of(io.attn.cuda.ops.Attention.FP32_OPTION, "simt"), // the default is tf32x3 on sm_80+
                Map.of(GemmPaths.OPTION, "kernel"),
                Map.of(GemmPaths.OPTION, "jcublas"));
    }

    /** Declared without a device ({@link CudaBackend#supports}): every op on F32 tensors, but ragged attention. */
    @Override
    public io.attn.backend.OpSupport support() {
        return CudaBackend::unsupported;
    }

    @Override
    public Backend create(BackendOptions options) {
        try {
            return CudaBackend.open(options);
        } catch (AttnException e) {
            throw e;
        } catch (Throwable t) {
            throw new AttnException(
                    AttnException.Code.DEVICE_UNAVAILABLE,
                    "cuda backend cannot start: " + t.getClass().getSimpleName() + ": " + t.getMessage(),
                    t);
        }
    }
}
