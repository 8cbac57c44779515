package io.attn.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The launchers ({@code ./attn} and the bundle's {@code attn}): the filter they put on the JVM's stderr drops the
 * Vector API's start-up line and passes everything else through as it comes, a progress bar's unfinished line
 * included (a line-buffered filter held it back until the run ended); {@code ./attn java} is the JDK 25 {@code java}
 * with the engine's flags (README's service command).
 */
class LauncherTest {
    static final Path ATTN = Path.of("..", "attn"), BUNDLE = Path.of("..", "tools", "bundle-launcher.sh");

    /** The shell function {@code name} of a launcher script, to run on its own. */
    static String function(Path script, String name) throws Exception {
        String s = Files.readString(script);
        int from = s.indexOf(name + "() {");
        assertTrue(from >= 0, script + " has no " + name);
        return s.substring(from, s.indexOf("\n}\n", from) + 3);
    }

    @Test
    void theStderrFilterPassesPartialLinesAsTheyComeAndDropsTheWarning() throws Exception {
        for (Path script : new Path[] {ATTN, BUNDLE}) {
            Process p = new ProcessBuilder(
                            "bash", "-c", function(script, "drop_vector_warning") + "drop_vector_warning")
                    .redirectErrorStream(true)
                    .start();
            OutputStream in = p.getOutputStream();
            InputStream out = p.getInputStream();
            in.write("WARNING: Using incubator modules: jdk.incubator.vector\n[###   ]  50%\r"
                    .getBytes(StandardCharsets.UTF_8));
            in.flush();
            byte[] want = "[###   ]  50%\r".getBytes(StandardCharsets.UTF_8), got = new byte[want.length];
            long deadline = System.nanoTime() + 10_000_000_000L;
            int n = 0;
            while (n < want.length && System.nanoTime() < deadline) {
                if (out.available() > 0) n += out.read(got, n, want.length - n);
                else Thread.sleep(10);
            }
            // the unfinished line arrived while the writer is still running: nothing waits for its end
            assertEquals(
                    new String(want, StandardCharsets.UTF_8),
                    new String(got, 0, n, StandardCharsets.UTF_8),
                    script.toString());
            in.write("\nattn: done\n".getBytes(StandardCharsets.UTF_8));
            in.close();
            assertEquals("\nattn: done\n", new String(out.readAllBytes(), StandardCharsets.UTF_8));
            assertTrue(p.waitFor(10, TimeUnit.SECONDS));
            assertEquals(0, p.exitValue());
        }
    }

    /**
     * TERM sent to the launcher's own PID (what {@code kill $!}, systemd and container runtimes do) stops the JVM of a
     * running {@code attn embed}, which removes its partial output, and the launcher exits with the JVM's status (143)
     * once the JVM is gone. Before, the JVM ran under the launcher's pipeline and kept running; its output appeared
     * after the caller had been told the run failed.
     */
    @Test
    void termToTheLauncherStopsTheJvmAndItsOutput() throws Exception {
        signalToTheLauncherStopsTheJvmAndItsOutput("TERM", 143);
    }

    /**
     * INT (Ctrl-C, {@code kill -INT}) likewise: a background command of a non-interactive shell starts with INT
     * ignored, which the JVM would keep (it then ran to the end); the launcher restores it. The launcher is started
     * with INT at its default (through perl: a process started with INT ignored keeps it ignored, as {@code nohup}
     * wants, and a test run from such a process would inherit that).
     */
    @Test
    void intToTheLauncherStopsTheJvmAndItsOutput() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(
                new ProcessBuilder("perl", "-e", "exit 0").start().waitFor() == 0, "perl runs");
        signalToTheLauncherStopsTheJvmAndItsOutput("INT", 130);
    }

    private void signalToTheLauncherStopsTheJvmAndItsOutput(String signal, int status) throws Exception {
        Path dir = Files.createTempDirectory("attn-launcher");
        Path in = dir.resolve("texts.txt");
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < 400_000; i++)
            b.append("the quick brown fox jumps over the lazy dog ").append(i).append('\n');
        Files.writeString(in, b);
        Path out = dir.resolve("out.npy");
        List<String> cmd = new java.util.ArrayList<>(List.of(
                "bash",
                ATTN.toString(),
                "embed",
                "--model",
                Path.of("..", "tests", "families", "bert").toString(),
                "--input",
                in.toString(),
                "--output",
                out.toString(),
                "--threads",
                "1"));
        if (signal.equals("INT"))
            cmd.addAll(0, List.of("perl", "-e", "$SIG{INT} = $SIG{QUIT} = 'DEFAULT'; exec @ARGV or die"));
        Process p = new ProcessBuilder(cmd)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .start();
        try {
            long deadline = System.nanoTime() + 120_000_000_000L;
            while (tmpFiles(dir) == 0 && p.isAlive() && System.nanoTime() < deadline) Thread.sleep(20);
            assertEquals(1, tmpFiles(dir), "the run started writing its output");
            new ProcessBuilder("kill", "-" + signal, Long.toString(p.pid()))
                    .start()
                    .waitFor();
            assertTrue(p.waitFor(30, TimeUnit.SECONDS), "the launcher exited");
            assertEquals(status, p.exitValue(), "the JVM's status for " + signal);
            assertEquals(0, tmpFiles(dir), "the JVM removed its partial output");
            assertTrue(!Files.exists(out));
            assertEquals(List.of(), jvmsWriting(out), "no JVM left running");
        } finally { // a failed run leaves nothing running for the next tests
            jvmsWriting(out).forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
        }
    }

    private static List<ProcessHandle> jvmsWriting(Path out) {
        return ProcessHandle.allProcesses()
                .filter(h -> h.info().commandLine().orElse("").contains(out.toString()))
                .toList();
    }

    private static long tmpFiles(Path dir) throws java.io.IOException {
        try (var s = Files.list(dir)) {
            return s.filter(f -> f.getFileName().toString().endsWith(".tmp")).count();
        }
    }

    @Test
    void attnJavaIsTheJdk25JavaWithTheEngineFlags() throws Exception {
        Process p = new ProcessBuilder("bash", ATTN.toString(), "java", "-XshowSettings:properties", "-version")
                .redirectErrorStream(true)
                .start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        assertEquals(0, p.exitValue(), out);
        assertTrue(out.contains("java.specification.version = 25"), out);
        assertTrue(out.contains("Using incubator modules: jdk.incubator.vector"), out); // --add-modules was passed
    }
}
