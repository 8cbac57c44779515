package io.attn.cuda;

import io.attn.backend.Backend;
import io.attn.engine.Precision;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The CUDA backend without a GPU, for the one parity suite (the tests module's ParityTest): {@link CudaBackend}'s real
 * op logic launching the real {@code .cu} kernels compiled for the host ({@link KernelEmulator}), GEMMs on gemm.cu
 * ({@link KernelGemm}), at compute capability 80 so that bf16/fp16 run the tensor-core flash kernels on the
 * emulator's mma stand-in. Says nothing about PTX/JIT, cuBLAS or timing.
 */
public final class EmulatedCuda {
    private EmulatedCuda() {}

    /**
     * Null when the emulator is built; otherwise why not (no g++). Throws AssertionError when g++ is present but the
     * kernels do not compile for the host: that is a failure, not a reason to skip.
     */
    public static String unavailable() {
        KernelEmulator emu = KernelEmulator.get();
        String why = KernelEmulator.failure();
        if (emu == null && why != null && why.contains("compiling the kernel emulator failed"))
            throw new AssertionError(why);
        return emu == null ? "no kernel emulator: " + why : null;
    }

    /**
     * The SIMT fp32 flash kernel ({@code flash_attention.cu}; the default is 3xTF32, {@code flash_attention_tf32.cu},
     * at the emulator's compute capability 80), judged on the attention cases at fp32 bounds (ParityTest).
     */
    public static final Map<String, String> SIMT = Map.of(io.attn.cuda.ops.Attention.FP32_OPTION, "simt");

    /**
     * The emulated configurations the suite judges on every case: the default (flash attention where it applies; fp32
     * on the 3xTF32 kernels), then each of {@link CudaBackendProvider#parityVariants()} whose GEMM path exists here
     * (the emulator has only our GEMM kernel) but {@link #SIMT}, which ParityTest judges on the attention cases only,
     * and {@code attention=cudnn} (cuDNN needs a device; the GPU call's parity-cudnn step judges it).
     */
    public static List<Map<String, String>> variants() {
        List<Map<String, String>> out = new ArrayList<>();
        out.add(Map.of());
        for (Map<String, String> v : new CudaBackendProvider().parityVariants())
            if (!v.containsKey(GemmPaths.OPTION)
                    && !v.equals(SIMT)
                    && !"cudnn".equals(v.get(CudaBackend.ATTENTION_OPTION)))
                out.add(v); // attention=cudnn needs a device: here it would repeat the default's flash path
        return out;
    }

    /**
     * A backend with the attention options of {@code extra} ({@code attention}, {@code flash.variant}, {@code flash.fp32}, {@code
     * flash.fp32.variant}; absent: the defaults) at {@code precision}.
     */
    public static Backend open(Map<String, String> extra, Precision precision) {
        EmuSink sink = new EmuSink(KernelEmulator.get());
        return new CudaBackend(sink, new KernelGemm(sink), extra, precision, 80);
    }

    /**
     * {@link #open} with a GEMM library that multiplies 16-bit inputs as cuBLAS does ({@link HostHalfBlas}), so that at
     * precision bf16 / fp16 the backend keeps its GEMM weights in 16 bits and runs their products with 16-bit A and B,
     * as on a GPU with cuBLAS; fp32 GEMMs still run gemm.cu.
     */
    public static Backend openWithHalfGemm(Map<String, String> extra, Precision precision) {
        EmuSink sink = new EmuSink(KernelEmulator.get());
        return new CudaBackend(sink, new HostHalfBlas(sink), extra, precision, 80);
    }

    /** Bytes of the backend's weights held in 16 bits (a backend of {@link #openWithHalfGemm}). */
    public static long halfWeightBytes(Backend b) {
        return ((CudaBackend) b).constantBytes16();
    }
}
