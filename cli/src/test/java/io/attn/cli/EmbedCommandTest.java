package io.attn.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.engine.Engine;
import io.attn.engine.EngineOptions;
import io.attn.engine.Tensors;
import io.attn.io.Npy;
import io.attn.reference.layers.RandomStateDicts;
import io.attn.tensor.Tensor;
import io.attn.text.Embedder;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code attn embed}, {@code attn bench embed} and {@code attn convert} end to end on a tiny BERT folder with a small
 * hand-made WordPiece {@code tokenizer.json}: outputs are the library's {@link Embedder} results (which the text
 * module checks against the double-precision reference) written through the CLI's streaming writers; bad input gets
 * exit 3 (2 for usage), one line naming the file, and no output file or temporary file left behind.
 */
class EmbedCommandTest {
    static final List<String> VOCAB = List.of(
            "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "sky", "is", "blue", "what", "colour", "?", ".", "a",
            "cat", "sat", "on", "mat", "##s", "green", "grass", "caf", "##e", "!", ",");
    static final int HIDDEN = 16, LAYERS = 2, HEADS = 2, FFN = 24, POS = 32;

    @TempDir
    Path dir;

    static Path tinyModel(Path dir, boolean sentenceTransformers) throws IOException {
        Path m = dir.resolve("tiny-bert");
        Files.createDirectories(m);
        Files.writeString(
                m.resolve("config.json"),
                "{\"model_type\":\"bert\",\"vocab_size\":" + VOCAB.size()
                        + ",\"hidden_size\":" + HIDDEN + ",\"num_hidden_layers\":" + LAYERS
                        + ",\"num_attention_heads\":" + HEADS
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
                    "[{\"idx\":0,\"name\":\"0\",\"path\":\"\",\"type\":"
                            + "\"sentence_transformers.models.Transformer\"},{\"idx\":1,\"name\":\"1\",\"path\":\"1_Pooling\","
                            + "\"type\":\"sentence_transformers.models.Pooling\"},{\"idx\":2,\"name\":\"2\",\"path\":"
                            + "\"2_Normalize\",\"type\":\"sentence_transformers.models.Normalize\"}]");
            Files.writeString(m.resolve("1_Pooling/config.json"), "{\"pooling_mode_mean_tokens\":true}");
        }
        return m;
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

    static float[][] library(Path model, List<String> texts) {
        try (Engine e = Engine.open(EngineOptions.defaults().withDevice("cpu"));
                Embedder m = Embedder.load(e, model)) {
            return m.embed(texts);
        }
    }

