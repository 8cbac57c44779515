package io.attn.parity;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.graph.Op;
import java.util.List;
import java.util.Set;
import java.util.function.Predicate;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Proves the suite can fail: each deliberately broken variant of the naive backend must fail exactly the cases that
 * exercise its bug (and pass every other case, so the failures are not noise).
 */
class BrokenBackendTest {
    static Stream<Arguments> breakages() {
        return Stream.of(
                of(
                        PlantedBugBackend.Breakage.SOFTMAX_WRONG_AXIS,
                        c -> c.op() == Op.SOFTMAX && !c.name().equals("softmax rows [1, 1]"),
                        null),
                of(
                        PlantedBugBackend.Breakage.ATTENTION_IGNORES_CAUSAL,
                        c -> c.op() == Op.ATTENTION && c.name().contains("causal"),
                        null),
                // an ADD's extra element lands past the output (the guard sees it) or past an intermediate's buffer
                // (the ADD of an adapter's sum inside the "+add+" epilogue chains)
                of(
                        PlantedBugBackend.Breakage.ADD_WRITES_PAST_END,
                        c -> c.op() == Op.ADD || c.name().contains("+add+"),
                        "past the end|out of bounds"),
                of(PlantedBugBackend.Breakage.SCALE_SKIPS_LAST, c -> c.op() == Op.SCALE, null),
                // (scaling +inf by 4 writes +inf back: unchanged, so that case cannot see the bug)
                of(
                        PlantedBugBackend.Breakage.SCALE_WRITES_INPUT,
                        c -> c.op() == Op.SCALE && !c.name().contains("+-inf"),
                        "modified input"),
                // -1e9 stands in for bool/causal masking only; a row made all -inf by an additive mask or a relative
                // bias still gives zeros (the tiles' additive row 2 too; at D64 their random masks leave a query with
                // -inf keys before its causally masked ones, which then share its weight); next to scores of -1e30,
                // -1e9 is no -inf
                of(
                        PlantedBugBackend.Breakage.MASKED_ROW_UNIFORM,
                        c -> hasAllMaskedRow(c)
                                        && !c.name().contains("additive row of -inf")
                                        && !c.name().contains("with -inf diagonals")
                                        && !c.name().contains("all-masked row: causal+additive(B,1,L,S)")
                                || c.name()
                                        .equals("attention tiles all-masked row: causal+additive(B,1,L,S)+additive"
                                                + " padding B2 H3 L35 S35 D64")
                                || c.name().startsWith("attention huge scores"),
                        null),
                of(PlantedBugBackend.Breakage.MASKED_ROW_NAN, BrokenBackendTest::hasAllMaskedRow, "non-finite"),
                of(
                        PlantedBugBackend.Breakage.SOFTMAX_NO_MAX_SUBTRACTION,
                        c -> c.name().startsWith("softmax large |x|")
                                || c.name().startsWith("attention large scores")
                                || c.name().startsWith("attention huge scores")
                                || hasAllMaskedRow(c),
                        null),
                of(
                        PlantedBugBackend.Breakage.MASK_IGNORES_BROADCAST,
                        c -> c.name()
                                .matches(".*(\\(B,1,L,S\\)|\\(1,H,L,S\\)|\\(B,H,L,S\\)|additive row of -inf [(B]).*"),
                        null),
                of(
                        PlantedBugBackend.Breakage.LAYER_NORM_ONE_PASS_VARIANCE,
                        c -> c.name().contains("mean 100"),
                        null),
                of(
                        PlantedBugBackend.Breakage.GELU_TANH_OVERFLOW,
                        // and the products before a GELU (|x| ~ 10: exp(2x) of the naive form overflows there too)
                        c -> c.name().equals("gelu tanh large |x|")
                                || c.name().startsWith("gelu tanh ramp")
                                || (c.name().startsWith("matmul epilogue")
                                        && c.name().contains("gelu tanh"))
                                || c.name().startsWith("glu gelu_tanh activated first large |x|"),
                        "non-finite"),
                of(
                        PlantedBugBackend.Breakage.PE_IGNORES_OFFSET,
                        c -> c.op() == Op.POSITIONAL_ENCODING && !c.name().endsWith("offset 0"),
                        null),
                of(
                        PlantedBugBackend.Breakage.SPLIT_HEADS_AS_RESHAPE,
                        c -> c.op() == Op.SPLIT_HEADS
                                && !c.name().endsWith(" H=1")
                                && !c.name().contains(" heads=1 ") // one head: the reshape is right
                                && !c.name().contains("(1,1,1)"),
                        null),
                of(
                        PlantedBugBackend.Breakage.MATMUL_IGNORES_ALPHA,
                        c -> c.name().contains("alpha"),
                        null),
                of(
                        PlantedBugBackend.Breakage.RAGGED_SEES_OTHER_SEQUENCES,
                        c -> c.name().contains("ragged") && !c.name().contains("[5]"),
                        null),
                // where a query sees keys in a later 32-key tile that beat the earlier tiles' max: the tile cases
                // (but for the causal 33x80 and 35x35 ones, where only rows 32-34 reach a second tile, with 1-3 keys
                // that never hold their row's max), the long ragged sequences, two others with S = 65 and 70 (the
                // causal S = 70, L = 20 case never leaves the first tile; key 32 of "large scores" S33 never wins), and
                // the window cases whose windows cross a 32-key tile edge
                of(
                        PlantedBugBackend.Breakage.ATTENTION_TILES_NOT_RESCALED,
                        c -> c.op() == Op.ATTENTION
                                && (c.name().startsWith("attention tiles")
                                        ? !c.name().contains("causal S>L")
                                                && !c.name().contains("causal+additive")
                                        : c.name().matches(".*ragged \\[(70|130), .*")
                                                // grouped-query cases with a second key tile (S > 32 and not causal
                                                // with few queries)
                                                || c.name()
                                                        .matches(
                                                                "attention gqa .*( S(35|45|66|70|130|140) |ragged \\[70).*")
                                                || c.name()
                                                        .matches(
                                                                "attention window (4/4|40/40|.*many tiles|causal 15|gqa).*")
                                                || c.name().contains(" S65 D8 ")
                                                || c.name().startsWith("attention head dim 256")
                                                // the relative bias's own cases (all with S > 32)
                                                || c.name().startsWith("attention relative bias")
                                                || c.name().contains("finite additive padding")),
                        null),
                // only the head size 128 cases (the flash kernels' largest) can see it
                of(
                        PlantedBugBackend.Breakage.ATTENTION_READS_64_DIMS,
                        c -> c.op() == Op.ATTENTION
                                && (c.name().endsWith(" D128") || c.name().endsWith(" D256")),
                        null),
                // eps inside or outside the square root is the same to ~eps / mean(x^2): only rows of x ~ 1e-3 see it
                of(
                        PlantedBugBackend.Breakage.RMS_NORM_EPS_OUTSIDE_SQRT,
                        c -> c.op() == Op.RMS_NORM && c.name().contains("eps dominates"),
                        null),
                of(PlantedBugBackend.Breakage.ROPE_INTERLEAVED, c -> c.op() == Op.ROPE, null),
                // every window case but the one wider than L (one more key on either side of 100 is still all of
                // them); under causal the off-by-one key on the right is masked all the same, the left one is not
                of(
                        PlantedBugBackend.Breakage.WINDOW_OFF_BY_ONE,
                        c -> c.name().contains("window") && !c.name().contains("wider than L"),
                        null),
                of(
                        PlantedBugBackend.Breakage.RELATIVE_BIAS_TRANSPOSED,
                        c -> c.name().contains("relative"),
                        null),
                of(
                        PlantedBugBackend.Breakage.GLU_ACTIVATES_FIRST_HALF,
                        c -> c.op() == Op.GLU && c.name().contains("activated second"),
                        null),
                // h % Hkv and h / (H / Hkv) agree for one K/V head (MQA) and for one query head per K/V head
                of(
                        PlantedBugBackend.Breakage.GQA_HEAD_MODULO,
                        c -> (c.name().startsWith("attention gqa") || c.name().startsWith("attention window gqa"))
                                        && !c.name().contains(" Hkv1 ")
                                || c.name().startsWith("attention relative bias")
                                        && c.name().contains(" Hkv2 "),
                        null));
    }

