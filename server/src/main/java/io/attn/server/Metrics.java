package io.attn.server;

import io.prometheus.metrics.config.EscapingScheme;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.function.IntSupplier;

/**
 * The server's metrics, kept by the Prometheus Java client (its own registry, so that several servers in one JVM do not
 * share counters) and written in the Prometheus text format for {@code GET /metrics}: requests by endpoint and status,
 * request latency, admitted requests (queued or running), texts and tokens per forward pass, forward-pass time, texts
 * and tokens embedded (their {@code rate()} is texts/s and tokens/s). Thread-safe.
 */
final class Metrics {
    private final PrometheusRegistry registry = new PrometheusRegistry();
    private final PrometheusTextFormatWriter writer = PrometheusTextFormatWriter.create();
    final Counter requests = Counter.builder()
            .name("attn_requests_total")
            .help("HTTP requests by endpoint, status and model (\"\" where none was picked)")
            .labelNames("endpoint", "status", "model")
            .register(registry);
    final Histogram latency = Histogram.builder()
            .name("attn_request_duration_seconds")
            .help("Time from the request's arrival to its answer")
            .labelNames("endpoint")
            .classicOnly()
            .classicUpperBounds(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)
            .register(registry);
    final Histogram batchTexts = Histogram.builder()
            .name("attn_batch_texts")
            .help("Texts per forward pass (several requests' texts batched together), by model")
            .labelNames("model")
            .classicOnly()
            .classicUpperBounds(1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
            .register(registry);
    final Histogram batchTokens = Histogram.builder()
            .name("attn_batch_tokens")
            .help("Tokens per forward pass, by model")
            .labelNames("model")
            .classicOnly()
            .classicUpperBounds(16, 64, 256, 512, 1024, 2048, 4096, 8192, 16384)
            .register(registry);
    final Histogram batchSeconds = Histogram.builder()
            .name("attn_batch_duration_seconds")
            .help("Time of one forward pass, by model")
            .labelNames("model")
            .classicOnly()
            .classicUpperBounds(0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5)
            .register(registry);
    final Counter texts = Counter.builder()
            .name("attn_texts_total")
            .help("Texts (or pairs) run through a model, by model")
            .labelNames("model")
            .register(registry);
    final Counter tokens = Counter.builder()
            .name("attn_tokens_total")
            .help("Tokens run through a model, by model")
            .labelNames("model")
            .register(registry);

    /**
     * @param admitted requests admitted and not yet answered, all models together
     * @param byModel the same for each model, by name
     */
    Metrics(IntSupplier admitted, java.util.Map<String, IntSupplier> byModel) {
        GaugeWithCallback.builder()
                .name("attn_requests_admitted")
                .help("Requests admitted and not yet answered (queued or running), all models")
                .callback(c -> c.call(admitted.getAsInt()))
                .register(registry);
        GaugeWithCallback.builder()
                .name("attn_model_requests_admitted")
                .help("Requests admitted and not yet answered (queued or running), by model")
                .labelNames("model")
                .callback(c -> {
                    for (var e : byModel.entrySet()) c.call(e.getValue().getAsInt(), e.getKey());
                })
                .register(registry);
    }

    String contentType() {
        return writer.getContentType();
    }

    byte[] scrape() {
        ByteArrayOutputStream out = new ByteArrayOutputStream(8192);
        try {
            writer.write(out, registry.scrape(), EscapingScheme.DEFAULT);
        } catch (IOException e) {
            throw new IllegalStateException("writing metrics to memory failed", e);
        }
        return out.toByteArray();
    }
}
