package io.attn.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.attn.io.Json;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code attn rerank} and {@code attn classify} on the committed fixtures ({@code tests/rerankers}, written by {@code
 * tools/make_rerankers.py}): the ranking is {@code CrossEncoder.rank}'s and the scores are within 2e-6 of {@code
 * CrossEncoder.predict}'s; the classifier's labels and softmax scores are transformers'; bad input is one line and exit 3.
 */
class RerankCommandTest {
    static final Path ROOT = Path.of("../tests/rerankers");

    @TempDir
    Path dir;

    @SuppressWarnings("unchecked")
    static Map<String, Object> expected(String name) {
        return (Map<String, Object>) Json.read(ROOT.resolve(name).resolve("expected.json"));
    }

    /** {@code attn COMMAND --model tests/rerankers/MODEL --device cpu ARGS...}. */
    static RunCommandTest.Result run(String command, String model, String... args) {
        List<String> all =
                new ArrayList<>(List.of(command, "--model", ROOT.resolve(model).toString(), "--device", "cpu"));
        all.addAll(List.of(args));
        return RunCommandTest.cli(all.toArray(String[]::new));
    }

    @Test
    @SuppressWarnings("unchecked")
    void ranksAsCrossEncoderDoes() throws Exception {
        Map<String, Object> x = expected("bert-reranker");
        List<List<String>> pairs = (List<List<String>>) x.get("pairs");
        List<Number> scores = (List<Number>) x.get("scores");
        String query = pairs.get(0).get(0);
        List<String> passages = new ArrayList<>();
        for (int i = 0; i < 5; i++) passages.add(pairs.get(i).get(1));
        Path in = dir.resolve("passages.txt");
        Files.write(in, passages, StandardCharsets.UTF_8);
        Path out = dir.resolve("ranked.jsonl");
        var r = run("rerank", "bert-reranker", "--query", query, "--input", in.toString(), "--output", out.toString());
        assertEquals(0, r.code(), r.err());
        List<String> lines = Files.readAllLines(out, StandardCharsets.UTF_8);
        List<Map<String, Object>> rank = (List<Map<String, Object>>) x.get("rank");
        assertEquals(rank.size(), lines.size());
        for (int i = 0; i < lines.size(); i++) {
            JsonObject o = JsonParser.parseString(lines.get(i)).getAsJsonObject();
            int index = o.get("index").getAsInt();
            assertEquals(((Number) rank.get(i).get("corpus_id")).intValue(), index, "rank " + i);
            assertEquals(scores.get(index).doubleValue(), o.get("score").getAsDouble(), 2e-6, "score of " + index);
            assertEquals(passages.get(index), o.get("text").getAsString());
        }
        var top = run(
                "rerank",
                "bert-reranker",
                "--query",
                query,
                "--text",
                passages.get(0),
                "--text",
                passages.get(1),
                "--text",
                passages.get(2),
                "--top-n",
                "2",
                "--raw-scores");
        assertEquals(0, top.code(), top.err());
        assertEquals(2, top.out().lines().count(), top.out());
    }

    @Test
    @SuppressWarnings("unchecked")
    void classifiesAsTransformersDoes() throws Exception {
        Map<String, Object> x = expected("bert-classifier");
        List<String> texts = (List<String>) x.get("texts");
        List<List<Number>> soft = (List<List<Number>>) x.get("softmax");
        Path in = dir.resolve("texts.txt");
        Files.write(in, texts, StandardCharsets.UTF_8);
        Path out = dir.resolve("labels.jsonl");
        var r = run("classify", "bert-classifier", "--input", in.toString(), "--output", out.toString());
        assertEquals(0, r.code(), r.err());
        List<String> lines = Files.readAllLines(out, StandardCharsets.UTF_8);
        assertEquals(texts.size(), lines.size());
        String[] labels = {"negative", "neutral", "positive"};
        for (int i = 0; i < lines.size(); i++) {
            JsonObject o = JsonParser.parseString(lines.get(i)).getAsJsonObject();
            int best = 0;
            for (int k = 0; k < 3; k++) {
                double want = soft.get(i).get(k).doubleValue();
                assertEquals(want, o.getAsJsonObject("scores").get(labels[k]).getAsDouble(), 2e-6);
                if (want > soft.get(i).get(best).doubleValue()) best = k;
            }
            assertEquals(labels[best], o.get("label").getAsString());
        }
    }

