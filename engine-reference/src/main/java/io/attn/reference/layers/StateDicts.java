package io.attn.reference.layers;

import io.attn.tensor.Tensor;
import java.util.Arrays;
import java.util.Map;

/** State-dict lookups with shape checks, so a wrong name or shape fails loudly instead of computing nonsense. */
final class StateDicts {
    private StateDicts() {}

    /** The tensor {@code name}, which must exist and have exactly {@code dims}. */
    static Tensor require(Map<String, Tensor> sd, String name, int... dims) {
        Tensor t = sd.get(name);
        if (t == null) throw new IllegalArgumentException("state dict has no '" + name + "'");
        check(t, name, dims);
        return t;
    }

    /** The tensor {@code name} if present (checked against {@code dims}), else null. */
    static Tensor optional(Map<String, Tensor> sd, String name, int... dims) {
        Tensor t = sd.get(name);
        if (t != null) check(t, name, dims);
        return t;
    }

    /** A bias: required when {@code bias} is true, and must be absent when false (PyTorch registers none). */
    static Tensor bias(Map<String, Tensor> sd, String name, boolean bias, int... dims) {
        if (bias) return require(sd, name, dims);
        if (sd.containsKey(name))
            throw new IllegalArgumentException("state dict has '" + name + "' but the config says bias=False");
        return null;
    }

    private static void check(Tensor t, String name, int[] dims) {
        if (!Arrays.equals(t.shape().dims(), dims))
            throw new IllegalArgumentException(
                    "state dict entry '" + name + "' has shape " + t.shape() + ", expected " + Arrays.toString(dims));
    }
}
