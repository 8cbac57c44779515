package io.attn.text;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.fixtures.JavaSnippet;
import java.nio.file.Files;
import java.nio.file.Path;
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
        JavaSnippet.compileAndRun(
                dir,
                "ReadmeSnippet",
                "import io.attn.engine.*; import io.attn.text.*; import java.nio.file.Path; import java.util.List;",
                example);
    }
}
