package io.attn.text.onnx;

import com.google.protobuf.ByteString;
import io.attn.tensor.Tensor;
import io.attn.text.onnx.proto.OnnxProto.AttributeProto;
import io.attn.text.onnx.proto.OnnxProto.GraphProto;
import io.attn.text.onnx.proto.OnnxProto.ModelProto;
import io.attn.text.onnx.proto.OnnxProto.NodeProto;
import io.attn.text.onnx.proto.OnnxProto.OperatorSetIdProto;
import io.attn.text.onnx.proto.OnnxProto.StringStringEntryProto;
import io.attn.text.onnx.proto.OnnxProto.TensorProto;
import io.attn.text.onnx.proto.OnnxProto.TensorProto.DataType;
import io.attn.text.onnx.proto.OnnxProto.TensorShapeProto;
import io.attn.text.onnx.proto.OnnxProto.TypeProto;
import io.attn.text.onnx.proto.OnnxProto.ValueInfoProto;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * Builds a small BERT encoder as torch.onnx exports it (the node pattern of the real exports: Gathers into named
 * tables, MatMul by an unnamed (in, out) weight then Add of the named bias, the decomposed LayerNorm, Reshape/Transpose
 * head split, scaled scores, Erf gelu, a Gemm+Tanh pooler), with the weights stored the way a test asks. {@link
 * #expected} holds what an importer must give back, in PyTorch's orientation. Not thread-safe.
 */
final class TinyBert {
    enum Storage {
        RAW,
        FLOAT_DATA,
        FLOAT16,
        FLOAT16_IN_INT32,
        BFLOAT16,
        EXTERNAL
    }

    enum Scale {
        DIV,
        MUL,
        QK_QUARTER
    }

    enum Activation {
        ERF,
        TANH,
        RELU
    }

    enum Norm {
        PATTERN,
        NODE
    }

    static final String EXTERNAL_FILE = "weights.bin";

    int vocab = 11;
    int positions = 7;
    int types = 2;
    int hidden = 8;
    int heads = 2;
    int intermediate = 12;
    int layers = 1;
    float epsilon = 1e-12f;
    boolean pooler = true;
    Storage storage = Storage.RAW;
    Scale scale = Scale.DIV;
    Activation activation = Activation.ERF;
    Norm norm = Norm.PATTERN;

    final Map<String, Tensor> expected = new LinkedHashMap<>();

    private Random random;
    private final GraphProto.Builder graph = GraphProto.newBuilder();
    private final ByteArrayOutputStream externalData = new ByteArrayOutputStream();
    private int counter;

    TinyBert storage(Storage s) {
        storage = s;
        return this;
    }

    /** The model, the same at each call; {@link #write} also writes the external data file if the storage has one. */
    ModelProto build() {
        random = new Random(42);
        graph.clear().setName("tiny_bert");
        expected.clear();
        externalData.reset();
        counter = 0;
        String ids = input("input_ids");
        String mask = input("attention_mask");
        String typeIds = input("token_type_ids");
        String extendedMask = node(
                "Mul",
                node("Sub", constant(1f), node("Cast", List.of(node("Unsqueeze", mask, ints(1, 2))), intAttr("to", 1))),
                constant(-3.4028234663852886e38f));

        String word = node("Gather", table("embeddings.word_embeddings.weight", vocab), ids);
        String type = node("Gather", table("embeddings.token_type_embeddings.weight", types), typeIds);
        String position = node("Gather", table("embeddings.position_embeddings.weight", positions), positionIds(ids));
        String x = layerNorm("embeddings.LayerNorm", node("Add", node("Add", word, type), position));

        for (int i = 0; i < layers; i++) x = layer("encoder.layer." + i + ".", x, extendedMask);
        graph.addOutput(ValueInfoProto.newBuilder().setName(x));
        if (pooler) {
            String first = node("Gather", List.of(x, intScalar(0)), intAttr("axis", 1));
            String dense = node(
                    "Gemm",
                    List.of(first, named("pooler.dense.weight", hidden, hidden), named("pooler.dense.bias", hidden)),
                    intAttr("transB", 1));
            graph.addOutput(ValueInfoProto.newBuilder().setName(node("Tanh", dense)));
        }
        return ModelProto.newBuilder()
                .setIrVersion(8)
                .setProducerName("TinyBert")
                .addOpsetImport(OperatorSetIdProto.newBuilder().setDomain("").setVersion(17))
                .setGraph(graph)
                .build();
    }

    /** Writes the model as {@code name} in {@code dir}, and its external data next to it if any. */
    Path write(Path dir, String name) throws IOException {
        return write(build(), dir, name);
    }

    Path write(ModelProto model, Path dir, String name) throws IOException {
        Path file = dir.resolve(name);
        Files.write(file, model.toByteArray());
        if (storage == Storage.EXTERNAL) Files.write(dir.resolve(EXTERNAL_FILE), externalData.toByteArray());
        return file;
    }

    private String layer(String p, String x, String mask) {
        int headSize = hidden / heads;
        String q = linear(p + "attention.self.query", x, hidden, hidden);
        String k = linear(p + "attention.self.key", x, hidden, hidden);
        String v = linear(p + "attention.self.value", x, hidden, hidden);
        String qh = splitHeads(q, 0, 2, 1, 3);
        String kh = splitHeads(k, 0, 2, 3, 1);
        String scores;
        switch (scale) {
            case DIV -> scores = node("Div", node("MatMul", qh, kh), floatInitializer((float) Math.sqrt(headSize)));
            case MUL ->
                scores = node("Mul", node("MatMul", qh, kh), floatInitializer((float) (1 / Math.sqrt(headSize))));
            default -> {
                String quarter = floatInitializer((float) Math.pow(headSize, -0.25));
                scores = node("MatMul", node("Mul", qh, quarter), node("Mul", kh, quarter));
            }
        }
        String probs = node("Softmax", List.of(node("Add", scores, mask)), intAttr("axis", -1));
        String context = node("MatMul", probs, splitHeads(v, 0, 2, 1, 3));
        String merged =
                node("Reshape", node("Transpose", List.of(context), intsAttr("perm", 0, 2, 1, 3)), shape(0, 0, hidden));
        String attention = linear(p + "attention.output.dense", merged, hidden, hidden);
        String x1 = layerNorm(p + "attention.output.LayerNorm", node("Add", attention, x));
        String up = linear(p + "intermediate.dense", x1, intermediate, hidden);
        String down = linear(p + "output.dense", activation(up), hidden, intermediate);
        return layerNorm(p + "output.LayerNorm", node("Add", down, x1));
    }

    private String splitHeads(String t, long... perm) {
        String split = node("Reshape", t, shape(0, 0, heads, hidden / heads));
        return node("Transpose", List.of(split), intsAttr("perm", perm));
    }

    private String activation(String x) {
        return switch (activation) {
            case ERF ->
                node(
                        "Mul",
                        node("Mul", x, node("Add", node("Erf", node("Div", x, constant(1.4142135f))), constant(1f))),
                        constant(0.5f));
            case TANH -> {
                String cubic = node("Mul", node("Pow", x, constant(3f)), constant(0.044715f));
                String inner = node("Mul", node("Add", x, cubic), constant(0.7978845608f));
                yield node("Mul", node("Mul", x, node("Add", node("Tanh", inner), constant(1f))), constant(0.5f));
            }
            case RELU -> node("Relu", x);
        };
    }

    private String layerNorm(String prefix, String x) {
        String weight = named(prefix + ".weight", hidden);
        String bias = named(prefix + ".bias", hidden);
        if (norm == Norm.NODE) {
            return node(
                    "LayerNormalization",
                    List.of(x, weight, bias),
                    intAttr("axis", -1),
                    AttributeProto.newBuilder()
                            .setName("epsilon")
                            .setType(AttributeProto.AttributeType.FLOAT)
                            .setF(epsilon)
                            .build());
        }
        String centered = node("Sub", x, node("ReduceMean", List.of(x), intsAttr("axes", -1)));
        String variance = node("ReduceMean", List.of(node("Pow", centered, constant(2f))), intsAttr("axes", -1));
        String normalized = node("Div", centered, node("Sqrt", node("Add", variance, constant(epsilon))));
        return node("Add", node("Mul", normalized, weight), bias);
    }

    /** x W^T + b as torch.onnx writes it: MatMul by an unnamed (in, out) initializer, then Add(bias, product). */
    private String linear(String prefix, String x, int out, int in) {
        float[] w = values(out * in);
        expected.put(prefix + ".weight", Tensor.of(w, out, in));
        float[] inOut = new float[w.length];
        for (int o = 0; o < out; o++) for (int i = 0; i < in; i++) inOut[i * out + o] = w[o * in + i];
        String weight = "onnx::MatMul_" + (++counter);
        graph.addInitializer(floats(weight, inOut, in, out));
        String bias = named(prefix + ".bias", out);
        return node("Add", bias, node("MatMul", x, weight));
    }

    private String table(String name, int rows) {
        return named(name, rows, hidden);
    }

    /** A named initializer whose values are also expected, as they are, under the same name. */
    private String named(String name, int... dims) {
        int n = 1;
        for (int d : dims) n *= d;
        float[] v = values(n);
        expected.put(name, Tensor.of(v, dims));
        graph.addInitializer(floats(name, v, dims));
        return name;
    }

    /** Slice(position_ids, 0, seq) of the arange initializer, as BERT's embeddings do. */
    private String positionIds(String ids) {
        long[] arange = new long[positions];
        for (int i = 0; i < positions; i++) arange[i] = i;
        ByteBuffer raw = ByteBuffer.allocate(8 * positions).order(ByteOrder.LITTLE_ENDIAN);
        for (long a : arange) raw.putLong(a);
        graph.addInitializer(TensorProto.newBuilder()
                .setName("embeddings.position_ids")
                .setDataType(DataType.INT64_VALUE)
                .addDims(1)
                .addDims(positions)
                .setRawData(ByteString.copyFrom(raw.array())));
        String seq = node("Gather", List.of(node("Shape", ids), intScalar(1)), intAttr("axis", 0));
        String end = node("Unsqueeze", seq, ints(0));
        return node("Slice", List.of("embeddings.position_ids", ints(0), end, ints(1), ints(1)));
    }

    private float[] values(int n) {
        float[] v = new float[n];
        for (int i = 0; i < n; i++) {
            float f = (float) random.nextGaussian() * 0.1f;
            v[i] = switch (storage) {
                case FLOAT16, FLOAT16_IN_INT32 -> Float.float16ToFloat(Float.floatToFloat16(f));
                case BFLOAT16 -> Float.intBitsToFloat(Float.floatToIntBits(f) & 0xffff0000);
                default -> f;
            };
        }
        return v;
    }

    /** A weight initializer stored as the test's {@link Storage} says. */
    private TensorProto floats(String name, float[] v, int... dims) {
        TensorProto.Builder t = TensorProto.newBuilder().setName(name);
        for (int d : dims) t.addDims(d);
        switch (storage) {
            case RAW -> t.setDataType(DataType.FLOAT_VALUE).setRawData(ByteString.copyFrom(fp32(v)));
            case FLOAT_DATA -> {
                t.setDataType(DataType.FLOAT_VALUE);
                for (float f : v) t.addFloatData(f);
            }
            case FLOAT16 -> t.setDataType(DataType.FLOAT16_VALUE).setRawData(ByteString.copyFrom(halves(v, false)));
            case FLOAT16_IN_INT32 -> {
                t.setDataType(DataType.FLOAT16_VALUE);
                for (float f : v) t.addInt32Data(Float.floatToFloat16(f) & 0xffff);
            }
            case BFLOAT16 -> t.setDataType(DataType.BFLOAT16_VALUE).setRawData(ByteString.copyFrom(halves(v, true)));
            case EXTERNAL -> {
                byte[] bytes = fp32(v);
                t.setDataType(DataType.FLOAT_VALUE)
                        .setDataLocation(TensorProto.DataLocation.EXTERNAL)
                        .addExternalData(entry("location", EXTERNAL_FILE))
                        .addExternalData(entry("offset", Integer.toString(externalData.size())))
                        .addExternalData(entry("length", Integer.toString(bytes.length)));
                externalData.writeBytes(bytes);
            }
        }
        return t.build();
    }

    static StringStringEntryProto entry(String key, String value) {
        return StringStringEntryProto.newBuilder().setKey(key).setValue(value).build();
    }

    private static byte[] fp32(float[] v) {
        ByteBuffer b = ByteBuffer.allocate(4 * v.length).order(ByteOrder.LITTLE_ENDIAN);
        for (float f : v) b.putFloat(f);
        return b.array();
    }

    private static byte[] halves(float[] v, boolean bfloat) {
        ByteBuffer b = ByteBuffer.allocate(2 * v.length).order(ByteOrder.LITTLE_ENDIAN);
        for (float f : v) b.putShort(bfloat ? (short) (Float.floatToIntBits(f) >>> 16) : Float.floatToFloat16(f));
        return b.array();
    }

    private String input(String name) {
        TypeProto.Tensor type = TypeProto.Tensor.newBuilder()
                .setElemType(DataType.INT64_VALUE)
                .setShape(TensorShapeProto.newBuilder()
                        .addDim(TensorShapeProto.Dimension.newBuilder().setDimParam("batch"))
                        .addDim(TensorShapeProto.Dimension.newBuilder().setDimParam("sequence")))
                .build();
        graph.addInput(ValueInfoProto.newBuilder()
                .setName(name)
                .setType(TypeProto.newBuilder().setTensorType(type)));
        return name;
    }

    /** A float scalar as a Constant node, as the exports write most of theirs. */
    private String constant(float value) {
        TensorProto t = TensorProto.newBuilder()
                .setDataType(DataType.FLOAT_VALUE)
                .setRawData(ByteString.copyFrom(fp32(new float[] {value})))
                .build();
        String out = "/Constant_" + (++counter) + "_output_0";
        graph.addNode(NodeProto.newBuilder()
                .setOpType("Constant")
                .addOutput(out)
                .addAttribute(AttributeProto.newBuilder()
                        .setName("value")
                        .setType(AttributeProto.AttributeType.TENSOR)
                        .setT(t)));
        return out;
    }

    /** A float scalar as an unnamed initializer (the other way constants come). */
    private String floatInitializer(float value) {
        String name = "onnx::Const_" + (++counter);
        graph.addInitializer(TensorProto.newBuilder()
                .setName(name)
                .setDataType(DataType.FLOAT_VALUE)
                .addFloatData(value));
        return name;
    }

    /** A 1-D INT64 initializer. */
    private String ints(long... values) {
        String name = "onnx::Ints_" + (++counter);
        TensorProto.Builder t = TensorProto.newBuilder()
                .setName(name)
                .setDataType(DataType.INT64_VALUE)
                .addDims(values.length);
        for (long v : values) t.addInt64Data(v);
        graph.addInitializer(t);
        return name;
    }

    private String shape(long... values) {
        return ints(values);
    }

    private String intScalar(long value) {
        String name = "onnx::Scalar_" + (++counter);
        graph.addInitializer(TensorProto.newBuilder()
                .setName(name)
                .setDataType(DataType.INT64_VALUE)
                .addInt64Data(value));
        return name;
    }

    private String node(String op, String... inputs) {
        return node(op, List.of(inputs));
    }

    private String node(String op, List<String> inputs, AttributeProto... attributes) {
        String out = "/" + op + "_" + (++counter) + "_output_0";
        NodeProto.Builder n = NodeProto.newBuilder()
                .setOpType(op)
                .setName("/" + op + "_" + counter)
                .addAllInput(inputs)
                .addOutput(out);
        for (AttributeProto a : attributes) n.addAttribute(a);
        graph.addNode(n);
        return out;
    }

    private static AttributeProto intAttr(String name, long value) {
        return AttributeProto.newBuilder()
                .setName(name)
                .setType(AttributeProto.AttributeType.INT)
                .setI(value)
                .build();
    }

    private static AttributeProto intsAttr(String name, long... values) {
        AttributeProto.Builder a = AttributeProto.newBuilder().setName(name).setType(AttributeProto.AttributeType.INTS);
        for (long v : values) a.addInts(v);
        return a.build();
    }
}
