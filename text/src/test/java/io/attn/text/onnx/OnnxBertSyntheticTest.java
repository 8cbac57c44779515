package io.attn.text.onnx;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtSession;
import com.google.protobuf.ByteString;
import io.attn.tensor.Tensor;
import io.attn.text.onnx.proto.OnnxProto.AttributeProto;
import io.attn.text.onnx.proto.OnnxProto.GraphProto;
import io.attn.text.onnx.proto.OnnxProto.ModelProto;
import io.attn.text.onnx.proto.OnnxProto.NodeProto;
import io.attn.text.onnx.proto.OnnxProto.TensorProto;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Small BERT graphs built with the generated protobuf classes: every storage form, scaling form and activation. */
class OnnxBertSyntheticTest {
    @TempDir
    Path dir;

    @ParameterizedTest
    @EnumSource(TinyBert.Storage.class)
    void weightsComeBackAsStoredInEveryStorage(TinyBert.Storage storage) throws Exception {
        TinyBert tiny = new TinyBert().storage(storage);
        OnnxBert.Imported m = OnnxBert.read(tiny.write(dir, "tiny.onnx"));
        assertWeights(tiny, m);
        assertEquals(
                Map.of(
                        "model_type", "bert",
                        "vocab_size", 11,
                        "hidden_size", 8,
                        "num_hidden_layers", 1,
                        "num_attention_heads", 2,
                        "intermediate_size", 12,
                        "hidden_act", "gelu",
                        "layer_norm_eps", (double) 1e-12f,
                        "max_position_embeddings", 7,
                        "type_vocab_size", 2),
                m.config());
    }

    @ParameterizedTest
    @EnumSource(TinyBert.Scale.class)
    void headCountFromEveryScalingForm(TinyBert.Scale scale) throws Exception {
        for (int heads : new int[] {1, 2, 4, 8}) {
            TinyBert tiny = new TinyBert();
            tiny.scale = scale;
            tiny.heads = heads;
            OnnxBert.Imported m = OnnxBert.read(tiny.write(dir, "tiny.onnx"));
            assertEquals(heads, m.config().get("num_attention_heads"), scale + " with " + heads + " heads");
        }
    }

    @Test
    void activations() throws Exception {
        Map<TinyBert.Activation, String> names = Map.of(
                TinyBert.Activation.ERF, "gelu",
                TinyBert.Activation.TANH, "gelu_new",
                TinyBert.Activation.RELU, "relu");
        for (var e : names.entrySet()) {
            TinyBert tiny = new TinyBert();
            tiny.activation = e.getKey();
            assertEquals(
                    e.getValue(),
                    OnnxBert.read(tiny.write(dir, "tiny.onnx")).config().get("hidden_act"));
        }
    }

    @Test
    void layerNormalizationNodeGivesItsEpsilon() throws Exception {
        TinyBert tiny = new TinyBert();
        tiny.norm = TinyBert.Norm.NODE;
        tiny.epsilon = 1e-5f;
        OnnxBert.Imported m = OnnxBert.read(tiny.write(dir, "tiny.onnx"));
        assertEquals((double) 1e-5f, m.config().get("layer_norm_eps"));
        assertWeights(tiny, m);
    }

    @Test
    void severalLayersNoPoolerOtherEpsilon() throws Exception {
        TinyBert tiny = new TinyBert();
        tiny.layers = 3;
        tiny.pooler = false;
        tiny.epsilon = 1e-7f;
        OnnxBert.Imported m = OnnxBert.read(tiny.write(dir, "tiny.onnx"));
        assertEquals(3, m.config().get("num_hidden_layers"));
        assertEquals((double) 1e-7f, m.config().get("layer_norm_eps"));
        assertWeights(tiny, m);
    }

    /** Linear layers written as Gemm(x, W, bias), and as MatMul(x, Transpose(W)) with W stored (out, in). */
    @Test
    void gemmAndTransposedWeightLinears() throws Exception {
        TinyBert tiny = new TinyBert();
        ModelProto m = tiny.build();
        m = asGemm(m, "encoder.layer.0.attention.self.value.bias");
        m = viaTranspose(m, "encoder.layer.0.output.dense.bias");
        assertWeights(tiny, OnnxBert.read(tiny.write(m, dir, "tiny.onnx")));
    }

