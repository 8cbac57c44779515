package io.attn.spark;

import io.attn.AttnException;
import java.util.List;

/**
 * The device a task's engine opens, from the device asked for and the GPU addresses Spark assigned to the task
 * ({@code TaskContext.resources().get("gpu")}, empty without GPU scheduling).
 *
 * <ul>
 *   <li>{@code cpu}: the CPU.
 *   <li>{@code cuda}: the task's first GPU (its address is the CUDA device number); without an assigned GPU, CUDA device
 *       0. A GPU the engine cannot use is an error.
 *   <li>{@code auto}: the task's first GPU through CUDA, on the CPU if CUDA cannot use it; without an assigned GPU the
 *       engine's own {@code auto} (CUDA device 0 when usable, else the CPU), with a note saying why no GPU was taken.
 * </ul>
 *
 * @param device what {@link io.attn.engine.EngineOptions#withDevice} gets: {@code cpu}, {@code cuda} or {@code auto}
 * @param ordinal the CUDA device number, or -1 for the engine's default
 * @param cpuIfUnusable whether an unusable GPU falls back to the CPU (for {@code auto})
 * @param note why this device (null when the choice needs no explanation)
 *     <p>Immutable and thread-safe.
 */
record DeviceChoice(String device, int ordinal, boolean cpuIfUnusable, String note) {
    /** The Spark resource name of GPUs. */
    static final String GPU = "gpu";

    static DeviceChoice choose(String requested, List<String> gpuAddresses) {
        List<String> gpus = gpuAddresses == null ? List.of() : gpuAddresses;
        String extra = gpus.size() > 1 ? "; the task holds GPUs " + gpus + ", the model runs on the first" : "";
        switch (requested) {
            case "cpu" -> {
                return new DeviceChoice("cpu", -1, false, null);
            }
            case "cuda" -> {
                if (gpus.isEmpty())
                    return new DeviceChoice(
                            "cuda", -1, false, "no GPU assigned to the task by Spark: CUDA device 0 (the default)");
                int n = ordinal(gpus.get(0));
                if (n < 0)
                    throw AttnException.badInput("Spark assigned the task GPU \"" + gpus.get(0)
                            + "\", which is not a CUDA device number (the GPU discovery script must print device"
                            + " numbers)");
                return new DeviceChoice("cuda", n, false, extra.isEmpty() ? null : extra.substring(2));
            }
            case "auto" -> {
                if (gpus.isEmpty())
                    return new DeviceChoice(
                            "auto",
                            -1,
                            false,
                            "no GPU assigned to the task by Spark (spark.task.resource.gpu.amount is not set)");
                int n = ordinal(gpus.get(0));
                if (n < 0)
                    return new DeviceChoice(
                            "cpu",
                            -1,
                            false,
                            "Spark assigned the task GPU \"" + gpus.get(0)
                                    + "\", which is not a CUDA device number (the GPU discovery script must print"
                                    + " device numbers)");
                return new DeviceChoice("cuda", n, true, extra.isEmpty() ? null : extra.substring(2));
            }
            default -> throw AttnException.badInput("device \"" + requested + "\" is not one of auto, cpu, cuda");
        }
    }

    /** A GPU address as a CUDA device number, or -1 when it is not one. */
    static int ordinal(String address) {
        if (address == null) return -1;
        String a = address.trim();
        if (a.isEmpty() || a.length() > 4) return -1;
        for (int i = 0; i < a.length(); i++) if (a.charAt(i) < '0' || a.charAt(i) > '9') return -1;
        return Integer.parseInt(a);
    }
}
