package io.attn.nn;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.AttnException;
import io.attn.tensor.Tensor;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A linear layer with a task adapter beside its weight, as several tasks' models load it over shared weights: the
 * fused weight's row ranges (q, k, v) are the same arrays in every model that holds the same fused tensor, while each
 * model's adapter keeps its own rows.
 */
class LinearTest {
    private static Tensor seq(int rows, int cols, float start) {
        float[] d = new float[rows * cols];
        for (int i = 0; i < d.length; i++) d[i] = start + i;
        return Tensor.of(d, rows, cols);
    }

    private static Map<String, Tensor> weights(Tensor fused, Tensor a, Tensor b) {
        Map<String, Tensor> w = new LinkedHashMap<>();
        w.put("qkv.weight", fused);
        w.put("qkv.lora_A", a);
        w.put("qkv.lora_B", b);
        return w;
    }

    @Test
    void twoTasksOverOneFusedWeightSplitItIntoTheSameArrays() {
        int e = 4, r = 2;
        Tensor fused = seq(3 * e, e, 0);
        Linear t1 =
                Linear.load(new StateDict(weights(fused, seq(r, e, 1), seq(3 * e, r, 100))), "qkv.", e, 3 * e, false);
        Linear t2 =
                Linear.load(new StateDict(weights(fused, seq(r, e, 2), seq(3 * e, r, 200))), "qkv.", e, 3 * e, false);
        for (int i = 0; i < 3; i++) {
            Linear a = t1.outputs("q" + i, i * e, (i + 1) * e), b = t2.outputs("q" + i, i * e, (i + 1) * e);
            assertSame(a.weight(), b.weight(), "rows " + i + " of the shared weight: one array");
            assertArrayEquals(
                    java.util.Arrays.copyOfRange(fused.data(), i * e * e, (i + 1) * e * e),
                    a.weight().data());
            assertNotSame(a.lora().b(), b.lora().b(), "each task's adapter rows are its own");
            assertEquals(200f + i * e * r, b.lora().b().data()[0]);
            assertSame(t1.lora().a(), a.lora().a(), "the three outputs share A (x A^T is made once)");
        }
    }

    @Test
    void anAdapterWithoutItsPairOrOfAnotherWidthIsNamed() {
        int e = 4;
        Map<String, Tensor> w = weights(seq(e, e, 0), seq(2, e, 0), seq(e, 2, 0));
        w.remove("qkv.lora_B");
        AttnException x = assertThrows(
                AttnException.class, () -> Linear.load(new StateDict(w, "m.safetensors"), "qkv.", e, e, false));
        assertTrue(x.getMessage().contains("qkv.lora_A has no qkv.lora_B beside it"), x.getMessage());
        Map<String, Tensor> v = weights(seq(e, e, 0), seq(2, e + 1, 0), seq(e, 2, 0));
        x = assertThrows(
                AttnException.class, () -> Linear.load(new StateDict(v, "m.safetensors"), "qkv.", e, e, false));
        assertTrue(x.getMessage().contains("'qkv.lora_A' is F32(2, 5), expected float (r, 4)"), x.getMessage());
    }
}
