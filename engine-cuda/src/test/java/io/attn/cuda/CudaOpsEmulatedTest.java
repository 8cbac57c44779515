package io.attn.cuda;

import io.attn.backend.Backend;
import io.attn.engine.Precision;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;

/**
 * {@link CudaOpsChecks} with no GPU: {@link CudaBackend}'s real op logic, launching the real {@code .cu} kernels
 * compiled for the host ({@link KernelEmulator}); GEMMs use gemm.cu through {@link KernelGemm}. Catches indexing,
 * mask and reduction bugs in the kernels and in the launch code; says nothing about PTX/JIT, cuBLAS or timing.
 * Skipped without g++. Tagged {@code long} (the host build of the kernels, then emulated launches; the flash
 * kernels' tiles are the parity suite's cases): CI runs it ({@code ./attn test -Plong-tests}), README's {@code ./attn test} does not; on a GPU the
 * same checks run quickly in {@link CudaOpsGpuTest}, which is not tagged.
 */
@Tag("long")
class CudaOpsEmulatedTest extends CudaOpsChecks {
    @BeforeEach
    void needsCompiler() {
        KernelEmulator emu = KernelEmulator.get();
        String why = KernelEmulator.failure();
        // no g++: skipped; g++ present but the kernels do not compile for the host: a failure, not a silent skip
        if (emu == null && why != null && why.contains("compiling the kernel emulator failed"))
            throw new AssertionError(why);
        Assumptions.assumeTrue(emu != null, "no kernel emulator: " + why);
    }

    @Override
    Backend open(String... kv) {
        String attention = null;
        Precision precision = Precision.FP32;
        for (int i = 0; i < kv.length; i += 2)
            if (kv[i].equals("attention")) attention = kv[i + 1];
            else if (kv[i].equals("precision")) precision = Precision.valueOf(kv[i + 1].toUpperCase(Locale.ROOT));
        EmuSink sink = new EmuSink(KernelEmulator.get());
        // capability 80: precision bf16 / fp16 runs the tensor-core flash kernels on the emulator's mma stand-in
        return new CudaBackend(sink, new KernelGemm(sink), attention, precision, 80);
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