    static List<String> leftovers(Path dir) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.map(p -> p.getFileName().toString())
                    .filter(n -> n.endsWith(".tmp"))
                    .toList();
        }
    }

    @Test
    void textsPrintTheCosineTable() throws IOException {
        Path m = tinyModel(dir, true);
        var r = RunCommandTest.cli(
                "embed",
                "--model",
                m.toString(),
                "--device",
                "cpu",
                "--text",
                "the sky is blue",
                "--text",
                "what colour is the sky?",
                "--text",
                "");
        assertEquals(0, r.code(), r.err());
        assertTrue(r.out().contains("3 embeddings of 16 dimensions (mean pooling, normalized)"), r.out());
        assertTrue(r.out().contains("[0]     1.0000"), r.out());
        assertTrue(r.err().contains("tiny-bert"), r.err());
    }

    @Test
    void aFileStreamsThroughInChunksInInputOrder() throws IOException {
        Path m = tinyModel(dir, false);
        List<String> texts = new ArrayList<>();
        String[] words = {"the", "sky", "is", "blue", "cat", "sat", "on", "mat", "green", "grass", "café!", "cats"};
        for (int i = 0; i < TextLines.CHUNK_TEXTS * 2 + 37; i++) {
            StringBuilder t = new StringBuilder();
            for (int w = 0; w <= i % 9; w++)
                t.append(words[(i * 7 + w) % words.length]).append(' ');
            texts.add(i % 500 == 0 ? "" : t.toString().trim());
        }
        Path in = dir.resolve("in.txt");
        Files.write(in, texts, StandardCharsets.UTF_8);
        Path out = dir.resolve("out.npy");
        var r = RunCommandTest.cli(
                "embed",
                "--model",
                m.toString(),
                "--device",
                "cpu",
                "--input",
                in.toString(),
                "--output",
                out.toString());
        assertEquals(0, r.code(), r.err());
        Tensor got = Npy.read(out);
        assertArrayEquals(new int[] {texts.size(), HIDDEN}, got.shape().dims());
        float[][] want = library(m, texts);
        for (int i = 0; i < texts.size(); i++)
            assertArrayEquals(
                    want[i], java.util.Arrays.copyOfRange(got.data(), i * HIDDEN, (i + 1) * HIDDEN), "row " + i);
        assertEquals(List.of(), leftovers(dir));

        Path jl = dir.resolve("in.jsonl");
        List<String> lines = new ArrayList<>();
        for (int i = 0; i < 50; i++)
            lines.add("{\"id\": " + i + ", \"body\": \"" + texts.get(i) + "\"}" + (i % 10 == 0 ? "\n" : ""));
        Files.write(jl, lines, StandardCharsets.UTF_8);
        Path outJson = dir.resolve("out.jsonl");
        r = RunCommandTest.cli(
                "embed",
                "--model",
                m.toString(),
                "--device",
                "cpu",
                "--input",
                jl.toString(),
                "--text-field",
                "body",
                "--output",
                outJson.toString());
        assertEquals(0, r.code(), r.err());
        List<String> rows = Files.readAllLines(outJson);
        assertEquals(50, rows.size());
        for (int i = 0; i < 50; i++) {
            var o = com.google.gson.JsonParser.parseString(rows.get(i)).getAsJsonObject();
            assertEquals(i, o.get("index").getAsInt());
            var e = o.getAsJsonArray("embedding");
            for (int k = 0; k < HIDDEN; k++) assertEquals(want[i][k], e.get(k).getAsFloat(), "row " + i);
        }
    }

    @Test
    void badInputLeavesNothingBehind() throws IOException {
        Path m = tinyModel(dir, false);
        Path out = dir.resolve("out.npy");
        Path in = dir.resolve("bad.txt");
        Files.write(in, new byte[] {'o', 'k', '\n', 'f', 'i', 'n', 'e', '\n', (byte) 0xC3, (byte) 0x28, '\n'});
        var r = RunCommandTest.cli(
                "embed",
                "--model",
                m.toString(),
                "--device",
                "cpu",
                "--input",
                in.toString(),
                "--output",
                out.toString());
        assertEquals(3, r.code());
        assertTrue(r.err().contains("bad.txt: line 3 is not valid UTF-8"), r.err());
        assertFalse(Files.exists(out));
        assertEquals(List.of(), leftovers(dir));

        Path jl = dir.resolve("bad.jsonl");
        Files.writeString(jl, "{\"text\": \"ok\"}\n{\"text\": 3}\n");
        r = RunCommandTest.cli("embed", "--model", m.toString(), "--input", jl.toString(), "--output", out.toString());
        assertEquals(3, r.code());
        assertTrue(r.err().contains("bad.jsonl: line 2 has no string field \"text\""), r.err());
        Files.writeString(jl, "{\"text\": \"ok\"} trailing\n");
        r = RunCommandTest.cli("embed", "--model", m.toString(), "--input", jl.toString(), "--output", out.toString());
        assertEquals(3, r.code());
        assertTrue(r.err().contains("bad.jsonl: line 1 is not a JSON object"), r.err());

        r = RunCommandTest.cli("embed", "--model", dir.resolve("missing").toString(), "--text", "x");
        assertEquals(3, r.code());
        assertTrue(r.err().startsWith("attn: ") && r.err().contains("missing: no such file or directory"), r.err());
        assertEquals(1, r.err().strip().lines().count(), r.err());

        r = RunCommandTest.cli("embed", "--model", m.toString(), "--input", in.toString());
        assertEquals(2, r.code());
        r = RunCommandTest.cli("embed", "--model", m.toString(), "--input", in.toString(), "--text", "x");
        assertEquals(2, r.code());
        r = RunCommandTest.cli("embed", "--model", m.toString(), "--text", "x", "--output", "out.csv");
        assertEquals(3, r.code());
        assertTrue(r.err().contains("out.csv: expected an .npy or .jsonl output file"), r.err());
        r = RunCommandTest.cli("embed", "--model", m.toString(), "--text", "x", "--pooling", "median");
        assertEquals(3, r.code());
        assertEquals(List.of(), leftovers(dir));
        assertFalse(Files.exists(out));
    }

    @Test
    void benchEmbedEndsWithOneJsonLine() throws IOException {
        Path m = tinyModel(dir, true);
        Path in = dir.resolve("in.txt");
        Files.write(in, List.of("the sky is blue", "what colour is the sky?", "a cat sat on the mat"));
        var r = RunCommandTest.cli(
                "bench",
                "embed",
                "--model",
                m.toString(),
                "--input",
                in.toString(),
                "--device",
                "cpu",
                "--warmup-ms",
                "50",
                "--min-ms",
                "100");
        assertEquals(0, r.code(), r.err());
        String last = r.out().strip().lines().reduce((a, b) -> b).orElseThrow();
        var o = com.google.gson.JsonParser.parseString(last).getAsJsonObject();
        assertEquals("embed", o.get("bench").getAsString());
        assertEquals(3, o.get("texts").getAsInt());
        assertTrue(o.get("sentences_per_s").getAsDouble() > 0);
        assertTrue(
                o.get("tokens_per_s").getAsDouble() > o.get("sentences_per_s").getAsDouble());
        assertTrue(o.has("cpu"));
    }

    @Test
    void convertRefusesWhatIsNotAnOnnxExport() throws IOException {
        Path f = dir.resolve("model.onnx");
        Files.writeString(f, "not protobuf");
        var r = RunCommandTest.cli(
                "convert",
                f.toString(),
                "--tokenizer",
                f.toString(),
                "--out",
                dir.resolve("o").toString());
        assertEquals(3, r.code());
        assertTrue(r.err().contains("model.onnx"), r.err());
        assertFalse(Files.exists(dir.resolve("o")));
    }
}
