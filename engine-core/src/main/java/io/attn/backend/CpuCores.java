package io.attn.backend;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * How many threads the CPU backend runs by default: one per physical core among the processors this process may run on,
 * as ONNX Runtime's intra-op pool and PyTorch do, never more than {@link Runtime#availableProcessors()} (which also
 * follows a container's CPU quota). Hyperthreads of one core share its FMA pipes and caches, so a second GEMM thread on
 * a sibling adds no arithmetic and makes the pool wait for the slower of two halves; {@code --threads} (or {@link
 * BackendOptions#threads}) still chooses any count.
 *
 * <p>Linux: the process's CPUs from {@code /proc/self/status} ({@code Cpus_allowed_list}: {@code taskset}, cgroup
 * cpusets), each CPU's core from {@code /sys/devices/system/cpu/cpuN/topology/core_cpus_list} (or the older {@code
 * thread_siblings_list}). Anything unreadable (another OS, a sandbox without sysfs) falls back to the available
 * processors. Read once per JVM.
 */
public final class CpuCores {
    private static final Topology HOST = read(
            Path.of("/sys/devices/system/cpu"),
            Path.of("/proc/self/status"),
            Runtime.getRuntime().availableProcessors());

    private CpuCores() {}

    /**
     * What was read: the processors available to the JVM, the physical cores among the CPUs this process may use (equal
     * to {@code available} where the topology could not be read), and whether it could.
     */
    public record Topology(int available, int physical, boolean known) {
        /** The default thread count: the physical cores, at most the available processors, at least 1. */
        public int defaultThreads() {
            return Math.max(1, Math.min(available, physical));
        }

        /** {@code 2 processors, 2 physical cores} or {@code 4 processors, 2 physical cores (SMT)}. */
        public String describe() {
            if (!known) return available + " processors (topology not readable)";
            return available + " processors, " + physical + " physical core" + (physical == 1 ? "" : "s")
                    + (physical < available ? " (SMT: the default thread count is " + defaultThreads() + ")" : "");
        }
    }

    /** This machine's, read once. */
    public static Topology host() {
        return HOST;
    }

    /** The default thread count of this machine ({@link Topology#defaultThreads}). */
    public static int defaultThreads() {
        return HOST.defaultThreads();
    }

    /** Reads a sysfs CPU tree and a {@code /proc/<pid>/status} file (paths given, for tests). */
    static Topology read(Path sysCpu, Path procStatus, int available) {
        try {
            List<Integer> cpus = allowed(procStatus);
            if (cpus == null)
                cpus = parseList(Files.readString(sysCpu.resolve("online")).trim());
            Set<String> cores = new TreeSet<>();
            for (int c : cpus) {
                Path topo = sysCpu.resolve("cpu" + c).resolve("topology");
                Path f = Files.exists(topo.resolve("core_cpus_list"))
                        ? topo.resolve("core_cpus_list")
                        : topo.resolve("thread_siblings_list");
                cores.add(parseList(Files.readString(f).trim()).toString());
            }
            if (cores.isEmpty()) return new Topology(available, available, false);
            return new Topology(available, cores.size(), true);
        } catch (IOException | RuntimeException e) {
            return new Topology(available, available, false);
        }
    }

    /** {@code Cpus_allowed_list} of a status file, or null without one. */
    private static List<Integer> allowed(Path status) throws IOException {
        if (!Files.exists(status)) return null;
        for (String line : Files.readAllLines(status))
            if (line.startsWith("Cpus_allowed_list:"))
                return parseList(line.substring(line.indexOf(':') + 1).trim());
        return null;
    }

    /** A kernel CPU list, {@code 0-3,8,10-11}, as the CPU numbers in order. */
    static List<Integer> parseList(String s) {
        List<Integer> out = new ArrayList<>();
        if (s.isEmpty()) return out;
        for (String part : s.split(",")) {
            String p = part.trim();
            int dash = p.indexOf('-');
            int from = Integer.parseInt(dash < 0 ? p : p.substring(0, dash));
            int to = dash < 0 ? from : Integer.parseInt(p.substring(dash + 1));
            if (from < 0 || to < from || to - from > 65536) throw new IllegalArgumentException("CPU list " + s);
            for (int c = from; c <= to; c++) out.add(c);
        }
        return out;
    }
}
