package io.attn.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.engine.Precision;
import org.junit.jupiter.api.Test;

/**
 * {@code --precision} names and the cpu backend's note when a reduced precision is asked for (a bad name is a usage
 * error: {@link ExitCodesTest}).
 */
class DeviceOptionsTest {
    @Test
    void precisionNamesAnyCase() {
        assertEquals(Precision.FP32, DeviceOptions.precision("fp32"));
        assertEquals(Precision.TF32, DeviceOptions.precision("TF32"));
        assertEquals(Precision.BF16, DeviceOptions.precision(" bf16 "));
        assertEquals(Precision.FP16, DeviceOptions.precision("fp16"));
    }

    @Test
    void cpuBackendSaysItComputesInFp32() {
        DeviceOptions d = new DeviceOptions();
        d.device = "cpu";
        d.threads = 1;
        d.precision = "bf16";
        try (var e = d.open()) {
            assertTrue(
                    e.description()
                            .contains("precision bf16 requested, computed in fp32 (the cpu backend has no"
                                    + " reduced-precision modes)"),
                    e.description());
        }
    }
}
