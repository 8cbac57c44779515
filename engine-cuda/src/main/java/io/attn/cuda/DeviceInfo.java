package io.attn.cuda;

import static io.attn.cuda.Cuda.check;
import static jcuda.driver.JCudaDriver.cuDeviceGet;
import static jcuda.driver.JCudaDriver.cuDeviceGetAttribute;
import static jcuda.driver.JCudaDriver.cuDeviceGetCount;
import static jcuda.driver.JCudaDriver.cuDeviceGetName;
import static jcuda.driver.JCudaDriver.cuDeviceTotalMem;
import static jcuda.driver.JCudaDriver.cuDriverGetVersion;
import static jcuda.driver.JCudaDriver.cuInit;

import io.attn.AttnException;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import jcuda.driver.CUdevice;
import jcuda.driver.CUdevice_attribute;

/** What the driver says about one device; no context is created. Needs the JCuda driver bindings loaded. */
record DeviceInfo(
        int ordinal, int count, String name, int ccMajor, int ccMinor, int sms, long totalMem, int driverVersion) {

    /** cuInit, then the properties of device {@code ordinal}. */
    static DeviceInfo query(int ordinal) {
        check(cuInit(0), "cuInit");
        int[] n = {0};
        check(cuDeviceGetCount(n), "cuDeviceGetCount");
        if (n[0] == 0)
            throw new AttnException(AttnException.Code.DEVICE_UNAVAILABLE, "the driver reports no CUDA device");
        if (ordinal < 0 || ordinal >= n[0])
            throw new AttnException(
                    AttnException.Code.DEVICE_UNAVAILABLE,
                    "CUDA device " + ordinal + " does not exist (" + n[0] + " device(s))");
        CUdevice dev = new CUdevice();
        check(cuDeviceGet(dev, ordinal), "cuDeviceGet(" + ordinal + ")");
        byte[] nameBuf = new byte[256];
        check(cuDeviceGetName(nameBuf, nameBuf.length, dev), "cuDeviceGetName");
        int len = 0;
        while (len < nameBuf.length && nameBuf[len] != 0) len++;
        int[] v = {0};
        check(
                cuDeviceGetAttribute(v, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev),
                "cuDeviceGetAttribute(cc major)");
        int major = v[0];
        check(
                cuDeviceGetAttribute(v, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev),
                "cuDeviceGetAttribute(cc minor)");
        int minor = v[0];
        check(
                cuDeviceGetAttribute(v, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev),
                "cuDeviceGetAttribute(SM count)");
        int sms = v[0];
        long[] mem = {0};
        check(cuDeviceTotalMem(mem, dev), "cuDeviceTotalMem");
        check(cuDriverGetVersion(v), "cuDriverGetVersion");
        return new DeviceInfo(
                ordinal,
                n[0],
                new String(nameBuf, 0, len, StandardCharsets.US_ASCII).trim(),
                major,
                minor,
                sms,
                mem[0],
                v[0]);
    }

    /** The first CUDA driver version that reads our PTX (ISA 9.0, emitted by nvcc 13). */
    static final int MIN_DRIVER = 13000;

    /**
     * Null when attn can use this device, else why not: compute capability 7.5 (Turing) or newer (the PTX targets
     * sm_75) and a CUDA 13 driver (R580 or newer; older drivers reject PTX ISA 9.0 at module load).
     */
    String unsupportedReason() {
        if (!(ccMajor > 7 || (ccMajor == 7 && ccMinor >= 5)))
            return name + " has compute capability " + ccMajor + "." + ccMinor + "; attn needs 7.5 or newer";
        if (driverVersion < MIN_DRIVER)
            return "the NVIDIA driver supports " + driverString() + "; attn's kernels (PTX ISA 9.0) need a CUDA 13"
                    + " driver (R580 or newer)";
        return null;
    }

    String driverString() {
        return "CUDA driver API " + driverVersion / 1000 + "." + (driverVersion % 1000) / 10;
    }

    /** e.g. {@code NVIDIA H100 80GB HBM3 (device 0 of 1, sm_90, 132 SMs, 79.1 GiB), CUDA driver API 13.0}. */
    String describe() {
        return String.format(
                Locale.ROOT,
                "%s (device %d of %d, sm_%d%d, %d SMs, %.1f GiB), %s",
                name,
                ordinal,
                count,
                ccMajor,
                ccMinor,
                sms,
                totalMem / (1024.0 * 1024 * 1024),
                driverString());
    }
}
