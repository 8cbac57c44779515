package io.attn.text;

import io.attn.AttnException;
import io.attn.io.JsonFields;
import io.attn.io.SafeTensors;
import io.attn.tensor.DType;
import io.attn.tensor.Tensor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Map;

/**
 * A sentence-transformers {@code Dense} module after the pooling: {@code y = act(W x + b)}, plus {@code x} (or {@code
 * R x} when the widths differ) with {@code use_residual}. LaBSE projects its CLS vector through one (768 to 768, tanh),
 * stella-style models to fewer dimensions (1024 to 256, no activation). Computed on the host per sentence vector (a few
 * hundred thousand multiply-adds, against the encoder's hundreds of millions), accumulated in double, so the result is
 * the float32 rounding of the exact value.
 *
 * <p>Read from the module's folder as sentence-transformers 5 and 6 write it: {@code config.json} ({@code in_features},
 * {@code out_features}, {@code bias}, {@code activation_function}, and optionally {@code use_residual}, {@code
 * module_input_name} / {@code module_output_name}, which must be the sentence embedding) and {@code model.safetensors}
 * ({@code linear.weight} (out, in), {@code linear.bias}, {@code residual.weight}; F32, F16 or BF16). Immutable.
 */
public final class Dense {
    /** The activations attn applies, by the class name sentence-transformers writes. */
    public enum Activation {
        IDENTITY("torch.nn.modules.linear.Identity"),
        TANH("torch.nn.modules.activation.Tanh"),
        RELU("torch.nn.modules.activation.ReLU"),
        SIGMOID("torch.nn.modules.activation.Sigmoid");

        private final String className;

        Activation(String className) {
            this.className = className;
        }

        /** sentence-transformers' name for it ({@code torch.nn.modules.activation.Tanh}, ...). */
        public String className() {
            return className;
        }

        double apply(double x) {
            return switch (this) {
                case IDENTITY -> x;
                case TANH -> Math.tanh(x);
                case RELU -> x > 0 ? x : 0;
                case SIGMOID -> 1 / (1 + Math.exp(-x));
            };
        }

        static Activation of(String name, String where) {
            for (Activation a : values()) if (a.className.equals(name)) return a;
            StringBuilder known = new StringBuilder();
            for (Activation a : values())
                known.append(known.isEmpty() ? "" : ", ").append(a.className);
            throw AttnException.badInput(
                    where + ": activation_function \"" + name + "\" is not one attn applies (" + known + ")");
        }
    }

    private final String path;
    private final int in, out;
    private final float[] weight, bias, residual; // bias null without one; residual null unless projected
    private final boolean useResidual;
    private final Activation activation;

    private Dense(
            String path,
            int in,
            int out,
            float[] weight,
            float[] bias,
            Activation activation,
            boolean useResidual,
            float[] residual) {
        this.path = path;
        this.in = in;
        this.out = out;
        this.weight = weight;
        this.bias = bias;
        this.activation = activation;
        this.useResidual = useResidual;
        this.residual = residual;
    }

