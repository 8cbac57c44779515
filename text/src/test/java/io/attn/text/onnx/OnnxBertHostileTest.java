package io.attn.text.onnx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import io.attn.AttnException;
import io.attn.text.onnx.proto.OnnxProto.GraphProto;
import io.attn.text.onnx.proto.OnnxProto.ModelProto;
import io.attn.text.onnx.proto.OnnxProto.NodeProto;
import io.attn.text.onnx.proto.OnnxProto.OperatorSetIdProto;
import io.attn.text.onnx.proto.OnnxProto.TensorProto;
import io.attn.text.onnx.proto.OnnxProto.ValueInfoProto;
import java.io.IOException;
import java.io.InputStream;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Files that are not what they claim: each read fails with one BAD_INPUT line that starts with the file name and
 * says what did not match, and never with another exception type.
 */
class OnnxBertHostileTest {
    @TempDir
    Path dir;

    @Test
    void emptyFile() throws IOException {
        assertBad(Files.write(dir.resolve("model.onnx"), new byte[0]), "model.onnx: empty file, not an ONNX model");
    }

    @Test
    void overTwoGigabytes() throws IOException {
        Path file = dir.resolve("huge.onnx");
        try (RandomAccessFile sparse = new RandomAccessFile(file.toFile(), "rw")) {
            sparse.setLength((1L << 31) + 1);
        }
        assertBad(file, "huge.onnx: the file has 2147483649 bytes, more than the 2 GiB one protobuf message can hold");
    }

    @Test
    void missingFileAndDirectory() {
        assertBad(dir.resolve("absent.onnx"), "absent.onnx: no such file");
        assertBad(dir, dir.getFileName() + ": cannot read the file");
    }

    @Test
    void truncatedRealExport() throws IOException {
        byte[] head;
        try (InputStream in = getClass().getClassLoader().getResourceAsStream("all-minilm-l6-v2.onnx")) {
            head = in.readNBytes(1 << 20);
        }
        Path file = Files.write(dir.resolve("all-minilm-l6-v2.onnx"), head);
        assertBad(file, "all-minilm-l6-v2.onnx: truncated or not an ONNX protobuf (");
    }

    @Test
    void randomBytes() throws IOException {
        for (int seed = 0; seed < 50; seed++) {
            byte[] noise = new byte[1 + new Random(seed).nextInt(100_000)];
            new Random(seed).nextBytes(noise);
            assertBad(Files.write(dir.resolve("noise.onnx"), noise), "noise.onnx: ");
        }
    }

    /**
     * Byte-level damage to a valid model, in every storage: whatever it becomes, a read succeeds or fails with one line
     * the reader foresaw (36,000 damaged models found nothing more than these 900 do).
     */
    @Test
    void damagedModels() throws IOException {
        for (TinyBert.Storage storage : TinyBert.Storage.values()) {
            TinyBert tiny = new TinyBert().storage(storage);
            tiny.layers = 2;
            byte[] good = tiny.build().toByteArray();
            tiny.write(dir, "tiny.onnx"); // the external data file, where there is one
            Random random = new Random(storage.ordinal());
            for (int i = 0; i < 150; i++) {
                byte[] bad = good.clone();
                for (int k = 0; k < 1 + random.nextInt(4); k++)
                    bad[random.nextInt(bad.length)] = (byte) random.nextInt();
                Path file = Files.write(dir.resolve("damaged.onnx"), bad);
                try {
                    OnnxBert.read(file);
                } catch (AttnException e) {
                    checkLine(e, file, "damaged.onnx: ");
                }
            }
        }
    }

    @Test
    void validOnnxThatIsNotBert() throws IOException {
        GraphProto relu = GraphProto.newBuilder()
                .addInput(ValueInfoProto.newBuilder().setName("x"))
                .addNode(NodeProto.newBuilder().setOpType("Relu").addInput("x").addOutput("y"))
                .addOutput(ValueInfoProto.newBuilder().setName("y"))
                .build();
        ModelProto model = ModelProto.newBuilder()
                .setIrVersion(8)
                .addOpsetImport(OperatorSetIdProto.newBuilder().setVersion(17))
                .setGraph(relu)
                .build();
        assertBad(
                Files.write(dir.resolve("relu.onnx"), model.toByteArray()),
                "relu.onnx: not a BERT-family encoder: no Gather from input_ids into a (V, E) table named"
                        + " embeddings.word_embeddings.weight");
    }

