package io.attn.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.AttnException;
import io.attn.backend.Backend;
import io.attn.engine.Precision;
import io.attn.exec.Executor;
import io.attn.graph.Graph;
import io.attn.graph.GraphBuilder;
import io.attn.graph.Node;
import io.attn.io.Bf16;
import io.attn.io.Half;
import io.attn.kernels.Kernel;
import io.attn.tensor.Tensor;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * GEMM weights kept in 16 bits on the CUDA backend at precision bf16 / fp16 ({@link HalfWeights}), without a GPU: the
 * backend's real op logic, the {@code f32_to_bf16 / f32_to_f16} converters compiled for the host ({@link
 * KernelEmulator}) and {@link HostHalfBlas} standing in for cuBLAS's 16-bit GEMM.
 *
 * <p>Judge: the double-precision product of the inputs rounded to 16 bits on the host (round to nearest even, {@link
 * Bf16} / {@link Half}, as torch's {@code .to(torch.bfloat16)}), plus the bias and activation in double. Bound per
 * output: {@code (k + 2) 2^-24 (sum_p |a_p b_p| + |bias|)}, the worst case of summing k exact products and a bias in
 * fp32. The same judge refuses the fp32 path's product (weights and activations not rounded) and the product of
 * truncated weights: both are caught (planted faults), so the bound is tight enough to see unrounded inputs.
 */
@Tag("long")
class HalfGemmEmulatedTest {
    static final int B = 2, L = 5, K = 48, N = 40, N2 = 24;

    @BeforeEach
    void needsEmulator() {
        String why = EmulatedCuda.unavailable();
        Assumptions.assumeTrue(why == null, why);
    }

    record Case(Graph graph, Tensor x, Tensor w, Tensor bias, Tensor w2) {}

    /** y1 = relu(x W^T + bias) (a Linear with its epilogue), y2 = x W2 (no transpose, B (K, N2)); x (B, L, K). */
    static Case graph(long seed, float plant) {
        Random r = new Random(seed);
        Tensor x = Tensor.of(gauss(r, B * L * K, 1), B, L, K);
        Tensor w = Tensor.of(gauss(r, N * K, 1), N, K);
        Tensor bias = Tensor.of(gauss(r, N, 0.5), N);
        Tensor w2 = Tensor.of(gauss(r, K * N2, 1), K, N2);
        if (plant != 0) w.data()[7] = plant;
        GraphBuilder g = new GraphBuilder();
        Node xi = g.input("x", B, L, K);
        Node y1 = g.relu(g.linear(xi, g.constant("layer.dense.weight", w), g.constant("layer.dense.bias", bias)));
        Node y2 = g.matmul(xi, g.constant("layer.proj.weight", w2));
        return new Case(g.build(y1, y2), x, w, bias, w2);
    }

    static float[] gauss(Random r, int n, double s) {
        float[] a = new float[n];
        for (int i = 0; i < n; i++) a[i] = (float) (s * r.nextGaussian());
        return a;
    }

    static float round(float v, Precision p) {
        return p == Precision.FP16 ? Half.toFloat(Half.fromFloat(v)) : Bf16.toFloat(Bf16.fromFloat(v));
    }

    /** Truncation toward zero (the planted fault): bf16 drops the low 16 bits; fp16 steps down one ulp when RNE rounded up. */
    static float truncate(float v, Precision p) {
        if (p == Precision.BF16) return Float.intBitsToFloat(Float.floatToRawIntBits(v) & 0xffff0000);
        float rn = round(v, p);
        return Math.abs(rn) > Math.abs(v) ? Half.toFloat((short) (Half.fromFloat(v) - 1)) : rn;
    }

    interface Rounding {
        float of(float v);
    }

    /** The largest error of {@code got} over its bound (above 1: outside), x and the weights rounded by {@code ra / rw}. */
    static double worst(Case c, List<Tensor> got, Rounding ra, Rounding rw) {
        double worst = 0;
        float[] x = c.x().data(), w = c.w().data(), b = c.bias().data(), w2 = c.w2().data();
        float[] y1 = got.get(0).data(), y2 = got.get(1).data();
        double u = Math.ulp(1.0f) / 2; // 2^-24
        for (int i = 0; i < B * L; i++) {
            for (int j = 0; j < N; j++) {
                double s = 0, abs = 0;
                for (int p = 0; p < K; p++) {
                    double t = (double) ra.of(x[i * K + p]) * rw.of(w[j * K + p]);
                    s += t;
                    abs += Math.abs(t);
                }
                double want = Math.max(0, s + b[j]), bound = (K + 2) * u * (abs + Math.abs(b[j]));
                worst = Math.max(worst, Math.abs(y1[i * N + j] - want) / bound);
            }
            for (int j = 0; j < N2; j++) {
                double s = 0, abs = 0;
                for (int p = 0; p < K; p++) {
                    double t = (double) ra.of(x[i * K + p]) * rw.of(w2[p * N2 + j]);
                    s += t;
                    abs += Math.abs(t);
                }
                worst = Math.max(worst, Math.abs(y2[i * N2 + j] - s) / ((K + 2) * u * abs));
            }
        }
        return worst;
    }

    @ParameterizedTest
    @EnumSource(
            value = Precision.class,
            names = {"BF16", "FP16"})
    void gemmWeightsAreHeldInSixteenBitsAndMatchTheRoundedJudge(Precision p) {
        Case c = graph(11, 0);
        EmuSink sink = new EmuSink(KernelEmulator.get());
        HostHalfBlas blas = new HostHalfBlas(sink);
        try (Backend be = new CudaBackend(sink, blas, Map.of(), p, 80);
                Executor ex = new Executor(be, c.graph())) {
            List<Tensor> got = ex.run(Map.of("x", c.x()));
            // the path judged here ran: both products on 16-bit inputs, the activations converted on the "device"
            assertEquals(2, blas.gemm16Calls, "16-bit GEMMs");
            assertTrue(sink.launched.contains(p == Precision.FP16 ? Kernel.F32_TO_F16 : Kernel.F32_TO_BF16));
            double w = worst(c, got, v -> round(v, p), v -> round(v, p));
            System.out.printf("%s: 16-bit GEMMs, worst error %.3f of the bound%n", p, w);
            assertTrue(w <= 1, p + ": error " + w + " x the bound");
            // the GEMM weights in 2 bytes each and nothing else of them; the bias (read by the epilogue) in fp32
            assertEquals(2L * (N * K + K * N2), EmulatedCuda.halfWeightBytes(be), "16-bit weight bytes");
            assertEquals(2L * (N * K + K * N2) + 4L * N, be.constantBytes(), "weight bytes on the device");
            assertTrue(be.description().contains("GEMM weights in " + p.name().toLowerCase()), be.description());

            // planted faults, the same judge: truncated weights, and the fp32 product (nothing rounded)
            double trunc = worst(c, got, v -> round(v, p), v -> truncate(v, p));
            assertTrue(trunc > 1, p + ": the judge with truncated weights passes (" + trunc + ")");
            try (Backend f32 = EmulatedCuda.openWithHalfGemm(Map.of(), Precision.FP32);
                    Executor e32 = new Executor(f32, c.graph())) {
                List<Tensor> unrounded = e32.run(Map.of("x", c.x()));
                double plain = worst(c, unrounded, v -> round(v, p), v -> round(v, p));
                System.out.printf(
                        "%s: planted faults: truncated weights %.1f, fp32 product %.1f x the bound%n", p, trunc, plain);
                assertTrue(plain > 1, p + ": the fp32 product passes the 16-bit judge (" + plain + ")");
                assertEquals(0, EmulatedCuda.halfWeightBytes(f32), "fp32 keeps fp32 weights");
                assertEquals(4L * (N * K + K * N2 + N), f32.constantBytes(), "fp32 weight bytes");
            }
        }
    }

    @ParameterizedTest
    @EnumSource(
            value = Precision.class,
            names = {"BF16", "FP16"})
    void aTableAlsoGatheredStaysFp32(Precision p) {
        // a tied table: EMBEDDING gathers rows of it and a MATMUL multiplies by it (an LM head): one fp32 buffer
        Random r = new Random(5);
        Tensor table = Tensor.of(gauss(r, 30 * 16, 1), 30, 16);
        GraphBuilder g = new GraphBuilder();
        Node ids = g.input("ids", 1, 4);
        Node t = g.constant("embeddings.weight", table);
        Node logits = g.matmul(g.embedding(ids, t), t, false, true, 1f);
        try (Backend be = EmulatedCuda.openWithHalfGemm(Map.of(), p);
                Executor ex = new Executor(be, g.build(logits))) {
            float[] got = ex.run(Map.of("ids", Tensor.of(new float[] {3, 0, 29, 7}, 1, 4)))
                    .getFirst()
                    .data();
            assertEquals(0, EmulatedCuda.halfWeightBytes(be));
            assertEquals(4L * 30 * 16, be.constantBytes());
            double worst = 0;
            int[] id = {3, 0, 29, 7};
            for (int i = 0; i < 4; i++)
                for (int j = 0; j < 30; j++) {
                    double s = 0;
                    for (int q = 0; q < 16; q++) s += (double) table.data()[id[i] * 16 + q] * table.data()[j * 16 + q];
                    worst = Math.max(worst, Math.abs(got[i * 30 + j] - s));
                }
            assertTrue(worst < 1e-4, "fp32 product of the tied table: " + worst);
        }
    }

    @ParameterizedTest
    @EnumSource(
            value = Precision.class,
            names = {"FP32", "TF32"})
    void fp32AndTf32KeepFp32Weights(Precision p) {
        Case c = graph(3, 0);
        try (Backend be = EmulatedCuda.openWithHalfGemm(Map.of(), p);
                Executor ex = new Executor(be, c.graph())) {
            ex.run(Map.of("x", c.x()));
            assertEquals(0, EmulatedCuda.halfWeightBytes(be));
            assertEquals(4L * (N * K + K * N2 + N), be.constantBytes());
        }
    }

    @org.junit.jupiter.api.Test
    void aWeightBeyondFloat16IsNamed() {
        Case c = graph(3, 1e5f);
        try (Backend be = EmulatedCuda.openWithHalfGemm(Map.of(), Precision.FP16)) {
            AttnException e = assertThrows(AttnException.class, () -> new Executor(be, c.graph()));
            assertEquals(AttnException.Code.BAD_INPUT, e.code());
            assertTrue(
                    e.getMessage().contains("'layer.dense.weight'")
                            && e.getMessage().contains("65504"),
                    e.getMessage());
            assertFalse(e.getMessage().contains("\n"), e.getMessage());
        }
        try (Backend be = EmulatedCuda.openWithHalfGemm(Map.of(), Precision.BF16);
                Executor ex = new Executor(be, c.graph())) { // bfloat16 holds 1e5
            ex.run(Map.of("x", c.x()));
        }
    }
}
