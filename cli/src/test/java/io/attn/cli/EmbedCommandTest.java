package io.attn.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.engine.Engine;
import io.attn.engine.EngineOptions;
import io.attn.fixtures.TinyTextModel;
import io.attn.io.Npy;
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
    @TempDir
    Path dir;

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

    /** {@code attn embed --input INPUT --output OUT.npy} (plus {@code extra}) on the CPU: its rows. */
    /** {@code texts} as a {@code .jsonl} input file ({@code {"text": ...}} per line) in the test's folder. */
    Path jsonl(List<String> texts) throws IOException {
        Path in = dir.resolve("texts.jsonl");
        List<String> lines = new ArrayList<>();
        for (String t : texts) {
            var o = new com.google.gson.JsonObject();
            o.addProperty("text", t);
            lines.add(o.toString());
        }
        Files.write(in, lines, StandardCharsets.UTF_8);
        return in;
    }

    static float[][] embedFile(Path model, Path input, Path out, String... extra) throws IOException {
        List<String> args = new ArrayList<>(List.of(
                "embed",
                "--model",
                model.toString(),
                "--device",
                "cpu",
                "--input",
                input.toString(),
                "--output",
                out.toString()));
        args.addAll(List.of(extra));
        var r = RunCommandTest.cli(args.toArray(String[]::new));
        assertEquals(0, r.code(), r.err());
        Tensor t = Npy.read(out);
        int e = t.dim(1);
        float[][] v = new float[t.dim(0)][];
        for (int i = 0; i < v.length; i++) v[i] = java.util.Arrays.copyOfRange(t.data(), i * e, (i + 1) * e);
        return v;
    }

    /** {@code got} within the family suite's bounds of {@code want}: cosine >= 0.99999, max abs <= 1e-4 x its norm. */
    static void assertNear(String what, float[] got, float[] want) {
        double nb = 0, worst = 0;
        for (int k = 0; k < want.length; k++) {
            nb += (double) want[k] * want[k];
            worst = Math.max(worst, Math.abs(got[k] - want[k]));
        }
        assertTrue(cosine(got, want) >= 0.99999, what + ": cosine " + cosine(got, want));
        assertTrue(worst <= 1e-4 * Math.sqrt(nb), what + ": max abs error " + worst);
    }

    static double cosine(float[] a, float[] b) {
        double dot = 0, na = 0, nb = 0;
        for (int k = 0; k < a.length; k++) {
            dot += (double) a[k] * b[k];
            na += (double) a[k] * a[k];
            nb += (double) b[k] * b[k];
        }
        return dot / Math.sqrt(na * nb);
    }

    @Test
    void textsPrintTheCosineTable() throws IOException {
        Path m = TinyTextModel.folder(dir, true);
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
        Path m = TinyTextModel.folder(dir, false);
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
        assertArrayEquals(
                new int[] {texts.size(), TinyTextModel.HIDDEN}, got.shape().dims());
        float[][] want = library(m, texts);
        for (int i = 0; i < texts.size(); i++)
            assertArrayEquals(
                    want[i],
                    java.util.Arrays.copyOfRange(got.data(), i * TinyTextModel.HIDDEN, (i + 1) * TinyTextModel.HIDDEN),
                    "row " + i);
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
            for (int k = 0; k < TinyTextModel.HIDDEN; k++)
                assertEquals(want[i][k], e.get(k).getAsFloat(), "row " + i);
        }
    }

    /**
     * Prompts end to end against sentence-transformers: {@code tests/families/xlm-roberta} (prompts {@code query: } and
     * {@code passage: }, default {@code query}) through {@code attn embed}'s JSON-lines path, each way of choosing the
     * prompt against the vectors sentence-transformers 6.0.1 gave for it ({@code expected.json}, tools/make_families.py):
     * within cosine 0.99999 and 1e-4 x norm, the family suite's bound. An unknown name is bad input naming the
     * model's prompts.
     */
    @Test
    void promptsAreSentenceTransformersOnes() throws IOException {
        Path model = Path.of("../tests/families/xlm-roberta");
        var x = com.google.gson.JsonParser.parseString(Files.readString(model.resolve("expected.json")))
                .getAsJsonObject();
        List<String> texts = new ArrayList<>();
        for (var t : x.getAsJsonArray("texts")) texts.add(t.getAsString());
        java.util.Map<String, float[][]> st = new java.util.HashMap<>();
        for (var enc : x.getAsJsonArray("encodings")) {
            var o = enc.getAsJsonObject();
            var rows = o.getAsJsonArray("embeddings");
            float[][] v = new float[rows.size()][];
            for (int i = 0; i < v.length; i++) {
                var row = rows.get(i).getAsJsonArray();
                v[i] = new float[row.size()];
                for (int k = 0; k < v[i].length; k++) v[i][k] = row.get(k).getAsFloat();
            }
            st.put(o.get("prompt_name").isJsonNull() ? "" : o.get("prompt_name").getAsString(), v);
        }
        assertEquals(java.util.Set.of("", "query", "passage"), st.keySet());
        Path in = jsonl(texts);
        String[][] ways = {{}, {"--prompt-name", "passage"}, {"--prompt", "passage: "}, {"--prompt", ""}};
        String[] want = {"query", "passage", "passage", ""};
        for (int w = 0; w < ways.length; w++) {
            float[][] got = embedFile(model, in, dir.resolve("out" + w + ".npy"), ways[w]);
            for (int i = 0; i < texts.size(); i++)
                assertNear(String.join(" ", ways[w]) + " text " + i, got[i], st.get(want[w])[i]);
        }
        // the prompts differ enough that a wrong choice fails the bound
        assertTrue(Math.abs(st.get("query")[0][0] - st.get("passage")[0][0]) > 1e-3);
        var r = RunCommandTest.cli(
                "embed", "--model", model.toString(), "--device", "cpu", "--text", "x", "--prompt-name", "nope");
        assertEquals(3, r.code(), r.err());
        assertEquals(1, r.err().strip().lines().count(), r.err());
        assertTrue(r.err().contains("nope") && r.err().contains("passage"), r.err());
    }

    /**
     * {@code attn embed --task} on jina-embeddings-v3's hub folder ({@code tests/families/jina-v3-hub},
     * tools/make_jina_v3.py): the task's adapter merged and its prompt put first, against sentence-transformers'
     * vectors of that task's merged weights with that prompt ({@code tasks.json}), within cosine 0.99999 and 1e-4 x
     * norm; with --prompt "" the prompt is left out (the no-prompt vectors of the same task are not in the fixture, so
     * that run is held to differ from the prompted one). A task the model does not have: exit 3, one line naming the
     * tasks it has.
     */
    @Test
    void taskAdaptersAreJinaOnes() throws IOException {
        Path model = Path.of("../tests/families/jina-v3-hub");
        var x = com.google.gson.JsonParser.parseString(Files.readString(model.resolve("tasks.json")))
                .getAsJsonObject();
        List<String> texts = new ArrayList<>();
        for (var t : x.getAsJsonArray("texts")) texts.add(t.getAsString());
        Path in = jsonl(texts);
        float[][] prompted = null;
        for (var run : x.getAsJsonArray("runs")) {
            var o = run.getAsJsonObject();
            if (o.get("task").isJsonNull() || !o.get("task").getAsString().equals("retrieval.query")) continue;
            prompted = embedFile(model, in, dir.resolve("q.npy"), "--task", "retrieval.query");
            // the adapter beside the weights (as attn serve shares one folder between tasks): the same judge
            float[][] shared = embedFile(
                    model, in, dir.resolve("qs.npy"), "--task", "retrieval.query", "--task-adapters", "share");
            var rows = o.getAsJsonArray("embeddings");
            for (int i = 0; i < rows.size(); i++) {
                var row = rows.get(i).getAsJsonArray();
                float[] b = new float[row.size()];
                for (int k = 0; k < b.length; k++) b[k] = row.get(k).getAsFloat();
                assertNear("text " + i, prompted[i], b);
                assertNear("text " + i + " (--task-adapters share)", shared[i], b);
            }
        }
        assertTrue(prompted != null, "tasks.json has no retrieval.query run");
        float[][] bare = embedFile(model, in, dir.resolve("q0.npy"), "--task", "retrieval.query", "--prompt", "");
        assertTrue(cosine(bare[0], prompted[0]) < 0.999, "--prompt \"\" leaves the task's prompt out");
        var r = RunCommandTest.cli(
                "embed", "--model", model.toString(), "--device", "cpu", "--text", "x", "--task", "query");
        assertEquals(3, r.code(), r.err());
        assertEquals(1, r.err().strip().lines().count(), r.err());
        assertTrue(r.err().contains("\"query\"") && r.err().contains("text-matching"), r.err());
        r = RunCommandTest.cli(
                "embed",
                "--model",
                model.toString(),
                "--device",
                "cpu",
                "--text",
                "x",
                "--task",
                "separation",
                "--task-adapters",
                "apart");
        assertEquals(2, r.code(), r.err());
        assertTrue(r.err().contains("--task-adapters apart: use merge or share"), r.err());
    }

    @Test
    void badInputLeavesNothingBehind() throws IOException {
        Path m = TinyTextModel.folder(dir, false);
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
        assertTrue(r.err().contains("bad.jsonl: line 2: field \"text\" is not a string"), r.err());
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
        // bad option values are usage errors (exit 2) naming the option, refused before the model loads
        r = RunCommandTest.cli("embed", "--model", m.toString(), "--text", "x", "--pooling", "median");
        assertEquals(2, r.code());
        assertTrue(r.err().contains("--pooling median: expected one of mean, cls"), r.err());
        for (String[] bad : new String[][] {
            {"--max-length", "-5"},
            {"--batch-size", "0"},
            {"--batch-tokens", "-1"},
            {"--prompt", "a", "--prompt-name", "q"}
        }) {
            String[] args = new String[5 + bad.length];
            System.arraycopy(new String[] {"embed", "--model", m.toString(), "--text", "x"}, 0, args, 0, 5);
            System.arraycopy(bad, 0, args, 5, bad.length);
            r = RunCommandTest.cli(args);
            assertEquals(2, r.code(), String.join(" ", bad) + ": " + r.err());
            assertTrue(r.err().contains(bad[bad.length - 2].equals("--prompt-name") ? "--prompt" : bad[0]), r.err());
            assertTrue(r.err().contains("(attn embed --help shows the usage)"), r.err());
            assertEquals(1, r.err().strip().lines().count(), r.err());
        }
        // a subcommand's own usage errors name it whole (they said "embed --help" for attn bench embed)
        r = RunCommandTest.cli(
                "bench", "embed", "--model", m.toString(), "--input", in.toString(), "--batch-size", "0");
        assertEquals(2, r.code(), r.err());
        assertTrue(r.err().contains("(attn bench embed --help shows the usage)"), r.err());
        assertEquals(List.of(), leftovers(dir));
        assertFalse(Files.exists(out));

        // an input without texts is refused as rerank, classify and bench refuse it: no (0, E) file
        Path empty = dir.resolve("empty.txt");
        Files.writeString(empty, "");
        r = RunCommandTest.cli(
                "embed", "--model", m.toString(), "--input", empty.toString(), "--output", out.toString());
        assertEquals(3, r.code(), r.err());
        assertTrue(r.err().contains("empty.txt: no texts"), r.err());
        assertFalse(Files.exists(out));
        assertEquals(List.of(), leftovers(dir));
        // the output may not be the input (it would replace it), refused before the model loads
        Path same = dir.resolve("same.jsonl");
        Files.writeString(same, "{\"text\": \"ok\"}\n");
        r = RunCommandTest.cli(
                "embed", "--model", m.toString(), "--input", same.toString(), "--output", same.toString());
        assertEquals(2, r.code(), r.err());
        assertTrue(r.err().contains("is the --input file: it would be replaced"), r.err());
        assertEquals("{\"text\": \"ok\"}\n", Files.readString(same));
        r = RunCommandTest.cli(
                "embed",
                "--model",
                m.toString(),
                "--text",
                "x",
                "--output",
                dir.resolve("none/o.npy").toString());
        assertEquals(3, r.code(), r.err());
        assertTrue(r.err().contains("o.npy: no such directory"), r.err());
    }

    @Test
    void benchEmbedEndsWithOneJsonLine() throws IOException {
        Path m = TinyTextModel.folder(dir, true);
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
        assertEquals(-1, o.get("weights_bytes").getAsLong()); // the cpu computes from the model's own arrays
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
