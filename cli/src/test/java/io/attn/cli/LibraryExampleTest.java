package io.attn.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.fixtures.JavaSnippet;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * README's "Use as a library" example taken from README.md as it stands, its imports included, compiled with the JDK's
 * compiler against the test class path and run on the model it names ({@code examples/models/encoder.safetensors}): the
 * README cannot drift from the API, and an import it lacks fails the build.
 */
class LibraryExampleTest {
    @TempDir
    Path dir;

    @Test
    void theReadmeLibraryExampleCompilesAndRunsAsWritten() throws Exception {
        String readme = Files.readString(Path.of("..", "README.md"));
        int at = readme.indexOf("## Use as a library");
        assertTrue(at > 0, "README lost its library section");
        int from = readme.indexOf("```java", at) + "```java".length(), to = readme.indexOf("```", from);
        List<String> lines = readme.substring(from, to).strip().lines().toList();
        String imports = lines.stream().filter(l -> l.startsWith("import ")).collect(Collectors.joining("\n"));
        String body = lines.stream().filter(l -> !l.startsWith("import ")).collect(Collectors.joining("\n"));
        String model = Path.of("..", "examples", "models", "encoder.safetensors")
                .toAbsolutePath()
                .toString();
        assertTrue(body.contains("\"examples/models/encoder.safetensors\""), body);
        String code = body.replace("\"examples/models/encoder.safetensors\"", '"' + model.replace("\\", "\\\\") + '"');
        PrintStream err = System.err;
        ByteArrayOutputStream caught = new ByteArrayOutputStream();
        try (PrintStream capture = new PrintStream(caught, true, StandardCharsets.UTF_8)) {
            System.setErr(capture);
            JavaSnippet.compileAndRun(dir, "LibrarySnippet", imports, code);
        } finally {
            System.setErr(err);
        }
        assertEquals("", caught.toString(StandardCharsets.UTF_8), "the example's catch reported an error");
    }
}
