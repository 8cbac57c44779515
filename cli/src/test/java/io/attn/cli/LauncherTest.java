package io.attn.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
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
