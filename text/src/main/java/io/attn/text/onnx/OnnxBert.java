package io.attn.text.onnx;

import io.attn.AttnException;
import io.attn.tensor.Tensor;
import java.nio.file.Path;
import java.util.Map;

/** Placeholder until the importer lands (replaced by the helper's OnnxBert). */
public final class OnnxBert {
    private OnnxBert() {}

    public record Imported(Map<String, Object> config, Map<String, Tensor> weights) {}

    public static Imported read(Path onnxFile) {
        throw AttnException.badInput(onnxFile + ": ONNX import is not built yet");
    }
}
