package io.attn.text;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.StringWriter;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * README's "Sentence embeddings" example, taken from README.md as it stands, compiled with the JDK's compiler against
 * the test class path and run on a small model folder: the README cannot drift from the API.
 */
class ReadmeExampleTest {
    @TempDir
    Path dir;

    @Test
    void theReadmeEmbedderExampleCompilesAndRuns() throws Exception {
        String readme = Files.readString(Path.of("..", "README.md"));
        int at = readme.indexOf("**Sentence embeddings**");
        assertTrue(at > 0, "README lost its Sentence embeddings section");
        int from = readme.indexOf("```java", at) + "```java".length(), to = readme.indexOf("```", from);
        Path model = TinyBert.folder(dir.resolve("all-MiniLM-L6-v2"), TinyBert.weights(3));
        String example = readme.substring(from, to)
                .replace("\"models/all-MiniLM-L6-v2\"", '"' + model.toString().replace("\\", "\\\\") + '"');
        String source =
                "import io.attn.engine.*; import io.attn.text.*; import java.nio.file.Path; import java.util.List;"
                        + " public class ReadmeSnippet { public static void run() throws Exception {\n" + example
                        + "\n} }";
        Path src = dir.resolve("ReadmeSnippet.java");
        Files.writeString(src, source);
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        StringWriter log = new StringWriter();
        boolean ok = javac.getTask(
                        log,
                        null,
                        null,
                        List.of("-d", dir.toString(), "-cp", System.getProperty("java.class.path")),
                        null,
                        javac.getStandardFileManager(null, null, null).getJavaFileObjects(src))
                .call();
        assertTrue(ok, "the README example does not compile:\n" + log + "\n" + source);
        try (URLClassLoader cl =
                new URLClassLoader(new URL[] {dir.toUri().toURL()}, getClass().getClassLoader())) {
            cl.loadClass("ReadmeSnippet").getMethod("run").invoke(null);
        }
        assertEquals("", log.toString().strip());
    }
}
