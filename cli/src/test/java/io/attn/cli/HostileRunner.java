package io.attn.cli;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;

/**
 * Runs many CLI invocations in one JVM (started by {@link HostileFilesTest} with a small heap) and reports each one's
 * exit code, the CPU time the JVM spent on it (every thread: a size that lies shows as work, whatever else shares the
 * machine), its wall time and output. Input: a file with one case per line, {@code name TAB arg TAB arg ...}. Output:
 * one line per case, {@code name TAB exit TAB cpuMillis TAB wallMillis TAB base64(stderr) TAB base64(stdout)}. A Throwable that
 * escapes {@link Main#execute} (it must not) is reported as exit -1 with its stack trace as stderr.
 */
public final class HostileRunner {
    private HostileRunner() {}

    public static void main(String[] args) throws Exception {
        List<String> out = new ArrayList<>();
        PrintStream so = System.out, se = System.err;
        for (String line : Files.readAllLines(Path.of(args[0]), StandardCharsets.UTF_8)) {
            if (line.isBlank()) continue;
            String[] f = line.split("\t", -1);
            String[] cli = Arrays.copyOfRange(f, 1, f.length);
            ByteArrayOutputStream err = new ByteArrayOutputStream(), std = new ByteArrayOutputStream();
            int code;
            long t0 = System.nanoTime(), c0 = cpuNanos();
            try (PrintStream pe = new PrintStream(err, true, StandardCharsets.UTF_8);
                    PrintStream po = new PrintStream(std, true, StandardCharsets.UTF_8)) {
                System.setErr(pe);
                System.setOut(po);
                try {
                    code = Main.execute(cli);
                } catch (Throwable t) {
                    t.printStackTrace(pe);
                    code = -1;
                }
            } finally {
                System.setOut(so);
                System.setErr(se);
            }
            long ms = (System.nanoTime() - t0) / 1_000_000, cpu = (cpuNanos() - c0) / 1_000_000;
            Base64.Encoder b64 = Base64.getEncoder();
            out.add(f[0] + "\t" + code + "\t" + cpu + "\t" + ms + "\t" + b64.encodeToString(err.toByteArray()) + "\t"
                    + b64.encodeToString(std.toByteArray()));
        }
        Files.write(Path.of(args[1]), out, StandardCharsets.UTF_8);
    }

    /** CPU time of the whole JVM so far (all threads, the GC's included). */
    static long cpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean)
                        java.lang.management.ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
    }
}
