package io.attn.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.io.SafeTensors;
import io.attn.reference.layers.LayerConfig;
import io.attn.reference.layers.RandomStateDicts;
import io.attn.reference.layers.RefDecoderOnlyLM;
import io.attn.tensor.Tensor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code attn generate} end to end on a random decoder-only LM written as safetensors (config in the metadata) with a
 * word vocabulary: greedy output equals the double-precision reference's greedy tokens (cut at {@code <eos>}), joined
 * by single spaces; a seed makes sampling reproducible; bad inputs give exit code 3 and one line.
 */
class GenerateCommandTest {
    static final List<String> VOCAB = List.of(
            "<unk>", "<bos>", "<eos>", "the", "cat", "sat", "on", "mat", ".", ",", "a", "dog", "ran", "to", "house",
            "big", "small", "red", "blue", "is", "and", "it", "was");
    static final String CONFIG = "{\"module\":\"DecoderOnlyLM\",\"vocab_size\":23,\"d_model\":16,\"nhead\":4,"
            + "\"num_layers\":2,\"dim_feedforward\":32,\"max_len\":32,\"positional\":\"sinusoidal\","
            + "\"norm_first\":true,\"activation\":\"gelu\",\"tied_embeddings\":true,\"final_norm\":true}";

    @TempDir
    Path dir;

    Map<String, Tensor> sd() {
        LayerConfig c = LayerConfig.of(16, 4, 32).withActivation("gelu").withNormFirst(true);
        return RandomStateDicts.decoderOnlyLM(c, 23, 2, 32, false, true, true, false, 3);
    }

    Path[] files() throws Exception {
        Path m = dir.resolve("lm.safetensors"), v = dir.resolve("vocab.txt");
        SafeTensors.write(m, sd(), Map.of("config", CONFIG));
        Files.writeString(v, String.join("\n", VOCAB) + "\n");
        return new Path[] {m, v};
    }

    @Test
    void greedyOutputIsTheReferenceGreedyTokens() throws Exception {
        Path[] f = files();
        var r = RunCommandTest.ok(
                "generate",
                "--model",
                f[0].toString(),
                "--vocab",
                f[1].toString(),
                "--prompt",
                "The cat sat on",
                "--temperature",
                "0",
                "--max-new-tokens",
                "10",
                "--device",
                "cpu");
        LayerConfig c = LayerConfig.of(16, 4, 32).withActivation("gelu").withNormFirst(true);
        double[] gap = new double[1];
        int[] want = new RefDecoderOnlyLM(sd(), c, 2, false, true, true).greedy(new int[] {1, 3, 4, 5, 6}, 10, gap);
        assertTrue(gap[0] > 1e-3, "reference near-tie " + gap[0]);
        List<String> words = new ArrayList<>();
        for (int id : want) {
            if (id == 2) break; // <eos>
            words.add(VOCAB.get(id));
        }
        assertEquals(String.join(" ", words) + "\n", r.out());
        assertTrue(r.err().contains("tokens/s"), r.err());
    }

    @Test
    void samplingIsReproducibleWithASeed() throws Exception {
        Path[] f = files();
        String[] args = {
            "generate",
            "--model",
            f[0].toString(),
            "--vocab",
            f[1].toString(),
            "--prompt",
            "a dog",
            "--prompt",
            "the big red house is",
            "--temperature",
            "1.5",
            "--top-k",
            "10",
            "--top-p",
            "0.95",
            "--seed",
            "7",
            "--max-new-tokens",
            "12",
            "--device",
            "cpu"
        };
        var a = RunCommandTest.ok(args);
        var b = RunCommandTest.ok(args);
        assertEquals(a.out(), b.out());
        assertEquals(2, a.out().lines().count(), a.out()); // one line per prompt
        args[args.length - 5] = "8"; // another seed
        assertNotEquals(a.out(), RunCommandTest.ok(args).out());
    }

    @Test
    void badInputsAreOneLineErrors() throws Exception {
        Path[] f = files();
        Path small = dir.resolve("small.txt");
        Files.writeString(small, "<unk>\n<bos>\n<eos>\nthe\n");
        var r = RunCommandTest.cli(
                "generate",
                "--model",
                f[0].toString(),
                "--vocab",
                small.toString(),
                "--prompt",
                "x",
                "--device",
                "cpu");
        assertEquals(3, r.code());
        assertTrue(r.err().contains("vocab_size"), r.err());
        r = RunCommandTest.cli(
                "generate",
                "--model",
                f[0].toString(),
                "--vocab",
                f[1].toString(),
                "--prompt",
                "the",
                "--max-new-tokens",
                "40",
                "--device",
                "cpu");
        assertEquals(3, r.code());
        assertTrue(r.err().contains("max_len"), r.err());
        for (String[] bad : new String[][] {
            {"--temperature", "Infinity", "--temperature must be >= 0, got Infinity"},
            {"--temperature", "-1", "--temperature must be >= 0, got -1.0"},
            {"--top-k", "-2", "--top-k must be >= 0, got -2"},
            {"--top-p", "1.5", "--top-p must be in (0, 1], got 1.5"},
            {"--max-new-tokens", "-1", "--max-new-tokens must be >= 0, got -1"}
        }) {
            r = RunCommandTest.cli(
                    "generate",
                    "--model",
                    f[0].toString(),
                    "--vocab",
                    f[1].toString(),
                    "--prompt",
                    "the",
                    bad[0],
                    bad[1],
                    "--device",
                    "cpu");
            assertEquals(3, r.code(), r.err());
            assertTrue(r.err().contains(bad[2]), r.err());
            assertEquals(1, r.err().lines().count(), "one line: " + r.err());
        }
    }
}
