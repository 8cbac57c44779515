package io.attn.spark;

import io.attn.engine.Tensors;
import io.attn.reference.layers.LayerConfig;
import io.attn.reference.layers.RandomStateDicts;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Test models made on the spot, no downloads: a tiny random BERT with a hand-written WordPiece {@code tokenizer.json}
 * (as {@code EmbedCommandTest} in the cli module makes it, about 0.1 MB) and a small encoder layer in a safetensors
 * file with its config in the metadata; and texts over the tiny vocabulary.
 */
final class Fixtures {
    static final List<String> VOCAB = List.of(
            "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "sky", "is", "blue", "what", "colour", "?", ".", "a",
            "cat", "sat", "on", "mat", "##s", "green", "grass", "caf", "##e", "!", ",");
    static final int HIDDEN = 16, LAYERS = 2, HEADS = 2, FFN = 24, POS = 32;
    static final int ENCODER_WIDTH = 8;

    private Fixtures() {}

    /** A tiny BERT folder; with the sentence-transformers files (mean pooling, normalized) when asked. */
    static Path tinyBert(Path dir, boolean sentenceTransformers) throws IOException {
        Path m = dir.resolve("tiny-bert");
        Files.createDirectories(m);
        Files.writeString(
                m.resolve("config.json"),
                "{\"model_type\":\"bert\",\"vocab_size\":" + VOCAB.size() + ",\"hidden_size\":" + HIDDEN
                        + ",\"num_hidden_layers\":" + LAYERS + ",\"num_attention_heads\":" + HEADS
                        + ",\"intermediate_size\":" + FFN + ",\"max_position_embeddings\":" + POS
                        + ",\"hidden_act\":\"gelu\"}");
        Tensors.writeSafetensors(
                m.resolve("model.safetensors"),
                RandomStateDicts.bert(VOCAB.size(), HIDDEN, LAYERS, FFN, POS, 2, 5),
                null);
        Files.writeString(m.resolve("tokenizer.json"), tokenizerJson());
        if (sentenceTransformers) {
            Files.createDirectories(m.resolve("1_Pooling"));
            Files.createDirectories(m.resolve("2_Normalize"));
            Files.writeString(
                    m.resolve("modules.json"),
                    "[{\"idx\":0,\"name\":\"0\",\"path\":\"\",\"type\":\"sentence_transformers.models.Transformer\"},"
                            + "{\"idx\":1,\"name\":\"1\",\"path\":\"1_Pooling\",\"type\":"
                            + "\"sentence_transformers.models.Pooling\"},{\"idx\":2,\"name\":\"2\",\"path\":"
                            + "\"2_Normalize\",\"type\":\"sentence_transformers.models.Normalize\"}]");
            Files.writeString(m.resolve("1_Pooling/config.json"), "{\"pooling_mode_mean_tokens\":true}");
        }
        return m;
    }

    /** A post-norm TransformerEncoderLayer (E = {@link #ENCODER_WIDTH}, 2 heads) with its config in the metadata. */
    static Path encoderLayer(Path dir) {
        Path f = dir.resolve("encoder.safetensors");
        Tensors.writeSafetensors(
                f,
                RandomStateDicts.encoderLayer(LayerConfig.of(ENCODER_WIDTH, 2, 16), 7),
                Map.of(
                        "config",
                        "{\"module\":\"TransformerEncoderLayer\",\"d_model\":" + ENCODER_WIDTH
                                + ",\"nhead\":2,\"dim_feedforward\":16}"));
        return f;
    }

    /** {@code n} texts of 1 to 9 words over the vocabulary (every 97th empty), deterministic. */
    static List<String> texts(int n) {
        String[] words = {"the", "sky", "is", "blue", "cat", "sat", "on", "mat", "green", "grass", "café!", "cats"};
        List<String> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            StringBuilder t = new StringBuilder();
            for (int w = 0; w <= i % 9; w++)
                t.append(words[(i * 7 + w) % words.length]).append(' ');
            out.add(i % 97 == 0 ? "" : t.toString().trim());
        }
        return out;
    }

    /** A BERT WordPiece tokenizer.json (lower-casing normalizer, [CLS] A [SEP] template) over {@link #VOCAB}. */
    static String tokenizerJson() {
        StringBuilder vocab = new StringBuilder();
        for (int i = 0; i < VOCAB.size(); i++)
            vocab.append(i == 0 ? "" : ",")
                    .append('"')
                    .append(VOCAB.get(i))
                    .append("\":")
                    .append(i);
        StringBuilder added = new StringBuilder();
        for (int i = 0; i < 5; i++)
            added.append(i == 0 ? "" : ",")
                    .append("{\"id\":")
                    .append(i)
                    .append(",\"content\":\"")
                    .append(VOCAB.get(i))
                    .append("\",\"single_word\":false,\"lstrip\":false,\"rstrip\":false,\"normalized\":false,"
                            + "\"special\":true}");
        return "{\"version\":\"1.0\",\"truncation\":null,\"padding\":null,\"added_tokens\":[" + added + "],"
                + "\"normalizer\":{\"type\":\"BertNormalizer\",\"clean_text\":true,\"handle_chinese_chars\":true,"
                + "\"strip_accents\":null,\"lowercase\":true},\"pre_tokenizer\":{\"type\":\"BertPreTokenizer\"},"
                + "\"post_processor\":{\"type\":\"TemplateProcessing\",\"single\":[{\"SpecialToken\":{\"id\":\"[CLS]\","
                + "\"type_id\":0}},{\"Sequence\":{\"id\":\"A\",\"type_id\":0}},{\"SpecialToken\":{\"id\":\"[SEP]\","
                + "\"type_id\":0}}],\"pair\":[{\"SpecialToken\":{\"id\":\"[CLS]\",\"type_id\":0}},{\"Sequence\":{\"id\":"
                + "\"A\",\"type_id\":0}},{\"SpecialToken\":{\"id\":\"[SEP]\",\"type_id\":0}},{\"Sequence\":{\"id\":\"B\","
                + "\"type_id\":1}},{\"SpecialToken\":{\"id\":\"[SEP]\",\"type_id\":1}}],\"special_tokens\":{\"[CLS]\":"
                + "{\"id\":\"[CLS]\",\"ids\":[2],\"tokens\":[\"[CLS]\"]},\"[SEP]\":{\"id\":\"[SEP]\",\"ids\":[3],"
                + "\"tokens\":[\"[SEP]\"]}}},\"decoder\":{\"type\":\"WordPiece\",\"prefix\":\"##\",\"cleanup\":true},"
                + "\"model\":{\"type\":\"WordPiece\",\"unk_token\":\"[UNK]\",\"continuing_subword_prefix\":\"##\","
                + "\"max_input_chars_per_word\":100,\"vocab\":{" + vocab + "}}}";
    }
}
