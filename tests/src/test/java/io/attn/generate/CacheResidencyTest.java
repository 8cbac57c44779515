package io.attn.generate;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.attn.backend.Backend;
import io.attn.backend.BackendOptions;
import io.attn.backend.Buffer;
import io.attn.cpu.CpuBackendProvider;
import io.attn.graph.Node;
import io.attn.nn.DecoderOnlyLM;
import io.attn.nn.DecoderSession;
import io.attn.tensor.DType;
import org.junit.jupiter.api.Test;

/**
 * The KV cache lives on the backend: after the prefill, a decoding step moves only its small inputs to the backend (ids,
 * positions, the cache row, the key-padding mask) and only the logits back, never a cache buffer. Checked by counting
 * the elements that cross the backend boundary.
 */
class CacheResidencyTest {
    /** Forwards to a backend, counting the host <-> backend traffic in elements. */
    static final class Counting implements Backend {
        final Backend inner;
        long toBackend, toHost, allocated;

        Counting(Backend inner) {
            this.inner = inner;
        }

        public String name() {
            return inner.name();
        }

        public String description() {
            return inner.description();
        }

        public boolean supports(Node node) {
            return inner.supports(node);
        }

        public Buffer allocate(DType dtype, long elements) {
            allocated += elements;
            return inner.allocate(dtype, elements);
        }

        public void release(Buffer b) {
            inner.release(b);
        }

        public void upload(float[] src, int count, Buffer dst) {
            toBackend += count;
            inner.upload(src, count, dst);
        }

        public void download(Buffer src, float[] dst, int count) {
            toHost += count;
            inner.download(src, dst, count);
        }

        public Buffer hostView(float[] data) {
            toBackend += data.length;
            return inner.hostView(data);
        }

        public void execute(Node node, Buffer out, Buffer[] inputs) {
            inner.execute(node, out, inputs);
        }

        public void close() {
            inner.close();
        }
    }

    @Test
    void aStepMovesOnlyItsInputsAndLogits() {
        var v = DecoderOnlyTest.VARIANTS.get(1);
        DecoderOnlyLM lm = v.engine(v.weights(3));
        int b = DecoderOnlyTest.PROMPTS.length, cap = 16, vocab = DecoderOnlyTest.V;
        try (Counting be = new Counting(new CpuBackendProvider().create(BackendOptions.defaults()));
                DecoderSession s = new DecoderSession(lm, be, b, cap)) {
            s.prefill(DecoderOnlyTest.PROMPTS);
            s.step(new int[] {1, 2, 3}); // first step: builds the step executor (weights, arena)
            for (int i = 0; i < 3; i++) {
                be.toBackend = be.toHost = be.allocated = 0;
                s.step(new int[] {4, 5, 6});
                assertEquals(b + b + 1 + (long) b * cap, be.toBackend, "ids, positions, row, key padding");
                assertEquals((long) b * vocab, be.toHost, "logits");
                assertEquals(0, be.allocated, "steady state allocates nothing");
            }
        }
    }
}
