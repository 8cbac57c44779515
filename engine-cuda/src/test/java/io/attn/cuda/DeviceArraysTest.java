package io.attn.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.kernels.Kernel;
import io.attn.tensor.DType;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link DeviceArrays}, the device copies of the int8 ops' weights (issue 37): one upload per array (by identity, not
 * content), the bytes counted as {@code Engine.weightBytes} reports them, and, what a server that loads and unloads
 * models relies on, the device copy of an array given back once the array is collected (at the next lookup), and every
 * copy given back by {@code close}. The sink records allocations and uploads; no device and no kernels are involved.
 */
class DeviceArraysTest {
    /** Allocates buffers without device memory and counts uploads. */
    static final class RecordingSink implements OpSink {
        final List<CudaBuffer> allocated = new ArrayList<>();
        int uploads;

        @Override
        public CudaBuffer allocate(DType dtype, long elements) {
            CudaBuffer b = new CudaBuffer(DevPtr.fake(4096L * (allocated.size() + 1)), dtype, elements, null);
            allocated.add(b);
            return b;
        }

        @Override
        public void upload(float[] src, int count, CudaBuffer dst) {
            uploads++;
        }

        @Override
        public void upload16(short[] src, CudaBuffer dst) {
            uploads++;
        }

        @Override
        public void upload8(byte[] src, CudaBuffer dst) {
            uploads++;
        }

        @Override
        public void download(CudaBuffer src, float[] dst, int count, String after) {}

        @Override
        public void sync(String after) {}

        @Override
        public void zero(DevPtr p, long n) {}

        @Override
        public long errorWord() {
            return 0;
        }

        @Override
        public int takeError(String after) {
            return 0;
        }

        @Override
        public void launch(Kernel kernel, int gx, int gy, int gz, int threads, int smemBytes, KernelArgs args) {
            throw new AssertionError("no kernel runs here");
        }
    }

    static boolean released(CudaBuffer b) {
        return b.toString().endsWith(", released]");
    }

    @Test
    void oneUploadPerArrayByIdentityCountedInBytes() {
        var sink = new RecordingSink();
        try (DeviceArrays arrays = new DeviceArrays(sink)) {
            byte[] w = new byte[1000];
            float[] s = new float[10];
            CudaBuffer bw = arrays.int8(w);
            assertSame(bw, arrays.int8(w));
            assertEquals(DType.I8, bw.dtype());
            CudaBuffer bs = arrays.f32(s);
            assertSame(bs, arrays.f32(s));
            assertEquals(2, sink.uploads);
            assertEquals(1000 + 40, arrays.bytes());
            // equal content, another array: another copy (a model's arrays are its own)
            byte[] other = new byte[1000];
            assertNotSame(bw, arrays.int8(other));
            assertEquals(3, sink.uploads);
            assertEquals(1000 + 40 + 1000, arrays.bytes());
            java.lang.ref.Reference.reachabilityFence(other);
            java.lang.ref.Reference.reachabilityFence(w);
            java.lang.ref.Reference.reachabilityFence(s);
        }
        for (CudaBuffer b : sink.allocated) assertTrue(released(b), b.toString());
    }

    @Test
    void aCollectedArrayGivesItsDeviceCopyBack() throws InterruptedException {
        var sink = new RecordingSink();
        try (DeviceArrays arrays = new DeviceArrays(sink)) {
            byte[] kept = new byte[64];
            CudaBuffer keptCopy = arrays.int8(kept);
            WeakReference<byte[]> gone = uploadAndDrop(arrays);
            CudaBuffer goneCopy = sink.allocated.get(1);
            assertEquals(64 + 4096, arrays.bytes());
            for (int i = 0; i < 100 && gone.get() != null; i++) {
                System.gc();
                Thread.sleep(10);
            }
            assertTrue(gone.get() == null, "the dropped array was not collected after 100 System.gc() calls");
            // the reference queue is drained at the next lookup or count; allow the collector a moment to enqueue
            long bytes = arrays.bytes();
            for (int i = 0; i < 100 && bytes != 64; i++) {
                Thread.sleep(10);
                bytes = arrays.bytes();
            }
            assertEquals(64, bytes, "the collected array's 4096 bytes are still counted");
            assertTrue(released(goneCopy), goneCopy.toString());
            assertFalse(released(keptCopy), keptCopy.toString());
            assertSame(keptCopy, arrays.int8(kept)); // still found, not uploaded again
            assertEquals(2, sink.uploads);
            java.lang.ref.Reference.reachabilityFence(kept);
        }
        assertTrue(released(sink.allocated.get(0)));
    }

    /** Uploads an array that nothing else references once this returns. */
    private static WeakReference<byte[]> uploadAndDrop(DeviceArrays arrays) {
        byte[] a = new byte[4096];
        arrays.int8(a);
        return new WeakReference<>(a);
    }
}
