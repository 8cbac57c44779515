package io.attn.nn;

import io.attn.AttnException;
import io.attn.tensor.Finite;
import io.attn.tensor.Shape;
import io.attn.tensor.Tensor;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;

/**
 * Weights under PyTorch {@code state_dict()} names. Layers take what they need with {@link #take}, which checks the
 * shape and the values (NaN or Inf: {@link AttnException.Code#NON_FINITE}) and names the tensor when it is missing,
 * wrongly shaped or not finite; {@link #checkAllUsed} then reports tensors no layer took (a model/config mismatch).
 * The tensors are not copied: a layer keeps the arrays it takes.
 *
 * <p>Not thread-safe; used while a model is built.
 */
public final class StateDict {
    private final Map<String, Tensor> tensors;
    private final Set<String> used = new LinkedHashSet<>();
    private final String source;

    /** @param source where the weights came from (a file name), used in error messages */
    public StateDict(Map<String, Tensor> tensors, String source) {
        this.tensors = new LinkedHashMap<>(tensors);
        this.source = source;
    }

    public StateDict(Map<String, Tensor> tensors) {
        this(tensors, "state_dict");
    }

    public boolean has(String name) {
        return tensors.containsKey(name);
    }

    /** Whether any tensor is int8 (a quantized model's weights). */
    public boolean hasInt8() {
        return tensors.values().stream().anyMatch(t -> t.dtype() == io.attn.tensor.DType.I8);
    }

    /** The tensor {@code name}, which must have exactly {@code dims}. */
    public Tensor take(String name, int... dims) {
        Tensor t = tensors.get(name);
        Shape want = Shape.of(dims);
        if (t == null)
            throw AttnException.shape(source + ": missing tensor '" + name + "' (expected shape " + want + ")");
        if (!t.shape().equals(want))
            throw AttnException.shape(source + ": tensor '" + name + "' has shape " + t.shape() + ", expected " + want);
        if (t.dtype() != io.attn.tensor.DType.F32)
            throw AttnException.shape(source + ": tensor '" + name + "' is " + t.dtype() + ", expected float");
        int bad = Finite.indexOfNonFinite(t.data());
        if (bad >= 0)
            throw new AttnException(
                    AttnException.Code.NON_FINITE,
                    source + ": tensor '" + name + "' holds " + t.data()[bad] + " at " + t.indexString(bad)
                            + ": weights must be finite");
        used.add(name);
        return t;
    }

    /** An int8 tensor ({@link io.attn.tensor.DType#I8}: quantized weights) that must have exactly {@code dims}. */
    public Tensor takeInt8(String name, int... dims) {
        Tensor t = tensors.get(name);
        Shape want = Shape.of(dims);
        if (t == null)
            throw AttnException.shape(source + ": missing int8 tensor '" + name + "' (expected shape " + want + ")");
        if (t.dtype() != io.attn.tensor.DType.I8)
            throw AttnException.shape(
                    source + ": tensor '" + name + "' is " + t.dtype() + ", expected int8 (quantized)");
        if (!t.shape().equals(want))
            throw AttnException.shape(source + ": tensor '" + name + "' has shape " + t.shape() + ", expected " + want);
        used.add(name);
        return t;
    }

    /** The tensor {@code name} whatever its shape and dtype (float values checked finite); the caller checks them. */
    public Tensor takeAny(String name) {
        Tensor t = tensors.get(name);
        if (t == null) throw AttnException.shape(source + ": missing tensor '" + name + "'");
        if (t.dtype() == io.attn.tensor.DType.F32) return take(name, t.shape().dims());
        used.add(name);
        return t;
    }

    /** Like {@link #take}, or null when {@code present} is false (then the tensor must be absent too). */
    public Tensor takeIf(boolean present, String name, int... dims) {
        if (present) return take(name, dims);
        if (tensors.containsKey(name))
            throw AttnException.shape(source + ": unexpected tensor '" + name + "' (the config says bias=false)");
        return null;
    }

    /** Fails naming the tensors that no layer used. */
    public void checkAllUsed() {
        Set<String> extra = new LinkedHashSet<>(tensors.keySet());
        extra.removeAll(used);
        if (!extra.isEmpty())
            throw AttnException.shape(
                    source + ": unexpected tensor(s) not used by the model: " + String.join(", ", extra));
    }

    public String source() {
        return source;
    }
}
