package io.attn.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.AttnException;
import io.attn.backend.BackendOptions;
import io.attn.backend.BackendProvider;
import io.attn.backend.Backends;
import io.attn.backend.ProbeResult;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * On a machine without the NVIDIA driver (this build machine), the cuda provider must load, probe as unavailable with
 * a reason naming the driver, and never throw: native-library {@link Error}s included. Skipped where a driver exists.
 */
class CudaProviderTest {
    @BeforeEach
    void onlyWithoutDriver() {
        Assumptions.assumeTrue(
                CudaProbe.driverMissing() != null,
                "an NVIDIA driver is present: these tests are for hosts without one");
    }

    @Test
    void providerClassRefersToNoJCudaType() throws Exception {
        // loading the provider must not load JCuda (and its natives): its class file names no jcuda class
        try (InputStream in = CudaBackendProvider.class.getResourceAsStream("CudaBackendProvider.class")) {
            String constants = new String(in.readAllBytes(), StandardCharsets.ISO_8859_1);
            assertFalse(constants.contains("jcuda/"), "CudaBackendProvider references a jcuda class");
        }
    }

    @Test
    void probeSaysUnavailableBecauseLibcudaIsMissing() {
        ProbeResult r = new CudaBackendProvider().probe();
        assertEquals("cuda", r.backend());
        assertFalse(r.available());
        assertTrue(r.reason().contains("libcuda.so.1"), r.reason());
        assertTrue(r.reason().contains("NVIDIA driver"), r.reason());
    }

    @Test
    void serviceLoaderFindsCudaAndProbeAllReportsItUnavailable() {
        List<BackendProvider> ps = Backends.providers();
        assertTrue(ps.stream().anyMatch(p -> p instanceof CudaBackendProvider && p.rank() == 100), ps.toString());
        ProbeResult cuda = Backends.probeAll().stream()
                .filter(r -> r.backend().equals("cuda"))
                .findFirst()
                .orElseThrow();
        assertFalse(cuda.available());
        assertEquals("cuda: not available, no NVIDIA driver (libcuda.so.1 not found)", cuda.toString());
    }

    @Test
    void openingCudaGivesDeviceUnavailableNotAnError() {
        AttnException e = assertThrows(AttnException.class, () -> Backends.open("cuda", BackendOptions.defaults()));
        assertEquals(AttnException.Code.DEVICE_UNAVAILABLE, e.code());
        assertTrue(e.getMessage().contains("libcuda.so.1"), e.getMessage());
        AttnException c =
                assertThrows(AttnException.class, () -> new CudaBackendProvider().create(BackendOptions.defaults()));
        assertEquals(AttnException.Code.DEVICE_UNAVAILABLE, c.code());
    }

    @Test
    void probeDetailsSayWhereTheDriverAndCublasWereLookedFor() {
        List<String> d = new CudaBackendProvider().probeDetails();
        assertEquals(3, d.size(), d.toString());
        assertTrue(
                d.get(0)
                        .startsWith("driver: no NVIDIA driver (libcuda.so.1 not found); looked on the linker path"
                                + " (LD_LIBRARY_PATH, ldconfig) and in /usr/lib/x86_64-linux-gnu, /usr/lib64,"
                                + " /usr/local/nvidia/lib64"),
                d.get(0));
        assertTrue(d.get(1).startsWith("cublas: "), d.get(1));
        assertTrue(d.get(2).startsWith("cudnn: "), d.get(2));
        for (String line : d) assertEquals(1, line.lines().count(), line);
    }

    @Test
    void libcudaIsFoundInAUsualDirectoryOffTheLinkerPath(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws Exception {
        // a library named libcuda.so.1 (no soname, so nothing else in this JVM binds to it) in a driver directory
        java.nio.file.Path src =
                java.nio.file.Files.writeString(dir.resolve("f.c"), "int cuInit(unsigned f) { return 0; }\n");
        CublasLocatorTest.cc(
                dir, "-shared", "-fPIC", "-o", dir.resolve("libcuda.so.1").toString(), src.toString());
        java.nio.file.Path empty = java.nio.file.Files.createDirectories(dir.resolve("empty"));
        CudaProbe.DriverSearch found = CudaProbe.findDriver(List.of(empty, dir));
        assertEquals(dir.resolve("libcuda.so.1") + ", not on the linker path", found.where());
        assertEquals(null, found.reason());
        CudaProbe.DriverSearch none = CudaProbe.findDriver(List.of(empty));
        assertEquals("no NVIDIA driver (libcuda.so.1 not found)", none.reason());
        java.nio.file.Files.writeString(empty.resolve("libcuda.so.1"), "not a library");
        assertTrue(
                CudaProbe.findDriver(List.of(empty))
                        .reason()
                        .startsWith("no NVIDIA driver (libcuda.so.1 not found; " + empty.resolve("libcuda.so.1")
                                + " does not load ("),
                CudaProbe.findDriver(List.of(empty)).reason());
    }

    @Test
    void jcudaLinkFailureIsCaughtAndReportedTheSameEveryTime() {
        // skip the libcuda pre-check so JCudaDriver's class init runs and fails (UnsatisfiedLinkError); the second
        // touch of the class is a NoClassDefFoundError, and the probe must still report the first, clear reason
        ProbeResult first = CudaProbe.probe(BackendOptions.defaults(), false);
        ProbeResult second = CudaProbe.probe(BackendOptions.defaults(), false);
        assertFalse(first.available());
        assertTrue(first.reason().startsWith("JCuda driver bindings failed to load"), first.reason());
        assertTrue(first.reason().contains("libcuda"), first.reason());
        assertEquals(first.reason(), second.reason());
        LinkageError later =
                assertThrows(LinkageError.class, () -> jcuda.driver.JCudaDriver.setExceptionsEnabled(false));
        // a later touch is a NoClassDefFoundError whose message no longer names the library (the JDK truncates the
        // recorded cause): that is why the probe remembers the first reason
        assertTrue(Cuda.linkReason(later).startsWith("NoClassDefFoundError: "), Cuda.linkReason(later));
        assertEquals(1, Cuda.linkReason(later).lines().count());
        assertEquals(1, first.reason().lines().count(), "one line for users");
    }
}
