package io.attn.text.onnx;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.tensor.Tensor;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The two real fp32 exports in langchain4j's test jars: all-MiniLM-L6-v2 (opset 14, with the pooler) and
 * bge-small-en-v1.5 (opset 11, no pooler). Expected values were read offline from the files with the Python onnx
 * package (the Linear weights by following each named bias's Add back to its MatMul and transposing), independently of
 * this importer.
 */
class OnnxBertRealModelsTest {
    @TempDir
    static Path dir;

    private static OnnxBert.Imported minilm;
    private static OnnxBert.Imported bge;

    @BeforeAll
    static void readBoth() throws IOException {
        minilm = OnnxBert.read(resource("all-minilm-l6-v2.onnx"));
        bge = OnnxBert.read(resource("bge-small-en-v1.5.onnx"));
    }

    /** Copies a class-path resource (a jar entry) to the temp directory. */
    static Path resource(String name) throws IOException {
        Path file = dir.resolve(name);
        if (Files.exists(file)) return file;
        try (InputStream in = OnnxBertRealModelsTest.class.getClassLoader().getResourceAsStream(name)) {
            if (in == null) throw new IOException(name + " is not on the test class path");
            Files.copy(in, file);
        }
        return file;
    }

    @Test
    void minilmConfig() {
        Map<String, Object> expected = config(6, 12, 1536);
        assertEquals(expected, minilm.config());
        assertEquals(List.copyOf(expected.keySet()), List.copyOf(minilm.config().keySet()));
        assertEquals((double) (float) 1e-12, minilm.config().get("layer_norm_eps"));
    }

    @Test
    void bgeConfig() {
        assertEquals(config(12, 12, 1536), bge.config());
    }

    @Test
    void minilmHasEveryBertModelWeightAndNothingElse() {
        assertEquals(expectedShapes(6, 1536, true), shapes(minilm));
    }

    @Test
    void bgeHasEveryBertModelWeightButNoPooler() {
        assertEquals(expectedShapes(12, 1536, false), shapes(bge));
        assertFalse(bge.weights().containsKey("pooler.dense.weight"));
    }

    @Test
    void minilmLinearWeightsAreTransposedToOutIn() {
        Tensor up = minilm.weights().get("encoder.layer.0.intermediate.dense.weight"); // onnx::MatMul_896, (384, 1536)
        assertEquals(-0.0287258923f, up.get(0, 0));
        assertEquals(-0.0398831181f, up.get(1535, 383));
        assertEquals(0.00288865017f, up.get(7, 300));
        assertEquals(0.0155473007f, up.get(1000, 5));
        Tensor key = minilm.weights().get("encoder.layer.5.attention.self.key.weight"); // onnx::MatMul_951
        assertEquals(-0.00833990332f, key.get(0, 1));
        assertEquals(0.0576808117f, key.get(383, 0));
        assertEquals(0.0499113649f, key.get(100, 200));
    }

    @Test
    void minilmPoolerGemmWithTransBIsKeptAsIs() {
        Tensor pooler = minilm.weights().get("pooler.dense.weight");
        assertEquals(-0.0151290894f, pooler.get(0, 0));
        assertEquals(-0.0132293701f, pooler.get(1, 2));
        assertEquals(0.00434494019f, pooler.get(383, 17));
    }

    @Test
    void minilmNamedInitializersAreCopied() {
        assertEquals(
                0.00458033523f,
                minilm.weights().get("embeddings.word_embeddings.weight").get(101, 7));
        assertEquals(
                -0.00632095337f,
                minilm.weights().get("embeddings.position_embeddings.weight").get(511, 383));
        assertEquals(
                -0.000898361206f,
                minilm.weights().get("embeddings.token_type_embeddings.weight").get(1, 0));
        assertEquals(
                -0.00955489837f,
                minilm.weights().get("encoder.layer.3.output.LayerNorm.bias").get(17));
    }

    @Test
    void bgeValues() {
        Tensor down = bge.weights().get("encoder.layer.11.output.dense.weight"); // onnx::MatMul_1680, (1536, 384)
        assertEquals(0.00347900391f, down.get(0, 0));
        assertEquals(-0.00503921509f, down.get(383, 1535));
        assertEquals(-0.00271224976f, down.get(200, 1000));
        Tensor query = bge.weights().get("encoder.layer.0.attention.self.query.weight"); // onnx::MatMul_1525
        assertEquals(0.190551758f, query.get(5, 9));
        assertEquals(-0.0278015137f, query.get(383, 383));
        assertEquals(
                0.00329208374f,
                bge.weights().get("embeddings.word_embeddings.weight").get(101, 7));
        assertEquals(
                0.0160522461f,
                bge.weights().get("encoder.layer.3.output.LayerNorm.bias").get(17));
    }

    @Test
    void everyWeightIsFinite() {
        for (var w : minilm.weights().entrySet()) assertTrue(w.getValue().allFinite(), w.getKey());
    }

    private static Map<String, Object> config(int layers, int heads, int intermediate) {
        Map<String, Object> c = new LinkedHashMap<>();
        c.put("model_type", "bert");
        c.put("vocab_size", 30522);
        c.put("hidden_size", 384);
        c.put("num_hidden_layers", layers);
        c.put("num_attention_heads", heads);
        c.put("intermediate_size", intermediate);
        c.put("hidden_act", "gelu");
        c.put("layer_norm_eps", (double) (float) 1e-12);
        c.put("max_position_embeddings", 512);
        c.put("type_vocab_size", 2);
        return c;
    }

    private static Map<String, List<Integer>> shapes(OnnxBert.Imported m) {
        Map<String, List<Integer>> s = new LinkedHashMap<>();
        m.weights().forEach((k, v) -> s.put(k, dims(v)));
        return s;
    }

    private static List<Integer> dims(Tensor t) {
        List<Integer> d = new ArrayList<>();
        for (int i = 0; i < t.rank(); i++) d.add(t.dim(i));
        return d;
    }

    /** BertModel's state_dict names and shapes for hidden 384, 30522 words, 512 positions, 2 token types. */
    static Map<String, List<Integer>> expectedShapes(int layers, int intermediate, boolean pooler) {
        int e = 384;
        Map<String, List<Integer>> s = new LinkedHashMap<>();
        s.put("embeddings.word_embeddings.weight", List.of(30522, e));
        s.put("embeddings.position_embeddings.weight", List.of(512, e));
        s.put("embeddings.token_type_embeddings.weight", List.of(2, e));
        s.put("embeddings.LayerNorm.weight", List.of(e));
        s.put("embeddings.LayerNorm.bias", List.of(e));
        for (int i = 0; i < layers; i++) {
            String p = "encoder.layer." + i + ".";
            for (String l : List.of("attention.self.query", "attention.self.key", "attention.self.value")) {
                s.put(p + l + ".weight", List.of(e, e));
                s.put(p + l + ".bias", List.of(e));
            }
            s.put(p + "attention.output.dense.weight", List.of(e, e));
            s.put(p + "attention.output.dense.bias", List.of(e));
            s.put(p + "attention.output.LayerNorm.weight", List.of(e));
            s.put(p + "attention.output.LayerNorm.bias", List.of(e));
            s.put(p + "intermediate.dense.weight", List.of(intermediate, e));
            s.put(p + "intermediate.dense.bias", List.of(intermediate));
            s.put(p + "output.dense.weight", List.of(e, intermediate));
            s.put(p + "output.dense.bias", List.of(e));
            s.put(p + "output.LayerNorm.weight", List.of(e));
            s.put(p + "output.LayerNorm.bias", List.of(e));
        }
        if (pooler) {
            s.put("pooler.dense.weight", List.of(e, e));
            s.put("pooler.dense.bias", List.of(e));
        }
        return s;
    }

    @Test
    void weightOrderIsBertModelsStateDictOrder() {
        assertArrayEquals(
                expectedShapes(6, 1536, true).keySet().toArray(),
                minilm.weights().keySet().toArray());
    }
}