    /** The synthetic graphs are real ONNX models: ONNX Runtime runs them (both LayerNorm forms, external data). */
    @Test
    void onnxRuntimeRunsTheSyntheticModels() throws Exception {
        for (TinyBert tiny : new TinyBert[] {new TinyBert(), new TinyBert().storage(TinyBert.Storage.EXTERNAL)}) {
            tiny.scale = TinyBert.Scale.QK_QUARTER;
            tiny.norm = tiny.storage == TinyBert.Storage.EXTERNAL ? TinyBert.Norm.NODE : TinyBert.Norm.PATTERN;
            Path file = tiny.write(dir, "ort.onnx");
            OrtEnvironment env = OrtEnvironment.getEnvironment();
            long[][] ids = {{1, 5, 3, 2}};
            try (OrtSession s = env.createSession(file.toString(), new OrtSession.SessionOptions());
                    OnnxTensor in = OnnxTensor.createTensor(env, ids);
                    OnnxTensor mask = OnnxTensor.createTensor(env, new long[][] {{1, 1, 1, 1}});
                    OnnxTensor types = OnnxTensor.createTensor(env, new long[][] {{0, 0, 1, 1}});
                    OrtSession.Result r =
                            s.run(Map.of("input_ids", in, "attention_mask", mask, "token_type_ids", types))) {
                float[][][] hidden = (float[][][]) r.get(0).getValue();
                assertEquals(4, hidden[0].length);
                assertEquals(8, hidden[0][0].length);
            }
        }
    }

    /** Replaces Add(bias, MatMul(x, W)) by Gemm(x, W, bias). */
    private static ModelProto asGemm(ModelProto m, String bias) {
        ModelProto.Builder b = m.toBuilder();
        GraphProto.Builder g = b.getGraphBuilder();
        NodeProto add = consumer(g, bias);
        NodeProto matMul = producer(g, add.getInput(0).equals(bias) ? add.getInput(1) : add.getInput(0));
        g.removeNode(g.getNodeList().indexOf(matMul));
        g.setNode(
                g.getNodeList().indexOf(add),
                NodeProto.newBuilder()
                        .setOpType("Gemm")
                        .addInput(matMul.getInput(0))
                        .addInput(matMul.getInput(1))
                        .addInput(bias)
                        .addOutput(add.getOutput(0)));
        return b.build();
    }

    /** Stores the MatMul weight of a bias's Linear as (out, in) and feeds it through a Transpose node. */
    private static ModelProto viaTranspose(ModelProto m, String bias) {
        ModelProto.Builder b = m.toBuilder();
        GraphProto.Builder g = b.getGraphBuilder();
        NodeProto add = consumer(g, bias);
        NodeProto matMul = producer(g, add.getInput(0).equals(bias) ? add.getInput(1) : add.getInput(0));
        String weight = matMul.getInput(1);
        for (TensorProto.Builder t : g.getInitializerBuilderList()) {
            if (!t.getName().equals(weight)) continue;
            int rows = (int) t.getDims(0);
            int cols = (int) t.getDims(1);
            FloatBuffer in = t.getRawData()
                    .asReadOnlyByteBuffer()
                    .order(ByteOrder.LITTLE_ENDIAN)
                    .asFloatBuffer();
            ByteBuffer out = ByteBuffer.allocate(4 * rows * cols).order(ByteOrder.LITTLE_ENDIAN);
            for (int c = 0; c < cols; c++) for (int r = 0; r < rows; r++) out.putFloat(in.get(r * cols + c));
            t.clearDims().addDims(cols).addDims(rows).setRawData(ByteString.copyFrom(out.array()));
        }
        g.addNode(NodeProto.newBuilder()
                .setOpType("Transpose")
                .addInput(weight)
                .addOutput(weight + "_t")
                .addAttribute(AttributeProto.newBuilder()
                        .setName("perm")
                        .setType(AttributeProto.AttributeType.INTS)
                        .addInts(1)
                        .addInts(0)));
        g.setNode(g.getNodeList().indexOf(matMul), matMul.toBuilder().setInput(1, weight + "_t"));
        return b.build();
    }

    private static NodeProto consumer(GraphProto.Builder g, String input) {
        return g.getNodeList().stream()
                .filter(n -> n.getInputList().contains(input))
                .findFirst()
                .orElseThrow();
    }

    private static NodeProto producer(GraphProto.Builder g, String output) {
        return g.getNodeList().stream()
                .filter(n -> n.getOutputList().contains(output))
                .findFirst()
                .orElseThrow();
    }

    static void assertWeights(TinyBert tiny, OnnxBert.Imported m) {
        assertEquals(tiny.expected.keySet(), m.weights().keySet());
        for (Map.Entry<String, Tensor> e : tiny.expected.entrySet()) {
            Tensor got = m.weights().get(e.getKey());
            assertArrayEquals(e.getValue().shape().dims(), got.shape().dims(), e.getKey());
            assertArrayEquals(e.getValue().data(), got.data(), e.getKey());
        }
    }
}
