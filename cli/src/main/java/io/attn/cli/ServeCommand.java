package io.attn.cli;

import io.attn.engine.Engine;
import io.attn.server.AttnServer;
import io.attn.server.ServerOptions;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code attn serve}: the embedding and encoder server ({@link AttnServer}). SIGTERM and SIGINT stop it gracefully
 * (requests in flight answered within {@code --drain-timeout}, then exit 0, not the JVM's 143); a model that cannot be
 * loaded exits 3 before the port opens.
 */
@Command(
        name = "serve",
        sortOptions = false,
        description =
                "Serve a model over HTTP: OpenAI /v1/embeddings, TEI /embed, /v1/encode, /health, /info, /metrics.")
final class ServeCommand implements Callable<Integer> {
    @Option(
            names = "--model",
            required = true,
            paramLabel = "DIR|FILE",
            description =
                    "A Hugging Face model folder or .onnx (text embeddings), or an attn .safetensors (tensor model).")
    Path model;

    @Option(names = "--host", description = "Address to bind (default: ${DEFAULT-VALUE}; 0.0.0.0 for every interface).")
    String host = "127.0.0.1";

    @Option(names = "--port", description = "Port (default: ${DEFAULT-VALUE}; 0 picks a free one).")
    int port = 8080;

    @Option(
            names = "--api-key",
            paramLabel = "KEY",
            description = "Require 'Authorization: Bearer KEY' (default: the ATTN_API_KEY variable; none if unset).")
    String apiKey;

    @Option(names = "--cors", paramLabel = "ORIGIN", description = "Allow this origin (or *) by CORS (default: none).")
    String cors;

    @Option(names = "--max-batch-tokens", paramLabel = "N", description = "Tokens per forward pass (default: 4096).")
    int maxBatchTokens = ServerOptions.defaults().maxBatchTokens();

    @Option(names = "--max-wait", paramLabel = "MS", description = "How long a batch waits to fill (default: 5 ms).")
    int maxWait = ServerOptions.defaults().maxWaitMillis();

    @Option(
            names = "--max-concurrent-requests",
            paramLabel = "N",
            description = "Requests admitted at once; more get 429 (default: 256).")
    int maxQueued = ServerOptions.defaults().maxQueuedRequests();

    @Option(names = "--max-inputs", paramLabel = "N", description = "Texts per request (default: 2048).")
    int maxInputs = ServerOptions.defaults().maxInputs();

    @Option(
            names = "--max-request-tokens",
            paramLabel = "N",
            description = "Tokens per request, all texts together (default: 262144).")
    int maxRequestTokens = ServerOptions.defaults().maxRequestTokens();

    @Option(names = "--max-body", paramLabel = "BYTES", description = "Request body size (default: 16 MiB).")
    long maxBody = ServerOptions.defaults().maxBodyBytes();

    @Option(names = "--idle-timeout", paramLabel = "MS", description = "Idle connection timeout (default: 30000).")
    long idleTimeout = ServerOptions.defaults().idleTimeoutMillis();

    @Option(
            names = "--min-data-rate",
            paramLabel = "BYTES/S",
            description = "A body must arrive at least this fast, else 408 (default: 1024).")
    long minDataRate = ServerOptions.defaults().minDataRate();

    @Option(
            names = "--request-timeout",
            paramLabel = "MS",
            description = "A request not answered by then gets 503 (default: 30000).")
    long requestTimeout = ServerOptions.defaults().requestTimeoutMillis();

    @Option(
            names = "--drain-timeout",
            paramLabel = "MS",
            description = "On SIGTERM, how long requests in flight may finish (default: 30000).")
    long drainTimeout = ServerOptions.defaults().drainTimeoutMillis();

    @Mixin
    EmbedOptions embed;

    @Mixin
    DeviceOptions device;

    @Override
    public Integer call() throws Exception {
        String key = apiKey != null ? apiKey : System.getenv("ATTN_API_KEY");
        ServerOptions o;
        try {
            o = ServerOptions.defaults()
                    .withHost(host)
                    .withPort(port)
                    .withApiKey(key)
                    .withCorsOrigin(cors)
                    .withBatching(maxBatchTokens, maxWait)
                    .withMaxQueuedRequests(maxQueued)
                    .withRequestLimits(maxInputs, maxRequestTokens, maxBody)
                    .withTimeouts(idleTimeout, minDataRate, requestTimeout, drainTimeout);
        } catch (IllegalArgumentException e) {
            throw new picocli.CommandLine.ParameterException(new picocli.CommandLine(this), e.getMessage());
        }
        Engine engine = Engine.open(device.engineOptions());
        AttnServer server = AttnServer.start(engine, model, embed.options(), o, new Main.Version().getVersion()[0]);
        CountDownLatch stopped = new CountDownLatch(1);
        Runnable stop = () -> {
            server.close();
            stopped.countDown();
        };
        Signals.onTerminate(stop);
        System.err.println("attn: serving " + server.modelName() + " on http://" + host + ":" + server.port() + " ("
                + engine.description() + ")" + (key != null ? ", API key required" : ""));
        stopped.await();
        System.err.println("attn: stopped");
        return 0;
    }
}
