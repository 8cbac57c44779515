package io.attn.cuda;

import io.attn.backend.Backend;
import io.attn.backend.Precision;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;

/**
 * {@link CudaOpsChecks} with no GPU: {@link CudaBackend}'s real op logic, launching the real {@code .cu} kernels
 * compiled for the host ({@link KernelEmulator}); GEMMs use gemm.cu through {@link KernelGemm}. Catches indexing,
 * mask and reduction bugs in the kernels and in the launch code; says nothing about PTX/JIT, cuBLAS or timing.
 * Skipped without g++.
 */
class CudaOpsEmulatedTest extends CudaOpsChecks {
    @BeforeEach
    void needsCompiler() {
        Assumptions.assumeTrue(KernelEmulator.get() != null, "no kernel emulator: " + KernelEmulator.failure());
    }

    @Override
    Backend open(String... kv) {
        String attention = null;
        Precision precision = Precision.FP32;
        for (int i = 0; i < kv.length; i += 2)
            if (kv[i].equals("attention")) attention = kv[i + 1];
            else if (kv[i].equals("precision")) precision = Precision.valueOf(kv[i + 1].toUpperCase(Locale.ROOT));
        EmuSink sink = new EmuSink(KernelEmulator.get());
        // capability 75: the emulator has no tensor-core kernels, so every precision takes the fp32 kernels
        return new CudaBackend(sink, new KernelGemm(sink), attention, precision, 75);
    }

    @Override
    List<String> gemmPaths() {
        return List.of("kernel");
    }

    @Override
    long deviceBytes(Backend b) {
        return -1;
    }
}
