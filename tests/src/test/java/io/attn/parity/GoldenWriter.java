package io.attn.parity;

import io.attn.io.Json;
import io.attn.io.Npy;
import io.attn.io.SafeTensors;
import io.attn.reference.layers.DTensor;
import io.attn.tensor.Tensor;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Writes a golden folder in the layout of {@code tools/golden_torch.py} (index.json; per case model.safetensors with
 * the config JSON in {@code __metadata__["config"]}, float32 {@code in.<name>.npy}, float64 {@code out.<name>.npy}),
 * with expected outputs from the Java double reference instead of PyTorch. No {@code out32} files: PyTorch's own
 * float32 run has no counterpart here (the runner treats them as optional context).
 */
final class GoldenWriter {
    private final Path root;
    private final List<Map<String, Object>> index = new ArrayList<>();

    GoldenWriter(Path root) {
        this.root = root;
    }

    /** One case; {@code config} holds the constructor arguments, "module" and "forward" (inputs/outputs added here). */
    void write(
            String name,
            Map<String, Object> config,
            Map<String, Tensor> stateDict,
            Map<String, Tensor> inputs,
            Map<String, DTensor> outputs)
            throws IOException {
        Path d = Files.createDirectories(root.resolve(name));
        Map<String, Object> cfg = new LinkedHashMap<>(config);
        cfg.put("inputs", List.copyOf(inputs.keySet()));
        cfg.put("outputs", List.copyOf(outputs.keySet()));
        SafeTensors.write(d.resolve("model.safetensors"), stateDict, Map.of("config", Json.write(cfg)));
        for (var e : inputs.entrySet()) Npy.write(d.resolve("in." + e.getKey() + ".npy"), e.getValue());
        for (var e : outputs.entrySet()) Files.write(d.resolve("out." + e.getKey() + ".npy"), npy64(e.getValue()));
        Map<String, Object> entry = new LinkedHashMap<>();
        entry.put("name", name);
        entry.put("config", cfg);
        index.add(entry);
    }

    /** Writes index.json, as the script does after its last case. */
    void finish() throws IOException {
        Map<String, Object> idx = new LinkedHashMap<>();
        idx.put("torch", "none (io.attn.reference.layers)");
        idx.put("seed", 0L);
        idx.put("cases", index);
        Files.writeString(root.resolve("index.json"), Json.write(idx), StandardCharsets.UTF_8);
    }

    /** A float64 .npy file: format 1.0, header padded to a multiple of 64 bytes as numpy writes it, little-endian. */
    static byte[] npy64(DTensor t) {
        StringBuilder shape = new StringBuilder("(");
        for (int i = 0; i < t.rank(); i++) shape.append(i > 0 ? ", " : "").append(t.dim(i));
        shape.append(t.rank() == 1 ? ",)" : ")");
        String dict = "{'descr': '<f8', 'fortran_order': False, 'shape': " + shape + ", }";
        int headerLen = (10 + dict.length() + 1 + 63) / 64 * 64 - 10;
        ByteBuffer b = ByteBuffer.allocate(10 + headerLen + 8 * t.size()).order(ByteOrder.LITTLE_ENDIAN);
        b.put(new byte[] {(byte) 0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0}).putShort((short) headerLen);
        b.put(dict.getBytes(StandardCharsets.ISO_8859_1));
        while (b.position() < 10 + headerLen - 1) b.put((byte) ' ');
        b.put((byte) '\n');
        for (double v : t.data()) b.putDouble(v);
        return b.array();
    }
}