    @Test
    void biasAddRemoved() throws IOException {
        assertBad(
                edit(new TinyBert(), m -> bypass(m, "encoder.layer.0.intermediate.dense.bias")),
                "tiny.onnx: encoder.layer.0.intermediate.dense.bias is not added to a MatMul by a constant weight");
    }

    @Test
    void lyingDimensions() throws IOException {
        UnaryOperator<ModelProto> huge = m -> dims(m, "embeddings.word_embeddings.weight", 1_000_000, 1_000_000);
        assertBad(
                edit(new TinyBert(), huge),
                "tiny.onnx: initializer 'embeddings.word_embeddings.weight' claims 1000000000000 elements but holds"
                        + " 352 bytes");
        assertBad(
                edit(new TinyBert().storage(TinyBert.Storage.FLOAT_DATA), huge),
                "claims 1000000000000 elements but holds 88 values");
        assertBad(edit(new TinyBert().storage(TinyBert.Storage.EXTERNAL), huge), "claims 1000000000000 elements");
        assertBad(
                edit(new TinyBert(), m -> dims(m, "encoder.layer.0.output.dense.bias", 1L << 40, 1L << 40)),
                "has a dimension of 1099511627776");
        assertBad(
                edit(
                        new TinyBert(),
                        m -> dims(m, "embeddings.LayerNorm.bias", (1L << 31) - 1, (1L << 31) - 1, 4, 4, 4)),
                "claims more than 2^63 elements");
    }

    @Test
    void externalDataOutsideTheModelsDirectory() throws IOException {
        TinyBert tiny = new TinyBert().storage(TinyBert.Storage.EXTERNAL);
        String word = "embeddings.word_embeddings.weight";
        assertBad(
                edit(tiny, m -> location(m, word, "../" + TinyBert.EXTERNAL_FILE)),
                "tiny.onnx: initializer 'embeddings.word_embeddings.weight': external data location '../weights.bin'"
                        + " is outside the model's directory");
        assertBad(edit(tiny, m -> location(m, word, "sub/../../x.bin")), "is outside the model's directory");
        assertBad(
                edit(
                        tiny,
                        m -> location(
                                m, word, dir.resolve(TinyBert.EXTERNAL_FILE).toString())),
                "outside");
        assertBad(edit(tiny, m -> location(m, word, "absent.bin")), "cannot read its external data file 'absent.bin'");
    }

    @Test
    void externalDataShorterThanClaimed() throws IOException {
        TinyBert tiny = new TinyBert().storage(TinyBert.Storage.EXTERNAL);
        Path file = tiny.write(dir, "tiny.onnx");
        Files.write(dir.resolve(TinyBert.EXTERNAL_FILE), new byte[100]);
        assertBad(
                file, "tiny.onnx: initializer 'embeddings.word_embeddings.weight': external data 'weights.bin' holds");
    }

    @Test
    void layerGap() throws IOException {
        TinyBert tiny = new TinyBert();
        tiny.layers = 3;
        assertBad(
                edit(tiny, m -> rename(m, "encoder.layer.1.", "encoder.layer.7.")),
                "tiny.onnx: encoder.layer.1 is missing (the file has layers up to 7)");
    }

    @Test
    void missingLayerPiece() throws IOException {
        assertBad(
                edit(new TinyBert(), m -> removeInitializer(m, "encoder.layer.0.output.LayerNorm.bias")),
                "tiny.onnx: encoder.layer.0.output.LayerNorm.bias is missing");
    }

    @Test
    void inconsistentWidths() throws IOException {
        assertBad(
                edit(new TinyBert(), m -> replaceFloats(m, "embeddings.position_embeddings.weight", 7, 9)),
                "tiny.onnx: embeddings.position_embeddings.weight is (7, 9) but the word embeddings are 8 wide");
        assertBad(
                edit(new TinyBert(), m -> replaceFloats(m, "encoder.layer.0.attention.output.LayerNorm.weight", 6)),
                "encoder.layer.0.attention.output.LayerNorm.weight is (6) where (8) was expected");
    }

    @Test
    void intermediateWidthDiffersBetweenLayers() throws IOException {
        TinyBert tiny = new TinyBert();
        tiny.layers = 2;
        assertBad(
                edit(tiny, m -> replaceFloats(m, "encoder.layer.1.intermediate.dense.bias", 10)),
                "tiny.onnx: encoder.layer.1.intermediate.dense.bias is (10) where (12) was expected");
    }

