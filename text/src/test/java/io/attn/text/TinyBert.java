package io.attn.text;

import io.attn.reference.layers.RandomStateDicts;
import io.attn.tensor.Tensor;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Test fixtures: a small BERT with random weights written as a Hugging Face folder, with the real all-MiniLM-L6-v2
 * {@code tokenizer.json} (from langchain4j's jar, a test dependency), so tests exercise the real tokenizer and file
 * layout on a model small enough to check against the double-precision reference. The safetensors writer here is the
 * test's own (it writes F16, BF16 and I64 too, which the engine never writes).
 */
final class TinyBert {
    static final int VOCAB = 30522, HIDDEN = 32, LAYERS = 2, HEADS = 4, FFN = 48, MAX_POS = 64;
    static final String TOKENIZER = "all-minilm-l6-v2-tokenizer.json";

    private TinyBert() {}

    static Map<String, Tensor> weights(long seed) {
        return RandomStateDicts.bert(VOCAB, HIDDEN, LAYERS, FFN, MAX_POS, 2, seed);
    }

    static String config(String act) {
        return config(act, MAX_POS);
    }

    static String config(String act, int maxPositions) {
        return "{\"architectures\":[\"BertModel\"],\"model_type\":\"bert\",\"vocab_size\":" + VOCAB
                + ",\"hidden_size\":" + HIDDEN + ",\"num_hidden_layers\":" + LAYERS + ",\"num_attention_heads\":"
                + HEADS
                + ",\"intermediate_size\":" + FFN + ",\"hidden_act\":\"" + act + "\",\"layer_norm_eps\":1e-12,"
                + "\"max_position_embeddings\":" + maxPositions + ",\"type_vocab_size\":2,\"pad_token_id\":0,"
                + "\"hidden_dropout_prob\":0.1,\"attention_probs_dropout_prob\":0.1,\"initializer_range\":0.02,"
                + "\"position_embedding_type\":\"absolute\",\"transformers_version\":\"4.44.0\",\"use_cache\":true}";
    }

    /** A plain Hugging Face folder (no sentence-transformers files): config, F32 weights, tokenizer. */
    static Path folder(Path dir, Map<String, Tensor> w) throws IOException {
        return folder(dir, w, MAX_POS);
    }

    /** {@link #folder(Path, Map)} of a model with {@code maxPositions} positions (the weights' position table). */
    static Path folder(Path dir, Map<String, Tensor> w, int maxPositions) throws IOException {
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("config.json"), config("gelu", maxPositions));
        writeSafetensors(dir.resolve("model.safetensors"), w, "F32");
        copyTokenizer(dir.resolve("tokenizer.json"));
        return dir;
    }

    /** Adds the sentence-transformers files: modules.json, 1_Pooling/config.json, 2_Normalize when asked. */
    static void sentenceTransformers(Path dir, String pooling, boolean normalize, int maxSeqLength) throws IOException {
        Files.createDirectories(dir.resolve("1_Pooling"));
        String modules =
                "[{\"idx\":0,\"name\":\"0\",\"path\":\"\",\"type\":\"sentence_transformers.models.Transformer\"},"
                        + "{\"idx\":1,\"name\":\"1\",\"path\":\"1_Pooling\",\"type\":\"sentence_transformers.models.Pooling\"}"
                        + (normalize
                                ? ",{\"idx\":2,\"name\":\"2\",\"path\":\"2_Normalize\","
                                        + "\"type\":\"sentence_transformers.models.Normalize\"}"
                                : "")
                        + "]";
        Files.writeString(dir.resolve("modules.json"), modules);
        if (normalize) Files.createDirectories(dir.resolve("2_Normalize"));
        Files.writeString(
                dir.resolve("1_Pooling/config.json"),
                "{\"word_embedding_dimension\":" + HIDDEN + ",\"pooling_mode_cls_token\":" + pooling.equals("cls")
                        + ",\"pooling_mode_mean_tokens\":" + pooling.equals("mean") + ",\"pooling_mode_max_tokens\":"
                        + pooling.equals("max") + ",\"pooling_mode_mean_sqrt_len_tokens\":"
                        + pooling.equals("mean_sqrt_len_tokens") + ",\"pooling_mode_weightedmean_tokens\":"
                        + pooling.equals("weightedmean") + "}");
        if (maxSeqLength > 0)
            Files.writeString(
                    dir.resolve("sentence_bert_config.json"),
                    "{\"max_seq_length\":" + maxSeqLength + ",\"do_lower_case\":false}");
    }

    static void copyTokenizer(Path to) throws IOException {
        try (InputStream in = TinyBert.class.getClassLoader().getResourceAsStream(TOKENIZER)) {
            if (in == null) throw new IllegalStateException(TOKENIZER + " not on the test class path");
            Files.copy(in, to);
        }
    }

    /**
     * Writes a safetensors file with every float tensor stored as {@code dtype} (F32, F16 or BF16, rounded to nearest
     * even) and any tensor whose name ends in {@code position_ids} as I64.
     */
    static void writeSafetensors(Path file, Map<String, Tensor> tensors, String dtype) throws IOException {
        StringBuilder h = new StringBuilder("{\"__metadata__\":{\"format\":\"pt\"}");
        Map<String, byte[]> data = new LinkedHashMap<>();
        long off = 0;
        for (var e : tensors.entrySet()) {
            boolean ids = e.getKey().endsWith("position_ids");
            byte[] b = encode(e.getValue().data(), ids ? "I64" : dtype);
            data.put(e.getKey(), b);
            h.append(",\"").append(e.getKey()).append("\":{\"dtype\":\"").append(ids ? "I64" : dtype);
            h.append("\",\"shape\":[");
            int[] dims = e.getValue().shape().dims();
            for (int i = 0; i < dims.length; i++) h.append(i == 0 ? "" : ",").append(dims[i]);
            h.append("],\"data_offsets\":[")
                    .append(off)
                    .append(',')
                    .append(off + b.length)
                    .append("]}");
            off += b.length;
        }
        h.append('}');
        while (h.length() % 8 != 0) h.append(' ');
        byte[] header = h.toString().getBytes(StandardCharsets.UTF_8);
        try (OutputStream out = Files.newOutputStream(file)) {
            out.write(ByteBuffer.allocate(8)
                    .order(ByteOrder.LITTLE_ENDIAN)
                    .putLong(header.length)
                    .array());
            out.write(header);
            for (byte[] b : data.values()) out.write(b);
        }
    }

    private static byte[] encode(float[] v, String dtype) {
        int width = dtype.equals("F32") ? 4 : dtype.equals("I64") ? 8 : 2;
        ByteBuffer b = ByteBuffer.allocate(v.length * width).order(ByteOrder.LITTLE_ENDIAN);
        for (float x : v)
            switch (dtype) {
                case "F32" -> b.putFloat(x);
                case "F16" -> b.putShort(Float.floatToFloat16(x));
                case "BF16" -> b.putShort((short) bf16Bits(x));
                case "I64" -> b.putLong((long) x);
                default -> throw new IllegalArgumentException(dtype);
            }
        return b.array();
    }

    private static int bf16Bits(float x) {
        int bits = Float.floatToRawIntBits(x);
        return (bits + 0x7FFF + ((bits >>> 16) & 1)) >>> 16;
    }

    /** What a value becomes after a round trip through {@code dtype}. */
    static float rounded(float x, String dtype) {
        return switch (dtype) {
            case "F16" -> Float.float16ToFloat(Float.floatToFloat16(x));
            case "BF16" -> Float.intBitsToFloat(bf16Bits(x) << 16);
            default -> x;
        };
    }
}
