package io.attn.text.onnx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.AttnException;
import io.attn.tensor.DType;
import io.attn.tensor.Tensor;
import io.attn.text.onnx.proto.OnnxProto.ModelProto;
import io.attn.text.onnx.proto.OnnxProto.TensorProto;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * langchain4j's int8 all-MiniLM-L6-v2 ({@code -q}: ONNX Runtime's dynamic quantization) as the importer reads it, and
 * the quantized graphs it refuses with one line naming the node.
 */
class OnnxQuantizedTest {
    @TempDir
    static Path dir;

    static Path file;
    static OnnxBert.Imported q;

    @BeforeAll
    static void read() throws IOException {
        file = dir.resolve("all-minilm-l6-v2-q.onnx");
        try (var in = OnnxQuantizedTest.class.getClassLoader().getResourceAsStream("all-minilm-l6-v2-q.onnx")) {
            if (in == null) throw new IOException("all-minilm-l6-v2-q.onnx is not on the test class path");
            Files.copy(in, file);
        }
        q = OnnxBert.read(file);
    }

    @Test
    void linearsAndTablesStayInt8WithTheirScales() {
        Tensor up = q.weights().get("encoder.layer.0.intermediate.dense.weight");
        assertEquals(DType.I8, up.dtype());
        assertEquals(384, up.dim(0)); // (in, out): MatMulInteger's B
        assertEquals(1536, up.dim(1));
        assertEquals(
                1536,
                q.weights()
                        .get("encoder.layer.0.intermediate.dense.weight_scale")
                        .size());
        Tensor zero = q.weights().get("encoder.layer.0.intermediate.dense.weight_zero_point");
        assertEquals(DType.I8, zero.dtype());
        assertEquals(1536, zero.size());
        Tensor word = q.weights().get("embeddings.word_embeddings.weight");
        assertEquals(DType.I8, word.dtype()); // uint8 with zero point 128 in the file: shifted to int8, zero point 0
        assertEquals(30522, word.dim(0));
        assertEquals(
                0,
                q.weights().get("embeddings.word_embeddings.weight_zero_point").int8()[0]);
        assertEquals(
                0.00823059f,
                q.weights().get("embeddings.word_embeddings.weight_scale").get(0),
                1e-8f);
        assertEquals("gelu", q.config().get("hidden_act"));
        assertEquals(12, q.config().get("num_attention_heads"));
        assertEquals(6, q.config().get("num_hidden_layers"));
    }

    @Test
    void aQLinearMatMulIsNamedInOneLine() throws IOException {
        Path bad = rewrite("qlinear.onnx", m -> {
            var g = m.getGraph().toBuilder();
            for (int i = 0; i < g.getNodeCount(); i++)
                if (g.getNode(i).getOpType().equals("MatMulInteger")) {
                    g.setNode(i, g.getNode(i).toBuilder().setOpType("QLinearMatMul"));
                    break;
                }
            return m.toBuilder().setGraph(g).build();
        });
        AttnException e = assertThrows(AttnException.class, () -> OnnxBert.read(bad));
        assertEquals(AttnException.Code.BAD_INPUT, e.code());
        assertTrue(
                e.getMessage().contains("QLinearMatMul '/encoder/layer.0/attention/self/query/MatMul_quant'"),
                e.getMessage());
        assertEquals(1, e.getMessage().lines().count());
    }

    @Test
    void fourBitWeightsAreNamed() throws IOException {
        Path bad = rewrite("int4.onnx", m -> {
            var g = m.getGraph().toBuilder();
            for (int i = 0; i < g.getInitializerCount(); i++)
                if (g.getInitializer(i).getName().equals("onnx::MatMul_787_quantized")) {
                    g.setInitializer(i, g.getInitializer(i).toBuilder().setDataType(22)); // INT4
                    break;
                }
            return m.toBuilder().setGraph(g).build();
        });
        AttnException e = assertThrows(AttnException.class, () -> OnnxBert.read(bad));
        assertTrue(e.getMessage().contains("onnx::MatMul_787_quantized"), e.getMessage());
        assertEquals(1, e.getMessage().lines().count());
    }

    @Test
    void perRowZeroPointsAreRefused() throws IOException {
        Path bad = rewrite("perrow.onnx", m -> {
            var g = m.getGraph().toBuilder();
            for (int i = 0; i < g.getInitializerCount(); i++)
                if (g.getInitializer(i).getName().equals("onnx::MatMul_798_zero_point")) {
                    TensorProto t = g.getInitializer(i);
                    g.setInitializer(
                            i,
                            t.toBuilder()
                                    .clearDims()
                                    .addDims(384)
                                    .setRawData(com.google.protobuf.ByteString.copyFrom(new byte[384])));
                    break;
                }
            return m.toBuilder().setGraph(g).build();
        });
        AttnException e = assertThrows(AttnException.class, () -> OnnxBert.read(bad));
        assertTrue(
                e.getMessage().contains("intermediate.dense") && e.getMessage().contains("384 zero points"),
                e.getMessage());
        assertEquals(1, e.getMessage().lines().count());
    }

    private static Path rewrite(String name, UnaryOperator<ModelProto> change) throws IOException {
        ModelProto m = ModelProto.parseFrom(Files.readAllBytes(file));
        Path out = dir.resolve(name);
        Files.write(out, change.apply(m).toByteArray());
        return out;
    }
}
