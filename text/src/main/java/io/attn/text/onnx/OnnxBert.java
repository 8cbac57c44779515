package io.attn.text.onnx;

import io.attn.AttnException;
import io.attn.tensor.Tensor;
import io.attn.text.onnx.BertMatcher.Kind;
import io.attn.text.onnx.BertMatcher.Piece;
import io.attn.text.onnx.BertMatcher.Plan;
import java.nio.file.Path;
import java.util.Collections;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * Imports a BERT-family encoder exported to ONNX (as Hugging Face's BertModel, e.g. by torch.onnx or Optimum) as the
 * Hugging Face config and BertModel weights, ready for the engine's BERT model.
 *
 * <p>The graph is matched, not executed: the embedding tables are found by their Gathers, each Linear by the Add (or
 * Gemm) of its named bias, each LayerNorm by its named weight, the head count by the attention scaling, the activation
 * by its nodes. Anything that does not match is a one-line {@link AttnException} (BAD_INPUT) naming the file. See
 * {@link #read}.
 *
 * <p>Stateless and thread-safe: concurrent reads share nothing.
 */
public final class OnnxBert {
    private OnnxBert() {}

    /**
     * The model as Hugging Face has it: config.json keys and BertModel weights under HF names (no "bert." prefix).
     *
     * <p>Unmodifiable maps, safe to share between threads; the tensors' arrays are not copied, so they must not be
     * changed while another thread reads them.
     *
     * @param config model_type ("bert"), vocab_size, hidden_size, num_hidden_layers, num_attention_heads,
     *     intermediate_size, hidden_act ("gelu", "gelu_new" or "relu"), layer_norm_eps (a Double),
     *     max_position_embeddings, type_vocab_size; unmodifiable, in that order
     * @param weights float32 tensors under BertModel's names, Linear weights (out, in); unmodifiable, in BertModel's
     *     state_dict order
     */
    public record Imported(Map<String, Object> config, Map<String, Tensor> weights) {
        public Imported {
            config = Collections.unmodifiableMap(new LinkedHashMap<>(config));
            weights = Collections.unmodifiableMap(new LinkedHashMap<>(weights));
        }
    }

    /**
     * Reads an .onnx file (and its external data files, which must lie in its directory).
     *
     * <p>The heap needed is about the file's size plus the largest weight as float32: each initializer's bytes are read
     * once, converted to float once, and dropped as soon as they are converted.
     *
     * @throws AttnException BAD_INPUT, with a one-line message that starts with the file name, for a file that cannot
     *     be read, is not an ONNX protobuf, or is not a BERT-family encoder
     */
    public static Imported read(Path onnxFile) {
        ModelFile file = new ModelFile(Objects.requireNonNull(onnxFile, "onnxFile"));
        try {
            Plan plan = plan(file);
            return new Imported(plan.config(), convert(new TensorData(file), plan.pieces()));
        } catch (AttnException e) {
            throw e;
        } catch (RuntimeException e) { // a malformed file this reader did not foresee: still one line
            throw file.bad("cannot read the model (" + e + ")", e);
        }
    }

    /** Parses and matches; the parsed model is garbage once this returns, except the initializers to convert. */
    private static Plan plan(ModelFile file) {
        var graph = file.parse().getGraph();
        refuseUnknownQuantization(file, graph);
        return new BertMatcher(new Graph(file, graph)).match();
    }

    /**
     * Quantized operators the importer does not run (static QDQ or QOperator graphs, 4-bit and contrib kernels): one
     * line naming the first such node. The dynamic quantization it runs is DynamicQuantizeLinear + MatMulInteger (and
     * DequantizeLinear of the embedding tables).
     */
    private static final java.util.Set<String> UNKNOWN_QUANTIZED = java.util.Set.of(
            "QLinearMatMul",
            "QLinearConv",
            "QLinearAdd",
            "QLinearMul",
            "QuantizeLinear",
            "ConvInteger",
            "MatMulNBits",
            "DynamicQuantizeMatMul",
            "MatMulIntegerToFloat",
            "QAttention",
            "QGemm",
            "QOrderedMatMul",
            "DynamicQuantizeLSTM",
            "GatherBlockQuantized");

    private static void refuseUnknownQuantization(ModelFile file, io.attn.text.onnx.proto.OnnxProto.GraphProto g) {
        for (var n : g.getNodeList())
            if (UNKNOWN_QUANTIZED.contains(n.getOpType()))
                throw file.bad("quantized node " + Graph.op(n) + " '" + n.getName() + "' is not supported (attn runs"
                        + " ONNX Runtime's dynamic int8 quantization: DynamicQuantizeLinear + MatMulInteger)");
    }

    /** Converts the pieces in order, dropping each one's bytes as soon as its floats exist. */
    private static Map<String, Tensor> convert(TensorData data, Deque<Piece> pieces) {
        Map<String, Tensor> weights = new LinkedHashMap<>();
        for (Piece p = pieces.poll(); p != null; p = pieces.poll()) {
            int[] dims = data.dims(p.tensor(), p.what());
            switch (p.kind()) {
                case FLOAT -> {
                    float[] values = data.floats(p.tensor(), p.what());
                    weights.put(
                            p.name(), p.transpose() ? transpose(values, dims[0], dims[1]) : Tensor.of(values, dims));
                }
                case INT8, ZERO_POINT -> {
                    byte[] b = data.bytes(p.tensor(), p.what());
                    if (TensorData.isUnsigned8(p.zeroPoint())) for (int i = 0; i < b.length; i++) b[i] ^= (byte) 0x80;
                    weights.put(p.name(), Tensor.ofInt8(b, p.kind() == Kind.INT8 ? dims : new int[] {b.length}));
                }
                case SCALE -> {
                    float[] s = data.floats(p.tensor(), p.what());
                    weights.put(p.name(), Tensor.of(s, s.length));
                }
            }
        }
        return weights;
    }

    /** The (cols, rows) transpose of a row-major (rows, cols) matrix, in cache-sized blocks. */
    private static Tensor transpose(float[] m, int rows, int cols) {
        final int block = 64;
        float[] t = new float[m.length];
        for (int r0 = 0; r0 < rows; r0 += block)
            for (int c0 = 0; c0 < cols; c0 += block)
                for (int r = r0; r < Math.min(r0 + block, rows); r++)
                    for (int c = c0; c < Math.min(c0 + block, cols); c++) t[c * rows + r] = m[r * cols + c];
        return Tensor.of(t, cols, rows);
    }
}
