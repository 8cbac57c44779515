package io.attn.cli;

import io.attn.engine.Engine;
import io.attn.server.AttnServer;
import io.attn.server.ServerOptions;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
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
        description = "Serve models over HTTP: OpenAI /v1/embeddings and /v1/models, TEI /embed, /rerank, /predict,"
                + " /tokenize, /decode, Cohere/Jina /v1/rerank, /v1/encode, /health, /info, /metrics.")
final class ServeCommand implements Callable<Integer> {
    @Option(
            names = "--model",
            required = true,
            paramLabel = "[NAME=]DIR|FILE",
            description = "A Hugging Face model folder or .onnx (embeddings; a *ForSequenceClassification folder:"
                    + " reranking with one label, classification with several), or an attn .safetensors (tensor"
                    + " model). Repeat to serve several, each named NAME (default: its folder's name); requests pick"
                    + " one by their \"model\" field.")
    List<String> model;

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

    @Option(
            names = "--warmup",
            paramLabel = "MS",
            description = "Before the port opens, run warm-up batches of assorted shapes this long, so that the"
                    + " first requests find the kernels compiled (default: 0, one short pass; e.g. 30000 on a busy"
                    + " host behind a readiness probe).")
    long warmup = ServerOptions.defaults().warmupMillis();

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
                    .withTimeouts(idleTimeout, minDataRate, requestTimeout, drainTimeout)
                    .withWarmup(warmup);
        } catch (IllegalArgumentException e) {
            throw new picocli.CommandLine.ParameterException(new picocli.CommandLine(this), e.getMessage());
        }
        Map<String, Path> models = new LinkedHashMap<>();
        for (String m : model) {
            int eq = m.indexOf('=');
            // NAME=DIR, unless the whole is an existing path (a folder whose name holds '=')
            boolean named = eq > 0 && !Files.exists(Path.of(m));
            String name = named ? m.substring(0, eq) : null;
            Path dir = Path.of(named ? m.substring(eq + 1) : m);
            if (name != null && models.containsKey(name))
                throw new picocli.CommandLine.ParameterException(
                        new picocli.CommandLine(this), "two --model options are named \"" + name + "\"");
            models.put(name != null ? name : "\u0000" + models.size(), dir);
        }
        var embedOptions = embed.options(); // a bad option value is a usage error before anything opens
        Map<String, Path> named = folderNamed(models);
        Map<String, String> tasks = new LinkedHashMap<>(embed.task(new picocli.CommandLine(this), true));
        tasks.remove(null); // a task alone is in embedOptions: every model's
        for (String n : tasks.keySet())
            if (!named.containsKey(n))
                throw new picocli.CommandLine.ParameterException(
                        new picocli.CommandLine(this),
                        "--task " + n + "=" + tasks.get(n) + ": no model is served as \"" + n + "\" (served: "
                                + String.join(", ", named.keySet()) + ")");
        // NAME=T1,T2,...: NAME serves T1, and each further task is its own copy served as NAME/T (a request naming NAME
        // with task T is answered by it, as Jina's clients send the model's name with a task)
        Map<String, Path> served = new LinkedHashMap<>();
        Map<String, String> servedTasks = new LinkedHashMap<>();
        for (var e : named.entrySet()) {
            served.put(e.getKey(), e.getValue());
            String t = tasks.get(e.getKey());
            if (t == null) continue;
            String[] each = t.split(",", -1);
            for (int i = 0; i < each.length; i++) {
                String task = each[i].strip();
                if (task.isEmpty())
                    throw new picocli.CommandLine.ParameterException(
                            new picocli.CommandLine(this), "--task " + e.getKey() + "=" + t + ": an empty task name");
                String name = i == 0 ? e.getKey() : e.getKey() + "/" + task;
                if (i > 0 && served.put(name, e.getValue()) != null)
                    throw new picocli.CommandLine.ParameterException(
                            new picocli.CommandLine(this),
                            "--task " + e.getKey() + "=" + t + ": task \"" + task
                                    + "\" twice (or a model already served as \"" + name + "\")");
                servedTasks.put(name, task);
            }
        }
        Engine engine = Engine.open(device.engineOptions());
        AttnServer server =
                AttnServer.start(engine, served, embedOptions, servedTasks, o, new Main.Version().getVersion()[0]);
        CountDownLatch stopped = new CountDownLatch(1);
        Runnable stop = () -> {
            server.close();
            stopped.countDown();
        };
        Signals.onTerminate(stop);
        System.err.println("attn: serving " + String.join(", ", server.modelNames()) + " on http://" + host + ":"
                + server.port() + " (" + engine.description() + ")" + (key != null ? ", API key required" : ""));
        stopped.await();
        System.err.println("attn: stopped");
        return 0;
    }

    /** Unnamed models named by their folder (file) name, the named ones as given. */
    private static Map<String, Path> folderNamed(Map<String, Path> models) {
        Map<String, Path> out = new LinkedHashMap<>();
        for (var e : models.entrySet()) {
            String name = e.getKey();
            if (name.startsWith("\u0000")) {
                Path f = e.getValue().toAbsolutePath().normalize().getFileName();
                name = f == null ? "model" : f.toString();
                if (name.endsWith(".safetensors")) name = name.substring(0, name.length() - ".safetensors".length());
                if (name.endsWith(".onnx")) name = name.substring(0, name.length() - ".onnx".length());
            }
            if (out.put(name, e.getValue()) != null)
                throw io.attn.AttnException.badInput(
                        "two models are called \"" + name + "\": name them apart with --model NAME=DIR");
        }
        return out;
    }
}