    /**
     * Cases with at least one query row whose keys are all masked: the "all-masked" ones, plus one whose random -inf
     * additive entries, with causal masking and padding, happen to leave query 0 of some head without a key.
     */
    private static boolean hasAllMaskedRow(ParityCase c) {
        return c.name().contains("all-masked")
                || c.name().equals("softmax causal+additive(1,H,L,S)+additive padding (2,3,5,7)");
    }

    private static Arguments of(PlantedBugBackend.Breakage b, Predicate<ParityCase> shouldFail, String message) {
        return Arguments.of(b, shouldFail, message);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("breakages")
    void harnessCatchesTheBug(PlantedBugBackend.Breakage bug, Predicate<ParityCase> shouldFail, String message) {
        try (PlantedBugBackend b = new PlantedBugBackend(bug)) {
            List<ParityResult> results = ParityHarness.runAll(ParityCases.all(), b);
            String report = ParityReport.format(results);
            List<ParityResult> failed = results.stream().filter(r -> !r.pass()).toList();
            assertFalse(failed.isEmpty(), "broken backend " + bug + " passed everything:\n" + report);
            Set<String> expected = Set.copyOf(results.stream()
                    .map(ParityResult::parityCase)
                    .filter(shouldFail)
                    .map(ParityCase::name)
                    .toList());
            Set<String> actual =
                    Set.copyOf(failed.stream().map(r -> r.parityCase().name()).toList());
            assertEquals(expected, actual, "cases failed by " + bug + ":\n" + report);
            if (message != null)
                for (ParityResult r : failed)
                    assertTrue(
                            java.util.regex.Pattern.compile(message)
                                    .matcher(r.message())
                                    .find(),
                            r.parityCase().name() + ": " + r.message());
        }
    }
}
