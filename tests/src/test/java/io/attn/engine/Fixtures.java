package io.attn.engine;

import io.attn.reference.layers.LayerConfig;
import io.attn.reference.layers.RandomStateDicts;
import io.attn.tensor.Tensor;
import java.util.Map;

/** Small seeded models and inputs shared by the engine API tests. */
final class Fixtures {
    private Fixtures() {}

    static final int E = 16, H = 4, F = 32;
    static final LayerConfig LAYER = LayerConfig.of(E, H, F);
    static final String ENCODER_LAYER_JSON =
            "{\"module\":\"TransformerEncoderLayer\",\"d_model\":16,\"nhead\":4,\"dim_feedforward\":32}";
    static final String MHA_JSON = "{\"module\":\"MultiheadAttention\",\"embed_dim\":16,\"num_heads\":4}";

    static Map<String, Tensor> encoderLayerWeights() {
        return RandomStateDicts.encoderLayer(LAYER, 11);
    }

    static Map<String, Tensor> mhaWeights() {
        return RandomStateDicts.multiheadAttention(E, true, 12);
    }

    static Tensor input(long seed, int... dims) {
        return RandomStateDicts.uniform(seed, -1, 1, dims);
    }

    static Engine cpu() {
        return Engine.open(EngineOptions.defaults().withDevice("cpu"));
    }

    /** Bitwise equality of two float arrays (NaN payloads and signed zeros included). */
    static boolean bitwiseEqual(float[] a, float[] b) {
        if (a.length != b.length) return false;
        for (int i = 0; i < a.length; i++)
            if (Float.floatToRawIntBits(a[i]) != Float.floatToRawIntBits(b[i])) return false;
        return true;
    }

    /** max |got - want| over max(1, max |want|): the error relative to the values' scale. */
    static double scaledError(float[] got, double[] want) {
        if (got.length != want.length) throw new AssertionError("sizes " + got.length + " vs " + want.length);
        double err = 0, scale = 1;
        for (int i = 0; i < got.length; i++) {
            err = Math.max(err, Math.abs(got[i] - want[i]));
            scale = Math.max(scale, Math.abs(want[i]));
        }
        return err / scale;
    }
}
