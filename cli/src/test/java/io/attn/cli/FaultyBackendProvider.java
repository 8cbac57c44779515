package io.attn.cli;

import io.attn.AttnException;
import io.attn.backend.Backend;
import io.attn.backend.BackendOptions;
import io.attn.backend.BackendProvider;
import io.attn.backend.Buffer;
import io.attn.backend.ProbeResult;
import io.attn.cpu.CpuBackend;
import io.attn.graph.Node;
import io.attn.tensor.DType;

/**
 * A test-only accelerator (registered in cli's test resources, so it is in no product jar): the CPU backend with a
 * fake device memory. Unavailable unless the system property {@code attn.test.faulty} is set, so other tests never
 * see it; then it outranks every real backend, and {@code auto} takes it. Modes: {@code oom} — any allocation of more
 * than {@code attn.test.faulty.limit} floats (default 0) fails with DEVICE_OUT_OF_MEMORY naming the size asked and
 * free, like the CUDA backend's; {@code lost} — every execute fails with DEVICE_UNAVAILABLE.
 */
public final class FaultyBackendProvider implements BackendProvider {
    static final String MODE = "attn.test.faulty", LIMIT = "attn.test.faulty.limit";

    @Override
    public String name() {
        return "faulty";
    }

    @Override
    public int rank() {
        return 1000;
    }

    @Override
    public ProbeResult probe() {
        return System.getProperty(MODE) == null
                ? ProbeResult.unavailable(name(), "test-only backend, off")
                : ProbeResult.available(name(), "test backend (" + System.getProperty(MODE) + ")");
    }

    @Override
    public Backend create(BackendOptions options) {
        return new Faulty(new CpuBackend(options), System.getProperty(MODE, "oom"), Long.getLong(LIMIT, 0));
    }

    static final class Faulty implements Backend {
        final CpuBackend cpu;
        final String mode;
        final long limit;
        /** Buffers allocated and not yet released: a failed run must not leak any. */
        final java.util.concurrent.atomic.AtomicLong live = new java.util.concurrent.atomic.AtomicLong();

        Faulty(CpuBackend cpu, String mode, long limit) {
            this.cpu = cpu;
            this.mode = mode;
            this.limit = limit;
        }

        @Override
        public String name() {
            return "faulty";
        }

        @Override
        public String description() {
            return "test backend, " + mode;
        }

        @Override
        public boolean supports(Node node) {
            return cpu.supports(node);
        }

        @Override
        public Buffer allocate(DType dtype, long elements) {
            if (mode.equals("oom") && elements > limit)
                throw new AttnException(
                        AttnException.Code.DEVICE_OUT_OF_MEMORY,
                        "fake device out of memory: asked " + elements * 4 + " bytes, " + limit * 4 + " bytes free");
            live.incrementAndGet();
            return cpu.allocate(dtype, elements);
        }

        @Override
        public void release(Buffer buffer) {
            live.decrementAndGet();
            cpu.release(buffer);
        }

        @Override
        public void upload(float[] src, int count, Buffer dst) {
            cpu.upload(src, count, dst);
        }

        @Override
        public void download(Buffer src, float[] dst, int count) {
            cpu.download(src, dst, count);
        }

        @Override
        public void execute(Node node, Buffer out, Buffer[] inputs) {
            if (mode.equals("lost")) throw new AttnException(AttnException.Code.DEVICE_UNAVAILABLE, "fake device lost");
            cpu.execute(node, out, inputs);
        }

        @Override
        public void close() {
            cpu.close();
        }
    }
}
