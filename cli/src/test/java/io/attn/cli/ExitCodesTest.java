package io.attn.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.AttnException;
import io.attn.io.Npy;
import io.attn.io.SafeTensors;
import io.attn.reference.layers.RandomStateDicts;
import io.attn.tensor.Tensor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The exit codes a new user meets: a usage error (no input, an unknown device, a negative thread count, a bad
 * precision, an unknown option) is exit 2 with one line that names the command's {@code --help}; an empty input and an
 * {@code .npy} given as the model are bad input (3) with one clear line; every command's help lists the codes.
 */
class ExitCodesTest {
    @TempDir
    Path dir;

    Path model() {
        Path p = dir.resolve("mha.safetensors");
        SafeTensors.write(
                p,
                RandomStateDicts.multiheadAttention(8, true, 1),
                Map.of("config", "{\"module\":\"MultiheadAttention\",\"embed_dim\":8,\"num_heads\":2}"));
        return p;
    }

    Path input(Tensor t) {
        Path p = dir.resolve("x" + t.shape().size() + ".npy");
        Npy.write(p, t);
        return p;
    }

    /** Exit {@code code} and one line holding {@code text} (beside the informational line naming the device). */
    static void oneLine(RunCommandTest.Result r, int code, String text) {
        assertEquals(code, r.code(), r.err());
        List<String> lines =
                r.err().lines().filter(l -> !l.startsWith("attn: device ")).toList();
        assertEquals(1, lines.size(), r.err());
        assertTrue(lines.get(0).startsWith("attn: ") && lines.get(0).contains(text), r.err());
        assertFalse(r.err().contains("Exception") || r.err().contains("Usage:"), r.err());
    }

    @Test
    void usageErrorsAreExitTwoWithOneLine() {
        String m = model().toString(), x = input(Tensor.zeros(1, 3, 8)).toString();
        String help = "(attn run --help shows the usage)";
        oneLine(RunCommandTest.cli("run", "--model", m), 2, "give exactly one of --input and --text " + help);
        oneLine(
                RunCommandTest.cli("run", "--model", m, "--input", x, "--device", "gpu"),
                2,
                "--device gpu: expected auto, cpu or cuda " + help);
        oneLine(
                RunCommandTest.cli("run", "--model", m, "--input", x, "--threads", "-3"),
                2,
                "--threads must be >= 0 (0 = one per physical core), got -3 " + help);
        oneLine(
                RunCommandTest.cli("run", "--model", m, "--input", x, "--precision", "int8"),
                2,
                "--precision int8: expected fp32, tf32, bf16 or fp16");
        oneLine(RunCommandTest.cli("run", "--model", m, "--input", x, "--bogus"), 2, "Unknown option: '--bogus'");
        oneLine(RunCommandTest.cli("run", "--input", x), 2, "Missing required option: '--model=MODEL.safetensors'");
        oneLine(
                RunCommandTest.cli("bench", "gemm", "--m", "4", "--n", "4", "--k", "4", "--threads", "-1"),
                2,
                "--threads");
        oneLine(
                RunCommandTest.cli("parity", "--threads", "-2"),
                2,
                "--threads must be >= 0 (0 = one per physical core), got -2");
        oneLine(
                RunCommandTest.cli("parity", "--precision", "int8"),
                2,
                "--precision int8: expected fp32, tf32, bf16 or fp16");
        oneLine(RunCommandTest.cli("golden", "x", "--device", "gpu"), 2, "--device gpu: expected all, cpu or cuda");
    }

    @Test
    void anEmptyInputIsRefusedNotAveragedToNaN() {
        String m = model().toString();
        for (Tensor empty : List.of(Tensor.zeros(2, 0, 8), Tensor.zeros(0, 3, 8), Tensor.zeros(0, 8))) {
            Path x = input(empty);
            var r = RunCommandTest.cli("run", "--model", m, "--input", x.toString());
            oneLine(r, 3, x + ": the array " + empty.shape() + " is empty: nothing to run");
            assertFalse(r.out().contains("NaN"), r.out());
        }
    }

    @Test
    void anNpyGivenAsTheModelSaysWhatItIs() {
        Path x = input(Tensor.zeros(1, 3, 8));
        oneLine(
                RunCommandTest.cli("run", "--model", x.toString(), "--input", x.toString()),
                3,
                x + ": this is a NumPy .npy array, not a .safetensors file");
    }

    /** The help's list and {@link AttnException.Code#exitStatus}: each code's status listed, saying what it is. */
    @Test
    void theHelpListsEveryCodesExitStatus() {
        Map<String, String> help = new java.util.TreeMap<>();
        for (String c : Main.EXIT_CODES) {
            String[] kv = c.split(":", 2);
            assertNull(help.put(kv[0], kv[1]), "listed twice: " + kv[0]);
        }
        Map<AttnException.Code, String> says = Map.of(
                AttnException.Code.BAD_INPUT, "bad input",
                AttnException.Code.SHAPE_MISMATCH, "shape",
                AttnException.Code.DEVICE_UNAVAILABLE, "device unavailable",
                AttnException.Code.DEVICE_OUT_OF_MEMORY, "out of memory",
                AttnException.Code.NON_FINITE, "non-finite",
                AttnException.Code.INTERNAL, "internal error");
        assertEquals(
                java.util.EnumSet.allOf(AttnException.Code.class), says.keySet(), "a code this test does not know");
        Set<String> statuses = new java.util.TreeSet<>(List.of("0", String.valueOf(AttnException.EXIT_USAGE)));
        for (AttnException.Code c : AttnException.Code.values()) {
            String line = help.get(String.valueOf(c.exitStatus()));
            assertNotNull(line, c + " exits " + c.exitStatus() + ", which the help does not list");
            assertTrue(line.contains(says.get(c)), c + " exits " + c.exitStatus() + ", listed as: " + line);
            statuses.add(String.valueOf(c.exitStatus()));
        }
        assertEquals(statuses, help.keySet(), "the help lists a status no code has");
        assertTrue(help.get("0").equals("ok")
                && help.get(String.valueOf(AttnException.EXIT_USAGE)).startsWith("usage"));
    }

    @Test
    void everyHelpListsTheExitCodes() throws Exception {
        for (String[] args :
                List.of(new String[] {"--help"}, new String[] {"run", "--help"}, new String[] {"probe", "--help"})) {
            var r = RunCommandTest.cli(args);
            assertEquals(0, r.code(), r.err());
            for (String code : Main.EXIT_CODES) {
                String[] kv = code.split(":", 2);
                assertTrue(
                        r.out().matches("(?s).*\\n  " + kv[0] + " +" + java.util.regex.Pattern.quote(kv[1]) + "\\R.*"),
                        String.join(" ", args) + " lacks exit code " + code + ":\n" + r.out());
            }
        }
        // README's table says the same as --help
        String readme = Files.readString(Path.of("..", "README.md"));
        for (String code : Main.EXIT_CODES) {
            String[] kv = code.split(":", 2);
            assertTrue(readme.contains("| " + kv[0] + " | " + kv[1] + " |"), "README lacks exit code " + code);
        }
    }
}
