package io.attn.exec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.attn.backend.Backend;
import io.attn.backend.Buffer;
import io.attn.graph.Node;
import io.attn.tensor.DType;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Weights shared by two models on one backend (the models of several tasks over one folder's weights) are uploaded
 * once and released when the last model holding them closes; a model's own weights are released with it.
 */
class ResourcesTest {
    /** Counts uploads and releases of constants; computes nothing. */
    static final class Counting implements Backend {
        final List<float[]> uploaded = java.util.Collections.synchronizedList(new ArrayList<>());
        final List<Buffer> released = java.util.Collections.synchronizedList(new ArrayList<>());

        @Override
        public String name() {
            return "counting";
        }

        @Override
        public String description() {
            return "counting";
        }

        @Override
        public boolean supports(Node node) {
            return false;
        }

        @Override
        public Buffer allocate(DType dtype, long elements) {
            throw new UnsupportedOperationException();
        }

        @Override
        public Buffer constant(float[] data) {
            uploaded.add(data);
            return new Buffer() {
                @Override
                public DType dtype() {
                    return DType.F32;
                }

                @Override
                public long capacity() {
                    return data.length;
                }
            };
        }

        @Override
        public void release(Buffer buffer) {
            released.add(buffer);
        }

        @Override
        public void upload(float[] src, int count, Buffer dst) {}

        @Override
        public void download(Buffer src, float[] dst, int count) {}

        @Override
        public void execute(Node node, Buffer out, Buffer[] inputs) {}

        @Override
        public void close() {}
    }

    /** Models loaded and closed from several threads over the same arrays: each upload is released exactly once. */
    @Test
    void concurrentModelsReleaseEveryUploadOnce() throws Exception {
        Counting be = new Counting();
        float[][] shared = new float[16][4];
        var pool = java.util.concurrent.Executors.newFixedThreadPool(4);
        List<java.util.concurrent.Future<?>> done = new ArrayList<>();
        for (int t = 0; t < 200; t++)
            done.add(pool.submit(() -> {
                Resources r = new Resources(be);
                for (float[] a : shared) r.constant(a);
                r.constant(new float[2]); // its own
                r.close();
            }));
        for (var f : done) f.get();
        pool.shutdown();
        assertEquals(be.uploaded.size(), be.released.size(), "every upload released");
        java.util.Set<Buffer> distinct = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        distinct.addAll(be.released);
        assertEquals(be.released.size(), distinct.size(), "none released twice");
    }

    @Test
    void sharedWeightsAreUploadedOnceAndReleasedWithTheirLastModel() {
        Counting be = new Counting();
        float[] shared = new float[8], ownA = new float[4], ownB = new float[4];
        Resources a = new Resources(be), b = new Resources(be);
        Buffer sa = a.constant(shared), oa = a.constant(ownA);
        assertSame(sa, a.constant(shared), "one model reads its array once");
        Buffer sb = b.constant(shared);
        b.constant(ownB);
        assertSame(sa, sb, "the second model reads the first one's upload");
        assertEquals(3, be.uploaded.size(), "shared, ownA, ownB");
        a.close();
        assertEquals(List.of(oa), be.released, "the shared array stays while b holds it");
        b.close();
        assertEquals(3, be.released.size());
        assertEquals(1, be.released.stream().filter(x -> x == sa).count(), "released once, with its last model");
        // a new model on the backend uploads it again
        Resources c = new Resources(be);
        c.constant(shared);
        assertEquals(4, be.uploaded.size());
        c.close();
    }
}
