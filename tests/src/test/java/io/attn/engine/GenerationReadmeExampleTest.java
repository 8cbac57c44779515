package io.attn.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.fixtures.JavaSnippet;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * README's "Text generation" example, taken from README.md as it stands, compiled with the JDK's compiler against the
 * test class path and run on the tiny language model it names ({@code examples/models/tiny-lm.safetensors}): it prints
 * what its comment says, so neither the README nor the API can drift.
 */
class GenerationReadmeExampleTest {
    @TempDir
    Path dir;

    @Test
    void theReadmeGenerationExampleCompilesAndPrintsWhatItSays() throws Exception {
        String readme = Files.readString(Path.of("..", "README.md"));
        int at = readme.indexOf("**Text generation**");
        assertTrue(at > 0, "README lost its Text generation section");
        int from = readme.indexOf("```java", at) + "```java".length(), to = readme.indexOf("```", from);
        String example = readme.substring(from, to);
        Path models = Path.of("..", "examples", "models").toAbsolutePath().normalize();
        for (String f : new String[] {"tiny-lm.safetensors", "tiny-lm.vocab.txt"}) {
            assertTrue(example.contains("\"examples/models/" + f + "\""), example);
            example = example.replace(
                    "\"examples/models/" + f + "\"",
                    '"' + models.resolve(f).toString().replace("\\", "\\\\") + '"');
        }
        int c = example.indexOf("System.out.println(");
        String said = example.substring(example.indexOf("// ", c) + 3, example.indexOf('\n', c))
                .strip();
        PrintStream out = System.out;
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        try (PrintStream capture = new PrintStream(printed, true, StandardCharsets.UTF_8)) {
            System.setOut(capture);
            JavaSnippet.compileAndRun(
                    dir, "GenerationSnippet", "import io.attn.engine.*; import java.nio.file.Path;", example);
        } finally {
            System.setOut(out);
        }
        assertEquals(said, printed.toString(StandardCharsets.UTF_8).strip());
    }
}