    /**
     * Reads the module in {@code dir} (its {@code config.json} and {@code model.safetensors}).
     *
     * @throws AttnException BAD_INPUT naming the file and the key or tensor that is wrong
     */
    public static Dense read(Path dir) {
        Path configFile = dir.resolve("config.json");
        if (!Files.isRegularFile(configFile))
            throw AttnException.badInput(dir + ": a Dense module without config.json");
        JsonFields c = JsonFields.read(configFile);
        int in = c.integer("in_features", 0), out = c.integer("out_features", 0);
        if (in < 1 || out < 1)
            throw AttnException.badInput(
                    configFile + ": in_features and out_features must be positive, got " + in + " and " + out);
        boolean hasBias = c.bool("bias", true), useResidual = c.bool("use_residual", false);
        // sentence-transformers' default activation is Tanh when the config names none
        Activation act =
                Activation.of(c.string("activation_function", Activation.TANH.className()), configFile.toString());
        for (String key : new String[] {"module_input_name", "module_output_name"}) {
            String name = c.string(key, "sentence_embedding");
            if (!name.equals("sentence_embedding"))
                throw AttnException.badInput(configFile + ": " + key + " \"" + name + "\": attn runs Dense modules on"
                        + " the sentence embedding only (not on token embeddings)");
        }
        Path weights = dir.resolve("model.safetensors");
        if (!Files.isRegularFile(weights)) {
            if (Files.exists(dir.resolve("pytorch_model.bin")))
                throw AttnException.badInput(
                        dir + ": holds only pytorch_model.bin (a Python pickle, which attn does"
                                + " not read): save the model with safe_serialization=True, or convert it to model.safetensors");
            throw AttnException.badInput(dir + ": a Dense module without model.safetensors");
        }
        Map<String, Tensor> t = SafeTensors.read(weights).tensors();
        String where = weights.toString();
        float[] w = matrix(t, "linear.weight", out, in, where);
        float[] b = hasBias ? matrix(t, "linear.bias", out, 0, where) : null;
        if (!hasBias && t.containsKey("linear.bias"))
            throw AttnException.badInput(where + ": holds linear.bias but config.json says \"bias\": false");
        float[] r = useResidual && in != out ? matrix(t, "residual.weight", out, in, where) : null;
        return new Dense(dir.toString(), in, out, w, b, act, useResidual, r);
    }

    /** A tensor of {@code rows} x {@code cols} floats ({@code cols} 0: a vector of {@code rows}), named on mismatch. */
    private static float[] matrix(Map<String, Tensor> t, String name, int rows, int cols, String where) {
        Tensor x = t.get(name);
        if (x == null)
            throw AttnException.badInput(where + ": no tensor \"" + name + "\" (tensors: " + t.keySet() + ")");
        boolean shaped =
                cols == 0 ? x.rank() == 1 && x.dim(0) == rows : x.rank() == 2 && x.dim(0) == rows && x.dim(1) == cols;
        if (!shaped || x.dtype() != DType.F32)
            throw AttnException.badInput(where + ": tensor \"" + name + "\" is " + x.shape() + " " + x.dtype()
                    + ", expected (" + rows + (cols == 0 ? "" : ", " + cols)
                    + ") of floats (config.json's in_features and out_features)");
        if (!x.allFinite())
            throw AttnException.badInput(where + ": tensor \"" + name + "\" holds a value that is not finite");
        return x.data();
    }

    /** The width it takes. */
    public int in() {
        return in;
    }

    /** The width it gives. */
    public int out() {
        return out;
    }

    public Activation activation() {
        return activation;
    }

    public boolean bias() {
        return bias != null;
    }

    public boolean useResidual() {
        return useResidual;
    }

    /** The module's folder. */
    public String path() {
        return path;
    }

    /** {@code y = act(W x + b)} (+ x or R x), each output summed in double and rounded once. */
    public float[] apply(float[] x) {
        if (x.length != in)
            throw new IllegalArgumentException("Dense " + path + " takes " + in + " values, got " + x.length);
        float[] y = new float[out];
        for (int o = 0; o < out; o++) {
            double s = bias == null ? 0 : bias[o];
            int row = o * in;
            for (int k = 0; k < in; k++) s += (double) weight[row + k] * x[k];
            double v = activation.apply(s);
            if (useResidual) {
                if (residual == null) v += x[o];
                else {
                    double r = 0;
                    for (int k = 0; k < in; k++) r += (double) residual[row + k] * x[k];
                    v += r;
                }
            }
            y[o] = (float) v;
        }
        return y;
    }

    /** One line: {@code 384 -> 256, bias, tanh, residual}. */
    public String describe() {
        return in + " -> " + out + (bias != null ? ", bias" : "") + ", "
                + activation.name().toLowerCase(Locale.ROOT) + (useResidual ? ", residual" : "");
    }
}
