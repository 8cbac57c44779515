package io.attn.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.AttnException;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Which device a task's engine opens, from the device asked for and the GPU addresses Spark gave the task. */
class DeviceChoiceTest {
    @Test
    void cpuIgnoresGpus() {
        assertEquals(new DeviceChoice("cpu", -1, false, null), DeviceChoice.choose("cpu", List.of("1")));
    }

    @Test
    void autoTakesTheTasksGpuAndMayFallBackToTheCpu() {
        assertEquals(new DeviceChoice("cuda", 1, true, null), DeviceChoice.choose("auto", List.of("1")));
        assertEquals(new DeviceChoice("cuda", 12, true, null), DeviceChoice.choose("auto", List.of(" 12 ")));
        DeviceChoice two = DeviceChoice.choose("auto", List.of("3", "2"));
        assertEquals(3, two.ordinal());
        assertEquals("the task holds GPUs [3, 2], the model runs on the first", two.note());
    }

    @Test
    void autoWithoutAGpuLeavesItToTheEngineAndSaysWhy() {
        DeviceChoice c = DeviceChoice.choose("auto", List.of());
        assertEquals("auto", c.device());
        assertEquals(-1, c.ordinal());
        assertEquals("no GPU assigned to the task by Spark (spark.task.resource.gpu.amount is not set)", c.note());
        assertEquals(c, DeviceChoice.choose("auto", null));
    }

    @Test
    void autoWithAnAddressThatIsNoDeviceNumberRunsOnTheCpu() {
        for (String a : List.of("GPU-8e2d3f1a", "", "-1", "0x1", "99999")) {
            DeviceChoice c = DeviceChoice.choose("auto", List.of(a));
            assertEquals("cpu", c.device(), a);
            assertTrue(c.note().contains("\"" + a + "\", which is not a CUDA device number"), c.note());
        }
    }

    @Test
    void cudaUsesTheTasksGpuOrDeviceZeroAndRefusesABadAddress() {
        assertEquals(new DeviceChoice("cuda", 2, false, null), DeviceChoice.choose("cuda", List.of("2")));
        DeviceChoice none = DeviceChoice.choose("cuda", List.of());
        assertEquals(-1, none.ordinal());
        assertEquals("no GPU assigned to the task by Spark: CUDA device 0 (the default)", none.note());
        AttnException e = assertThrows(AttnException.class, () -> DeviceChoice.choose("cuda", List.of("GPU-x")));
        assertEquals(
                "Spark assigned the task GPU \"GPU-x\", which is not a CUDA device number (the GPU discovery script"
                        + " must print device numbers)",
                e.getMessage());
    }

    @Test
    void ordinals() {
        assertEquals(0, DeviceChoice.ordinal("0"));
        assertEquals(7, DeviceChoice.ordinal("7\n"));
        assertEquals(-1, DeviceChoice.ordinal(null));
        assertEquals(-1, DeviceChoice.ordinal("1.0"));
        assertNull(DeviceChoice.choose("cpu", List.of()).note());
    }
}
