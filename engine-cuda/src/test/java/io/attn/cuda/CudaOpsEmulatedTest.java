package io.attn.cuda;

import io.attn.backend.Backend;
import java.util.List;
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
        boolean fused = false;
        for (int i = 0; i < kv.length; i += 2) if (kv[i].equals("attention")) fused = kv[i + 1].equals("fused");
        EmuSink sink = new EmuSink(KernelEmulator.get());
        return new CudaBackend(sink, new KernelGemm(sink), fused);
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
