package io.attn.nn;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.attn.io.Json;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * MPNet's relative position buckets against transformers' {@code MPNetEncoder.relative_position_bucket} itself: the
 * bucket of every offset in [-1100, 1100] for 32 and 64 buckets, as PyTorch 2.13 / transformers 5.18 computed them
 * (resource {@code mpnet_buckets.json}). The logarithmic buckets are computed in float, as PyTorch does: offsets 16,
 * 32, 64 and 128 sit exactly on bucket boundaries, where double arithmetic could round to the other side.
 */
class MpnetFamilyTest {
    @Test
    @SuppressWarnings("unchecked")
    void bucketsAreTransformers() throws Exception {
        Map<String, Object> ref;
        try (InputStream in = MpnetFamilyTest.class.getResourceAsStream("mpnet_buckets.json")) {
            ref = (Map<String, Object>) Json.parse(new String(in.readAllBytes(), StandardCharsets.UTF_8));
        }
        List<Number> range = (List<Number>) ref.get("relative_positions");
        int from = range.get(0).intValue();
        Map<String, Object> buckets = (Map<String, Object>) ref.get("buckets");
        assertEquals(2, buckets.size());
        for (var e : buckets.entrySet()) {
            int n = Integer.parseInt(e.getKey());
            List<Number> want = (List<Number>) e.getValue();
            assertEquals(range.get(1).intValue() - from + 1, want.size());
            for (int i = 0; i < want.size(); i++)
                assertEquals(
                        want.get(i).intValue(),
                        MpnetFamily.bucket(from + i, n),
                        "relative position " + (from + i) + ", " + n + " buckets");
        }
    }
}
