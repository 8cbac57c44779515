package io.attn.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.AttnException;
import jcuda.driver.CUresult;
import org.junit.jupiter.api.Test;

/** Size classes of the device pool, and how CUDA status codes become AttnExceptions (no GPU needed). */
class DevicePoolAndErrorsTest {
    @Test
    void sizeClassesAre256BytesThenQuartersOfPowersOfTwo() {
        assertEquals(256, DevicePool.sizeClass(1));
        assertEquals(256, DevicePool.sizeClass(256));
        assertEquals(320, DevicePool.sizeClass(257)); // 256 < 257 <= 512: steps of 64
        assertEquals(512, DevicePool.sizeClass(500));
        assertEquals(1024, DevicePool.sizeClass(1000)); // 512 < 1000 <= 1024: steps of 128
        assertEquals(1280, DevicePool.sizeClass(1025));
        assertEquals(5L << 28, DevicePool.sizeClass((1L << 30) + 1));
        for (long b = 1; b < 1 << 20; b = b * 3 / 2 + 1) {
            long c = DevicePool.sizeClass(b);
            assertTrue(c >= b && (b <= 256 || c <= b * 1.25 + 1), b + " -> " + c);
        }
    }

    @Test
    void outOfMemoryNamesTheCallAndCode() {
        AttnException e = assertThrows(
                AttnException.class,
                () -> Cuda.check(CUresult.CUDA_ERROR_OUT_OF_MEMORY, "cuMemAlloc(1073741824 bytes)"));
        assertEquals(AttnException.Code.DEVICE_OUT_OF_MEMORY, e.code());
        assertTrue(e.getMessage().startsWith("CUDA out of memory in cuMemAlloc(1073741824 bytes); "), e.getMessage());
        assertTrue(e.getMessage().endsWith("(CUDA_ERROR_OUT_OF_MEMORY)"), e.getMessage());
        assertEquals(1, e.getMessage().lines().count(), "one line for users");
    }

    @Test
    void otherErrorsAreInternalAndNameTheCall() {
        Cuda.check(CUresult.CUDA_SUCCESS, "cuInit");
        AttnException e = assertThrows(
                AttnException.class, () -> Cuda.check(CUresult.CUDA_ERROR_INVALID_VALUE, "cuLaunchKernel(x)"));
        assertEquals(AttnException.Code.INTERNAL, e.code());
        assertTrue(
                e.getMessage().startsWith("CUDA call cuLaunchKernel(x) failed: CUDA_ERROR_INVALID_VALUE"),
                e.getMessage());
    }
}
