package io.attn.io;

import static io.attn.io.TestSupport.fixture;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.tensor.Tensor;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Reads every fixture written by tools/make_fixtures.py and compares with the manifest, whose values numpy computed
 * (the float32 each element must become, written as float64). Comparison is exact (bit-for-bit, -0.0 and NaN
 * included): every conversion here (f8, i8, f16, bf16 to f32) has a single correctly rounded result.
 */
class FixturesTest {
    @SuppressWarnings("unchecked")
    private static Map<String, Object> manifest() throws IOException {
        String text = Files.readString(fixture("manifest.json"), StandardCharsets.UTF_8);
        return (Map<String, Object>) Json.parse(text, "manifest.json");
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> list(Map<String, Object> m, String key) {
        return (List<Map<String, Object>>) m.get(key);
    }

    @SuppressWarnings("unchecked")
    static void check(String what, Map<String, Object> exp, Tensor t) {
        List<Object> shape = (List<Object>) exp.get("shape");
        int[] dims = new int[shape.size()];
        for (int i = 0; i < dims.length; i++) dims[i] = ((Long) shape.get(i)).intValue();
        assertArrayEquals(dims, t.shape().dims(), what + " shape");
        List<Object> values = (List<Object>) exp.get("values");
        assertEquals(values.size(), t.size(), what + " size");
        for (int i = 0; i < values.size(); i++) {
            float want = expected(values.get(i));
            float got = t.data()[i];
            assertEquals(
                    Float.floatToIntBits(want),
                    Float.floatToIntBits(got),
                    what + " element " + i + ": want " + want + " got " + got);
        }
    }

    static float expected(Object v) {
        if (v instanceof String s)
            return switch (s) {
                case "nan" -> Float.NaN;
                case "inf" -> Float.POSITIVE_INFINITY;
                case "-inf" -> Float.NEGATIVE_INFINITY;
                default -> throw new AssertionError(s);
            };
        return (float) ((Number) v).doubleValue();
    }

    @Test
    void npyFixtures() throws IOException {
        List<Map<String, Object>> all = list(manifest(), "npy");
        assertTrue(all.size() >= 18);
        for (Map<String, Object> e : all) {
            String file = (String) e.get("file");
            check(file, e, Npy.read(fixture(file)));
            check(file + " (bytes)", e, Npy.read(Files.readAllBytes(fixture(file)), file));
        }
    }

    @Test
    @SuppressWarnings("unchecked")
    void npzFixtures() throws IOException {
        List<Map<String, Object>> all = list(manifest(), "npz");
        assertEquals(2, all.size());
        for (Map<String, Object> e : all) {
            String file = (String) e.get("file");
            Map<String, Object> arrays = (Map<String, Object>) e.get("arrays");
            Map<String, Tensor> got = Npz.read(fixture(file));
            assertEquals(new ArrayList<>(arrays.keySet()), new ArrayList<>(got.keySet()), file + " keys");
            for (var a : arrays.entrySet())
                check(file + ":" + a.getKey(), (Map<String, Object>) a.getValue(), got.get(a.getKey()));
        }
    }

    @Test
    @SuppressWarnings("unchecked")
    void safetensorsFixture() throws IOException {
        Map<String, Object> e = list(manifest(), "safetensors").get(0);
        String file = (String) e.get("file");
        SafeTensors.File st = SafeTensors.read(fixture(file));
        assertEquals(e.get("order"), new ArrayList<>(st.tensors().keySet()), "header order kept");
        Map<String, Object> tensors = (Map<String, Object>) e.get("tensors");
        for (var t : tensors.entrySet())
            check(
                    file + ":" + t.getKey(),
                    (Map<String, Object>) t.getValue(),
                    st.tensors().get(t.getKey()));
        assertEquals(e.get("metadata"), st.metadata());
        // the config string is itself JSON: parse it and compare with what Python serialised
        assertEquals(e.get("config"), Json.parse(st.metadata().get("config")));
    }

    @Test
    @SuppressWarnings("unchecked")
    void wordVectorFixtures() throws IOException {
        for (Map<String, Object> e : list(manifest(), "wordvectors")) {
            String file = (String) e.get("file");
            WordVectors wv = WordVectors.load(fixture(file));
            assertEquals(((Long) e.get("dim")).intValue(), wv.dim(), file);
            assertEquals(((Long) e.get("size")).intValue(), wv.size(), file);
            assertEquals(((Long) e.get("duplicates")).intValue(), wv.duplicates(), file);
            for (var w : ((Map<String, Object>) e.get("vectors")).entrySet()) {
                List<Object> want = (List<Object>) w.getValue();
                float[] got = wv.get(w.getKey());
                assertEquals(want.size(), got.length, file + ":" + w.getKey());
                for (int i = 0; i < got.length; i++)
                    assertEquals(expected(want.get(i)), got[i], 0f, file + ":" + w.getKey() + "[" + i + "]");
            }
        }
    }
}
