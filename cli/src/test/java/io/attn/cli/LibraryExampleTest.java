package io.attn.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.attn.backend.Backend;
import io.attn.backend.BackendOptions;
import io.attn.backend.Backends;
import io.attn.io.SafeTensors;
import io.attn.nn.Forward;
import io.attn.nn.Inputs;
import io.attn.nn.Model;
import io.attn.reference.layers.LayerConfig;
import io.attn.reference.layers.RandomStateDicts;
import io.attn.tensor.Shape;
import io.attn.tensor.Tensor;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** README's "Use as a library" example, verbatim between the markers, compiled and run. */
class LibraryExampleTest {
    @TempDir
    Path dir;

    @Test
    void readmeExampleRuns() throws Exception {
        SafeTensors.write(
                dir.resolve("enc.safetensors"),
                RandomStateDicts.encoderLayer(LayerConfig.of(16, 4, 32), 1),
                Map.of(
                        "config",
                        "{\"module\":\"TransformerEncoderLayer\",\"d_model\":16,\"nhead\":4,\"dim_feedforward\":32}"));
        Tensor y, w;
        // ---- README example (with the file path made absolute)
        try (Backend backend = Backends.open("auto", BackendOptions.defaults()).backend();
                Model model = Model.load(dir.resolve("enc.safetensors"), null)) { // config from the file's metadata
            Tensor x = Tensor.of(new float[2 * 10 * 16], 2, 10, 16); // (B, L, E)
            Model.Result r = model.run(backend, Inputs.of(x).withWeights(Forward.Weights.AVERAGED));
            y = r.output(); // (2, 10, 16)
            w = r.attentionWeights().get("self_attn"); // (2, 10, 10), averaged over heads
        }
        // ---- end of example
        assertEquals(Shape.of(2, 10, 16), y.shape());
        assertEquals(Shape.of(2, 10, 10), w.shape());
    }
}
