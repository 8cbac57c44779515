package io.attn.parity;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.engine.Precision;
import io.attn.graph.GraphBuilder;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The comparison rules of {@link ParityHarness#compare} and the bounds {@link ParityTarget#opCases} sets, on hand-made values. */
class HarnessTest {
    private static final float NAN = Float.NaN, INF = Float.POSITIVE_INFINITY;

    private static ParityCase addCase(int n, double bound) {
        GraphBuilder g = new GraphBuilder();
        var out = g.add(g.input("a", n), g.input("b", n));
        return new ParityCase("add", out.op(), g.build(out), Map.of(), 0, bound, "test");
    }

    private static ParityResult cmp(float[] got, double[] ref) {
        return ParityHarness.compare(addCase(ref.length, 1e-5), "s", "b", got, ref);
    }

    @Test
    void relativeErrorIsTheL2Ratio() {
        ParityResult r = cmp(new float[] {3f, 4f + 0x1p-10f}, new double[] {3, 4}); // 2^-10 is exact in float
        assertEquals(0x1p-10 / 5, r.relErr(), 1e-15);
        assertEquals(0x1p-10, r.maxAbsErr(), 1e-15);
        assertFalse(r.pass());
        assertTrue(cmp(new float[] {3f, 4.00001f}, new double[] {3, 4}).pass());
    }

    @Test
    void nonFiniteValuesMustMatchInKind() {
        assertTrue(cmp(new float[] {NAN, INF, -INF, 1}, new double[] {Double.NaN, 1 / 0.0, -1 / 0.0, 1})
                .pass());
        assertFalse(cmp(new float[] {NAN, 1}, new double[] {1, 1}).pass(), "NaN where the reference is finite");
        assertFalse(cmp(new float[] {INF, 1}, new double[] {1, 1}).pass(), "Inf where the reference is finite");
        assertFalse(cmp(new float[] {1, 1}, new double[] {Double.NaN, 1}).pass(), "finite where reference is NaN");
        assertFalse(cmp(new float[] {-INF, 1}, new double[] {1 / 0.0, 1}).pass(), "-inf for +inf");
        assertFalse(cmp(new float[] {NAN, 1}, new double[] {1 / 0.0, 1}).pass(), "NaN for +inf");
    }

    @Test
    void allZeroReferenceUsesAbsoluteError() {
        assertTrue(cmp(new float[] {0, -0f}, new double[] {0, 0}).pass());
        ParityResult r = cmp(new float[] {0, 1e-3f}, new double[] {0, 0});
        assertFalse(r.pass());
        assertEquals(1e-3, r.relErr(), 1e-9);
    }

    @Test
    void exactBoundNeedsBitEqualValues() {
        ParityCase exact = addCase(2, 0.0);
        assertTrue(ParityHarness.compare(exact, "s", "b", new float[] {1.5f, 2f}, new double[] {1.5, 2})
                .pass());
        assertFalse(ParityHarness.compare(exact, "s", "b", new float[] {1.5f, Math.nextUp(2f)}, new double[] {1.5, 2})
                .pass());
    }

    @Test
    void reducedPrecisionTakesTheCasesOwnBoundElseThePrecisions() {
        ParityCase plain = addCase(2, 1e-5);
        ParityCase own = new ParityCase(
                "own", plain.op(), plain.graph(), Map.of(), 0, 1e-5, "test", Map.of(Precision.BF16, 2e-2));
        ParityTarget bf16 = new ParityTarget("t", Precision.BF16, false, () -> null);
        List<ParityCase> judged = bf16.opCases(List.of(plain, own));
        assertEquals(5e-2, judged.get(0).bound());
        assertEquals(2e-2, judged.get(1).bound());
        assertTrue(
                judged.get(1).boundReason().contains("this case's bound"),
                judged.get(1).boundReason());
        ParityTarget tf32 = new ParityTarget("t", Precision.TF32, false, () -> null);
        assertEquals(1e-2, tf32.opCases(List.of(own)).get(0).bound(), "no tf32 bound of its own");
        ParityTarget fp32 = new ParityTarget("t", Precision.FP32, false, () -> null);
        assertEquals(1e-5, fp32.opCases(List.of(own)).get(0).bound());
        org.junit.jupiter.api.Assertions.assertThrows(
                IllegalArgumentException.class,
                () -> new ParityCase(
                        "tighter", plain.op(), plain.graph(), Map.of(), 0, 1e-5, "t", Map.of(Precision.BF16, 1e-6)));
    }

    @Test
    void reportHasATableRowPerResultAndFailureDetails() {
        ParityResult ok = cmp(new float[] {1}, new double[] {1});
        ParityResult bad = cmp(new float[] {NAN}, new double[] {1});
        String s = ParityReport.format(List.of(ok, bad));
        assertTrue(s.startsWith("case"), s);
        assertTrue(s.contains("PASS") && s.contains("FAIL add on b: non-finite"), s);
        assertTrue(s.contains("1 of 2 passed, 1 FAILED"), s);
    }
}
