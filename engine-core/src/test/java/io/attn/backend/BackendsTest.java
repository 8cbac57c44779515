package io.attn.backend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.AttnException;
import org.junit.jupiter.api.Test;

/**
 * Opening a device whose backend is not on the class path (engine-core alone, as here) says the device is unavailable
 * and which artifact brings it; an unknown name is bad input.
 */
class BackendsTest {
    @Test
    void aBackendMissingFromTheClassPathIsUnavailableAndNamesItsArtifact() {
        assertTrue(Backends.providers().isEmpty(), "engine-core's tests run without backends");
        for (String d : new String[] {"cuda", "cpu"}) {
            AttnException e = assertThrows(AttnException.class, () -> Backends.open(d, BackendOptions.defaults()));
            assertEquals(AttnException.Code.DEVICE_UNAVAILABLE, e.code());
            assertEquals(
                    "device '" + d + "' is not available: its backend is not on the class path (add the artifact"
                            + " io.attn:engine-" + d + ")",
                    e.getMessage());
        }
        AttnException auto = assertThrows(AttnException.class, () -> Backends.open("auto", BackendOptions.defaults()));
        assertEquals(AttnException.Code.DEVICE_UNAVAILABLE, auto.code());
        assertTrue(auto.getMessage().contains("io.attn:engine-cpu and/or io.attn:engine-cuda"), auto.getMessage());
    }

    @Test
    void anUnknownDeviceNameIsBadInput() {
        AttnException e = assertThrows(AttnException.class, () -> Backends.open("gpu", BackendOptions.defaults()));
        assertEquals(AttnException.Code.BAD_INPUT, e.code());
        assertEquals("unknown device 'gpu': expected auto, cpu or cuda", e.getMessage());
    }
}
