package io.attn.backend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The default thread count from sysfs trees written here as the kernel lays them out: SMT siblings counted once, only
 * the CPUs the process may use, never more than the available processors, and the available processors whenever the
 * topology cannot be read.
 */
class CpuCoresTest {
    @TempDir
    Path dir;

    /** A sysfs cpu folder: {@code siblings[i]} is CPU i's core_cpus_list ({@code old}: thread_siblings_list only). */
    Path sys(boolean old, String... siblings) throws IOException {
        Path cpu = dir.resolve("cpu");
        Files.createDirectories(cpu);
        Files.writeString(cpu.resolve("online"), "0-" + (siblings.length - 1) + "\n");
        for (int i = 0; i < siblings.length; i++) {
            Path topo = cpu.resolve("cpu" + i).resolve("topology");
            Files.createDirectories(topo);
            Files.writeString(topo.resolve(old ? "thread_siblings_list" : "core_cpus_list"), siblings[i] + "\n");
        }
        return cpu;
    }

    Path status(String allowed) throws IOException {
        Path f = dir.resolve("status");
        Files.writeString(
                f,
                "Name:\tjava\nThreads:\t20\n" + (allowed == null ? "" : "Cpus_allowed_list:\t" + allowed + "\n")
                        + "voluntary_ctxt_switches:\t5\n");
        return f;
    }

    @Test
    void hyperthreadSiblingsCountAsOneCore() throws IOException {
        // 2 cores x 2 threads, numbered as Intel does (0 and 2 share a core) and as AMD does (0 and 1)
        CpuCores.Topology t = CpuCores.read(sys(false, "0,2", "1,3", "0,2", "1,3"), status("0-3"), 4);
        assertEquals(new CpuCores.Topology(4, 2, true), t);
        assertEquals(2, t.defaultThreads());
        assertTrue(t.describe().contains("SMT"), t.describe());
        dir.resolve("cpu").toFile().renameTo(dir.resolve("intel").toFile());
        assertEquals(
                2,
                CpuCores.read(sys(true, "0-1", "0-1", "2-3", "2-3"), status("0-3"), 4)
                        .physical());
    }

    @Test
    void onlyTheProcessesCpusCount() throws IOException {
        Path cpu = sys(false, "0-1", "0-1", "2-3", "2-3");
        assertEquals(2, CpuCores.read(cpu, status("0,2"), 2).defaultThreads()); // one thread of each core
        assertEquals(1, CpuCores.read(cpu, status("0-1"), 2).defaultThreads()); // both threads of one core
        assertEquals(2, CpuCores.read(cpu, status(null), 4).defaultThreads()); // no list: the online CPUs
    }

    @Test
    void neverMoreThanTheAvailableProcessors() throws IOException {
        // a container's CPU quota lowers availableProcessors below the cores its cpuset lists
        CpuCores.Topology t = CpuCores.read(sys(false, "0", "1", "2", "3"), status("0-3"), 2);
        assertEquals(4, t.physical());
        assertEquals(2, t.defaultThreads());
        assertFalse(t.describe().contains("SMT"), t.describe());
    }

    @Test
    void withoutATopologyTheAvailableProcessors() throws IOException {
        assertEquals(new CpuCores.Topology(3, 3, false), CpuCores.read(dir.resolve("nowhere"), status("0-2"), 3));
        Path cpu = sys(false, "0", "1");
        Files.writeString(cpu.resolve("cpu1/topology/core_cpus_list"), "garbage\n");
        assertEquals(new CpuCores.Topology(2, 2, false), CpuCores.read(cpu, status("0-1"), 2));
        assertEquals(1, new CpuCores.Topology(1, 0, true).defaultThreads());
    }

    @Test
    void kernelCpuLists() {
        assertEquals(List.of(0, 1, 2, 3, 8, 10, 11), CpuCores.parseList("0-3,8,10-11"));
        assertEquals(List.of(), CpuCores.parseList(""));
    }

    @Test
    void thisMachineGivesAtLeastOneThread() {
        CpuCores.Topology t = CpuCores.host();
        assertTrue(
                t.defaultThreads() >= 1
                        && t.defaultThreads() <= Runtime.getRuntime().availableProcessors(),
                t.describe());
        assertEquals(t.defaultThreads(), BackendOptions.defaults().effectiveThreads());
    }
}