    @Test
    @SuppressWarnings("unchecked")
    void classifiesPairsAsTransformersDoes() throws Exception {
        // sentence pairs (token type 1 on the second text), judged by transformers' classifier on the same pairs
        Map<String, Object> x =
                (Map<String, Object>) expected("bert-classifier").get("pairs");
        List<List<String>> pairs = (List<List<String>>) x.get("pairs");
        List<List<Number>> soft = (List<List<Number>>) x.get("softmax");
        Path in = dir.resolve("pairs.jsonl");
        List<String> jsonl = new ArrayList<>();
        for (List<String> pr : pairs)
            jsonl.add(
                    "{\"text\":" + ScoreOutput.json(pr.get(0)) + ",\"text_pair\":" + ScoreOutput.json(pr.get(1)) + "}");
        Files.write(in, jsonl, StandardCharsets.UTF_8);
        Path out = dir.resolve("pairs-out.jsonl");
        var r = run(
                "classify",
                "bert-classifier",
                "--input",
                in.toString(),
                "--pair-field",
                "text_pair",
                "--output",
                out.toString());
        assertEquals(0, r.code(), r.err());
        List<String> lines = Files.readAllLines(out, StandardCharsets.UTF_8);
        assertEquals(pairs.size(), lines.size());
        String[] labels = {"negative", "neutral", "positive"};
        for (int i = 0; i < lines.size(); i++) {
            JsonObject o = JsonParser.parseString(lines.get(i)).getAsJsonObject();
            for (int k = 0; k < 3; k++)
                assertEquals(
                        soft.get(i).get(k).doubleValue(),
                        o.getAsJsonObject("scores").get(labels[k]).getAsDouble(),
                        2e-6,
                        "pair " + i + " label " + labels[k]);
        }
        // the same first pair given on the command line: the same scores as line 0 of the file
        var t = run(
                "classify",
                "bert-classifier",
                "--text",
                pairs.get(0).get(0),
                "--text-pair",
                pairs.get(0).get(1));
        assertEquals(0, t.code(), t.err());
        String want =
                String.format(java.util.Locale.ROOT, "%.6f", soft.get(0).get(0).doubleValue());
        assertTrue(t.out().contains("negative " + want), t.out());
        // a pair count that does not match, a --pair-field on a .txt input, a line without the pair field: exit 3/2
        var bad = run("classify", "bert-classifier", "--text", "a", "--text", "b", "--text-pair", "c");
        assertEquals(2, bad.code(), bad.err());
        assertTrue(bad.err().contains("--text-pair given 1 times for 2 --text"), bad.err());
        Path missing = dir.resolve("missing.jsonl");
        Files.writeString(missing, "{\"text\":\"a\",\"text_pair\":\"b\"}\n{\"text\":\"c\"}\n");
        var m = run("classify", "bert-classifier", "--input", missing.toString(), "--pair-field", "text_pair");
        assertEquals(3, m.code(), m.err());
        assertTrue(m.err().contains("text_pair"), m.err());
        assertEquals(1, m.err().lines().count(), m.err());
    }

    @Test
    void badInputIsOneLineAndExit3() throws Exception {
        Path empty = dir.resolve("empty.txt");
        Files.writeString(empty, "");
        var r = run("rerank", "bert-reranker", "--query", "q", "--input", empty.toString());
        assertEquals(3, r.code(), r.err());
        assertEquals(1, r.err().lines().filter(l -> l.startsWith("attn:")).count(), r.err());
        var e = RunCommandTest.cli(
                "rerank", "--model", "../tests/families/bert", "--device", "cpu", "--query", "q", "--text", "p");
        assertEquals(3, e.code(), e.err());
        assertTrue(e.err().contains("not a sequence classifier"), e.err());
        assertEquals(1, e.err().lines().count(), e.err());
        var c = RunCommandTest.cli(
                "embed", "--model", ROOT.resolve("bert-classifier").toString(), "--device", "cpu", "--text", "p");
        assertEquals(3, c.code(), c.err());
        assertTrue(c.err().contains("sequence classifier"), c.err());
        // a classifier asked to rerank, a top-n past the passages: one line naming it, exit 3
        var k = run("rerank", "bert-classifier", "--query", "q", "--text", "p");
        assertEquals(3, k.code(), k.err());
        assertTrue(k.err().contains("3 labels") && k.err().contains("not a reranker"), k.err());
        assertEquals(1, k.err().lines().count(), k.err());
        var t = run("rerank", "bert-reranker", "--query", "q", "--text", "a", "--text", "b", "--top-n", "3");
        assertEquals(3, t.code(), t.err());
        assertTrue(t.err().contains("--top-n 3 is more than the 2 passages"), t.err());
        assertEquals(1, t.err().lines().count(), t.err());
        // an output that cannot be written is refused before the scoring, naming why; one that is the input, too
        for (String cmd : new String[] {"rerank", "classify"}) {
            String model = cmd.equals("rerank") ? "bert-reranker" : "bert-classifier";
            String[] query = cmd.equals("rerank") ? new String[] {"--query", "q"} : new String[0];
            Path nowhere = dir.resolve("none").resolve("out.jsonl");
            var o = run(cmd, model, cat(new String[] {"--text", "p", "--output", nowhere.toString()}, query));
            assertEquals(3, o.code(), o.err());
            assertTrue(o.err().contains("out.jsonl: no such directory"), o.err());
            assertEquals(1, o.err().lines().count(), o.err());
            Path in = dir.resolve(cmd + "-in.jsonl");
            Files.writeString(in, "{\"text\": \"p\"}\n");
            var s = run(cmd, model, cat(new String[] {"--input", in.toString(), "--output", in.toString()}, query));
            assertEquals(2, s.code(), s.err());
            assertTrue(s.err().contains("is the --input file"), s.err());
            assertEquals("{\"text\": \"p\"}\n", Files.readString(in));
        }
    }

    private static String[] cat(String[] a, String[] b) {
        String[] r = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, r, a.length, b.length);
        return r;
    }
}