    @Test
    void headSplitDisagreesWithScaling() throws IOException {
        // the Reshapes split 2 heads of 4, but the scores are divided by sqrt(2) as if the heads were 2 wide
        assertBad(
                edit(new TinyBert(), m -> replaceScale(m, (float) Math.sqrt(2))),
                "tiny.onnx: encoder.layer.0.attention: the scores are scaled for 4 heads of 2 but the heads are split"
                        + " 2 x 4");
    }

    @Test
    void headSizeThatDoesNotDivideTheWidth() throws IOException {
        assertBad(
                edit(new TinyBert(), m -> replaceScale(m, 3f)),
                "tiny.onnx: encoder.layer.0.attention: the scores are scaled by 0.33333334, so the head size is 9.0,"
                        + " not a whole divisor of the hidden size 8");
    }

    @Test
    void unscaledAttention() throws IOException {
        assertBad(
                edit(new TinyBert(), m -> bypass(m, scaleName(m))),
                "tiny.onnx: encoder.layer.0.attention: the scores are not scaled by a constant");
    }

    @Test
    void epsilonsDiffer() throws IOException {
        assertBad(
                edit(new TinyBert(), m -> replaceEpsilons(m, 1e-12f, 1e-5f)),
                "tiny.onnx: encoder.layer.0.attention.output.LayerNorm has epsilon 1.0E-5 but embeddings.LayerNorm"
                        + " has 1.0E-12");
    }

    @Test
    void robertaStylePositions() throws IOException {
        assertBad(
                edit(new TinyBert(), m -> replaceOp(m, "Slice", "CumSum")),
                "tiny.onnx: embeddings.position_embeddings.weight is indexed by positions computed with CumSum, not 0,"
                        + " 1, 2, ... (RoBERTa-style position ids are not BERT's)");
    }

    @Test
    void unknownActivation() throws IOException {
        TinyBert tiny = new TinyBert();
        tiny.activation = TinyBert.Activation.RELU;
        assertBad(
                edit(tiny, m -> replaceOp(m, "Relu", "Sigmoid")),
                "tiny.onnx: encoder.layer.0.intermediate: the activation is not gelu (Erf), gelu_new (Tanh with 0.044715)"
                        + " or relu: its nodes are [Sigmoid]");
    }

    @Test
    void integerWeight() throws IOException {
        assertBad(
                edit(new TinyBert(), m -> dataType(m, "embeddings.token_type_embeddings.weight", 6)),
                "tiny.onnx: initializer 'embeddings.token_type_embeddings.weight' holds INT32 values, not FLOAT,"
                        + " FLOAT16 or BFLOAT16");
    }

    @Test
    void notABertModelWeight() throws IOException {
        assertBad(
                edit(
                        new TinyBert(),
                        m -> rename(m, "encoder.layer.0.attention.self.key.bias", "encoder.layer.0.x.bias")),
                "tiny.onnx: encoder.layer.0.x.bias is not a BertModel weight");
    }

    // --- helpers

    private static void assertBad(Path file, String fragment) {
        AttnException e = assertThrows(AttnException.class, () -> OnnxBert.read(file));
        checkLine(e, file, fragment);
    }

    /** One BAD_INPUT line, starting with the file name, holding the fragment, from a failure the reader foresaw. */
    private static void checkLine(AttnException e, Path file, String fragment) {
        String m = e.getMessage();
        assertEquals(AttnException.Code.BAD_INPUT, e.code(), m);
        assertFalse(m.contains("\n") || m.contains("\r"), m);
        assertTrue(m.startsWith(file.getFileName() + ": "), m);
        assertFalse(m.contains("cannot read the model ("), "an unforeseen exception: " + m);
        assertTrue(m.contains(fragment), m);
    }

    private Path edit(TinyBert tiny, UnaryOperator<ModelProto> change) throws IOException {
        return tiny.write(change.apply(tiny.build()), dir, "tiny.onnx");
    }

    private static ModelProto graph(ModelProto m, UnaryOperator<GraphProto.Builder> change) {
        ModelProto.Builder b = m.toBuilder();
        change.apply(b.getGraphBuilder());
        return b.build();
    }

    private static ModelProto initializer(ModelProto m, String name, UnaryOperator<TensorProto.Builder> change) {
        return graph(m, g -> {
            for (TensorProto.Builder t : g.getInitializerBuilderList())
                if (t.getName().equals(name)) change.apply(t);
            return g;
        });
    }

