package io.attn.io;

import static io.attn.io.TestSupport.badInput;
import static io.attn.io.TestSupport.f32le;
import static io.attn.io.TestSupport.safetensors;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.attn.tensor.Tensor;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SafeTensorsTest {
    @TempDir
    Path dir;

    private static Map<String, Tensor> sample() {
        Map<String, Tensor> m = new LinkedHashMap<>();
        m.put("z.weight", Tensor.of(new float[] {1, 2, 3, 4, 5, 6}, 3, 2));
        m.put("a.bias", Tensor.of(new float[] {-1.5f, Float.MIN_VALUE}, 2));
        m.put("scalar", Tensor.of(new float[] {42}));
        m.put("empty", Tensor.zeros(0, 5));
        return m;
    }

    @Test
    void roundTripKeepsOrderAndMetadata() {
        Map<String, String> meta = new LinkedHashMap<>();
        meta.put("config", "{\"d_model\": 8, \"name\": \"caf\u00e9\"}");
        meta.put("quote\"key", "line\nbreak");
        Path p = dir.resolve("m.safetensors");
        SafeTensors.write(p, sample(), meta);
        SafeTensors.File f = SafeTensors.read(p);
        assertEquals(
                new ArrayList<>(sample().keySet()), new ArrayList<>(f.tensors().keySet()));
        for (var e : sample().entrySet()) {
            assertArrayEquals(
                    e.getValue().shape().dims(),
                    f.tensors().get(e.getKey()).shape().dims());
            assertArrayEquals(e.getValue().data(), f.tensors().get(e.getKey()).data(), 0f);
        }
        assertEquals(meta, f.metadata());
    }

    @Test
    void writerFollowsTheSpec() {
        byte[] b = SafeTensors.toBytes(sample(), Map.of());
        long n = ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN).getLong();
        assertEquals(0, n % 8, "header padded to 8 bytes");
        String header = new String(b, 8, (int) n, StandardCharsets.UTF_8);
        assertEquals(
                "{\"z.weight\":{\"dtype\":\"F32\",\"shape\":[3,2],\"data_offsets\":[0,24]},"
                        + "\"a.bias\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[24,32]},"
                        + "\"scalar\":{\"dtype\":\"F32\",\"shape\":[],\"data_offsets\":[32,36]},"
                        + "\"empty\":{\"dtype\":\"F32\",\"shape\":[0,5],\"data_offsets\":[36,36]}}",
                header.stripTrailing());
        assertEquals(8 + n + 36, b.length);
    }

    @Test
    void truncationAtEveryByteIsBadInput() throws IOException {
        byte[] full = SafeTensors.toBytes(sample(), Map.of("k", "v"));
        Path p = dir.resolve("t.safetensors");
        for (int k = 0; k < full.length; k++) {
            byte[] cut = Arrays.copyOf(full, k);
            badInput(() -> SafeTensors.read(cut, "t.safetensors"), "t.safetensors");
            Files.write(p, cut);
            badInput(() -> SafeTensors.read(p), "t.safetensors");
        }
        SafeTensors.read(full, "t.safetensors");
    }

    private static void bad(String header, byte[] data, String fragment) {
        badInput(() -> SafeTensors.read(safetensors(header, data), "h.safetensors"), "h.safetensors", fragment);
    }

    @Test
    void hugeDeclaredShapeFailsBeforeAllocating() {
        // 2^40 F32 elements claimed; offsets either honest about the size (past the end) or lying about it
        bad(
                "{\"w\":{\"dtype\":\"F32\",\"shape\":[1048576,1048576],\"data_offsets\":[0,4398046511104]}}",
                new byte[8],
                "run past the end");
        bad(
                "{\"w\":{\"dtype\":\"F32\",\"shape\":[1048576,1048576],\"data_offsets\":[0,8]}}",
                new byte[8],
                "needs 4.4 TB but data_offsets [0, 8] hold 8 bytes");
        bad(
                "{\"w\":{\"dtype\":\"F64\",\"shape\":[4294967296,4294967296,4294967296],\"data_offsets\":[0,8]}}",
                new byte[8],
                "more than 2^63 bytes");
    }

    @Test
    void hostileOffsetsAndEntries() {
        byte[] d16 = f32le(1, 2, 3, 4);
        String a = "\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}";
        bad("{" + a + ",\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}", d16, "overlap tensor 'a'");
        bad("{" + a + ",\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[12,16]}}", d16, "gap");
        bad("{" + a + "}", d16, "8 bytes after the last tensor");
        bad("{" + a + ",\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,24]}}", d16, "run past the end");
        bad("{" + a + "," + a + "}", d16, "duplicate key \"a\"");
        bad(
                "{\"a\":{\"dtype\":\"F8_E4M3\",\"shape\":[16],\"data_offsets\":[0,16]}}",
                d16,
                "unsupported dtype 'F8_E4M3'");
        bad("{\"a\":{\"dtype\":\"F32\",\"shape\":[-4],\"data_offsets\":[0,16]}}", d16, "non-negative integers");
        bad("{\"a\":{\"dtype\":\"F32\",\"shape\":[4.0],\"data_offsets\":[0,16]}}", d16, "non-negative integers");
        bad("{\"a\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[16,0]}}", d16, "0 <= begin <= end");
        bad("{\"a\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[-16,0]}}", d16, "0 <= begin <= end");
        bad("{\"a\":{\"dtype\":\"F32\",\"shape\":[4]}}", d16, "data_offsets");
        bad("{\"a\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16],\"x\":1}}", d16, "unexpected key 'x'");
        bad("{\"a\":[1,2]}", d16, "not a JSON object");
        bad("[1,2]", d16, "does not start with '{'");
        bad("{\"__metadata__\":{\"k\":1}}", new byte[0], "not a string");
        bad("{\"a\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]", d16, "invalid JSON");
    }

    @Test
    void absurdHeaderLengths() {
        byte[] ok = SafeTensors.toBytes(sample(), Map.of());
        for (long n : new long[] {-1L, 1L << 40, (100L << 20) + 1, ok.length, 0, 1}) {
            byte[] b = ok.clone();
            ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN).putLong(0, n);
            badInput(() -> SafeTensors.read(b, "n.safetensors"), "n.safetensors", "header length");
        }
        byte[] badUtf8 = ok.clone();
        badUtf8[10] = (byte) 0xff;
        badInput(() -> SafeTensors.read(badUtf8, "u.safetensors"), "not valid UTF-8");
    }

    @Test
    void integerAndBoolDtypesWiden() {
        ByteBuffer d = ByteBuffer.allocate(8 + 4 + 1 + 1 + 2).order(ByteOrder.LITTLE_ENDIAN);
        d.putLong(-3).putInt(123456).put((byte) 200).put((byte) 1).putShort((short) 0x3FC0); // bf16 1.5
        String h = "{\"i\":{\"dtype\":\"I64\",\"shape\":[],\"data_offsets\":[0,8]},"
                + "\"j\":{\"dtype\":\"I32\",\"shape\":[1],\"data_offsets\":[8,12]},"
                + "\"u\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[12,13]},"
                + "\"m\":{\"dtype\":\"BOOL\",\"shape\":[1],\"data_offsets\":[13,14]},"
                + "\"b\":{\"dtype\":\"BF16\",\"shape\":[1],\"data_offsets\":[14,16]}}";
        var f = SafeTensors.read(safetensors(h, d.array()), "ints.safetensors").tensors();
        assertEquals(
                List.of(-3f, 123456f, 200f, 1f, 1.5f),
                List.of(
                        f.get("i").data()[0],
                        f.get("j").data()[0],
                        f.get("u").data()[0],
                        f.get("m").data()[0],
                        f.get("b").data()[0]));
    }

    @Test
    void metadataKeyCannotBeATensorName() {
        Map<String, Tensor> m = Map.of("__metadata__", Tensor.of(new float[] {1}, 1));
        badInput(() -> SafeTensors.toBytes(m, null), "__metadata__");
    }
}
