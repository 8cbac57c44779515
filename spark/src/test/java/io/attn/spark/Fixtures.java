package io.attn.spark;

import io.attn.engine.Tensors;
import io.attn.fixtures.TinyTextModel;
import io.attn.reference.layers.LayerConfig;
import io.attn.reference.layers.RandomStateDicts;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Test models made on the spot, no downloads: the tests module's tiny random BERT with its WordPiece
 * {@code tokenizer.json} ({@link TinyTextModel}, as the cli and server tests use it) and a small encoder layer in a safetensors
 * file with its config in the metadata; and texts over the tiny vocabulary.
 */
final class Fixtures {
    static final int HIDDEN = TinyTextModel.HIDDEN;
    static final int ENCODER_WIDTH = 8;

    private Fixtures() {}

    /** A tiny BERT folder ({@link TinyTextModel}); with the sentence-transformers files when asked. */
    static Path tinyBert(Path dir, boolean sentenceTransformers) throws IOException {
        return TinyTextModel.folder(dir, sentenceTransformers);
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
}