    private static ModelProto dims(ModelProto m, String name, long... dims) {
        return initializer(m, name, t -> t.clearDims().addAllDims(List.of(box(dims))));
    }

    private static Long[] box(long[] v) {
        Long[] b = new Long[v.length];
        for (int i = 0; i < v.length; i++) b[i] = v[i];
        return b;
    }

    private static ModelProto dataType(ModelProto m, String name, int type) {
        return initializer(m, name, t -> t.setDataType(type));
    }

    private static ModelProto location(ModelProto m, String name, String location) {
        return initializer(m, name, t -> {
            for (int i = 0; i < t.getExternalDataCount(); i++)
                if (t.getExternalData(i).getKey().equals("location"))
                    t.setExternalData(i, TinyBert.entry("location", location));
            return t;
        });
    }

    /** Replaces an fp32 raw_data initializer by zeros of another shape. */
    private static ModelProto replaceFloats(ModelProto m, String name, int... dims) {
        int n = 1;
        for (int d : dims) n *= d;
        int count = n;
        return initializer(m, name, t -> {
            t.clearDims().setRawData(ByteString.copyFrom(new byte[4 * count]));
            for (int d : dims) t.addDims(d);
            return t;
        });
    }

    private static ModelProto removeInitializer(ModelProto m, String name) {
        return graph(m, g -> {
            for (int i = 0; i < g.getInitializerCount(); i++)
                if (g.getInitializer(i).getName().equals(name)) g.removeInitializer(i);
            return g;
        });
    }

    /** Renames every initializer and node input that starts with {@code from}. */
    private static ModelProto rename(ModelProto m, String from, String to) {
        return graph(m, g -> {
            for (TensorProto.Builder t : g.getInitializerBuilderList())
                if (t.getName().startsWith(from)) t.setName(to + t.getName().substring(from.length()));
            for (NodeProto.Builder n : g.getNodeBuilderList())
                for (int i = 0; i < n.getInputCount(); i++)
                    if (n.getInput(i).startsWith(from))
                        n.setInput(i, to + n.getInput(i).substring(from.length()));
            return g;
        });
    }

    /** Drops the node that reads {@code input}; what read its output reads the node's other input instead. */
    private static ModelProto bypass(ModelProto m, String input) {
        return graph(m, g -> {
            for (int k = 0; k < g.getNodeCount(); k++) {
                NodeProto node = g.getNode(k);
                if (!node.getInputList().contains(input)) continue;
                String other = node.getInput(0).equals(input) ? node.getInput(1) : node.getInput(0);
                g.removeNode(k);
                for (NodeProto.Builder n : g.getNodeBuilderList())
                    for (int i = 0; i < n.getInputCount(); i++)
                        if (n.getInput(i).equals(node.getOutput(0))) n.setInput(i, other);
                return g;
            }
            throw new AssertionError("no node reads " + input);
        });
    }

    private static ModelProto replaceOp(ModelProto m, String from, String to) {
        return graph(m, g -> {
            for (NodeProto.Builder n : g.getNodeBuilderList()) if (n.getOpType().equals(from)) n.setOpType(to);
            return g;
        });
    }

    /** The attention scale: TinyBert's only float_data scalar initializer. */
    private static String scaleName(ModelProto m) {
        return m.getGraph().getInitializerList().stream()
                .filter(t -> t.getFloatDataCount() == 1)
                .findFirst()
                .orElseThrow()
                .getName();
    }

    private static ModelProto replaceScale(ModelProto m, float value) {
        return initializer(m, scaleName(m), t -> t.setFloatData(0, value));
    }

    /** Replaces the LayerNorm epsilons (Constant nodes) after the embeddings' one. */
    private static ModelProto replaceEpsilons(ModelProto m, float old, float value) {
        ByteString oldBytes = littleEndian(old);
        int[] seen = {0};
        return graph(m, g -> {
            for (NodeProto.Builder n : g.getNodeBuilderList()) {
                if (!n.getOpType().equals("Constant")) continue;
                TensorProto.Builder t = n.getAttributeBuilder(0).getTBuilder();
                if (t.getRawData().equals(oldBytes) && seen[0]++ > 0) t.setRawData(littleEndian(value));
            }
            return g;
        });
    }

    private static ByteString littleEndian(float f) {
        return ByteString.copyFrom(ByteBuffer.allocate(4)
                .order(ByteOrder.LITTLE_ENDIAN)
                .putFloat(0, f)
                .array());
    }
}
