package io.attn.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.junit.jupiter.api.Test;

/** Which devices and drivers the probe accepts, and how it describes them (hand-written expectations). */
class DeviceInfoTest {
    static DeviceInfo dev(int major, int minor, int driver) {
        return new DeviceInfo(0, 1, "GPU", major, minor, 10, 8L << 30, driver);
    }

    @Test
    void needsTuringAndACuda13Driver() {
        assertNull(dev(7, 5, 13000).unsupportedReason());
        assertNull(dev(9, 0, 13010).unsupportedReason());
        assertEquals(
                "GPU has compute capability 7.0; attn needs 7.5 or newer",
                dev(7, 0, 13000).unsupportedReason());
        assertEquals(
                "the NVIDIA driver supports CUDA driver API 12.8; attn's kernels (PTX ISA 9.0) need a CUDA 13 driver"
                        + " (R580 or newer)",
                dev(8, 0, 12080).unsupportedReason());
    }

    @Test
    void describesTheDevice() {
        assertEquals(
                "GPU (device 0 of 1, sm_90, 10 SMs, 8.0 GiB), CUDA driver API 13.0",
                dev(9, 0, 13000).describe());
    }
}
