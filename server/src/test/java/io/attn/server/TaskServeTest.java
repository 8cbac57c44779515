package io.attn.server;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.google.gson.JsonParser;
import io.attn.engine.Engine;
import io.attn.engine.EngineOptions;
import io.attn.io.Json;
import io.attn.text.EmbedderOptions;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@code attn serve --task}: jina-embeddings-v3's hub folder ({@code tests/families/jina-v3-hub}, task LoRA adapters)
 * served with its {@code retrieval.query} adapter merged; {@code /embed} and {@code /v1/embeddings} answer with that
 * task's vectors and its prompt first, within cosine 0.99999 and 1e-4 x norm of sentence-transformers' on that task's
 * merged weights ({@code tasks.json}, tools/make_jina_v3.py; the text module's TaskAdaptersTest holds the library to
 * the same judge). Two tasks of one folder served under two names ({@code --task q=retrieval.query --task
 * p=retrieval.passage}): a request's Jina {@code task} without a {@code model} goes to the model serving it.
 */
class TaskServeTest {
    static final Path MODEL = Path.of("../tests/families/jina-v3-hub");

    @SuppressWarnings("unchecked")
    static List<List<Number>> want(String task) {
        Map<String, Object> x = (Map<String, Object>) Json.read(MODEL.resolve("tasks.json"));
        for (Object o : (List<?>) x.get("runs")) {
            Map<String, Object> run = (Map<String, Object>) o;
            if (task.equals(run.get("task"))) return (List<List<Number>>) run.get("embeddings");
        }
        throw new AssertionError("no run of task " + task);
    }

    @SuppressWarnings("unchecked")
    static String inputs() {
        Map<String, Object> x = (Map<String, Object>) Json.read(MODEL.resolve("tasks.json"));
        return ApiTest.texts(((List<String>) x.get("texts"))
                .stream().map(t -> t.replace("\"", "\\\"")).toList());
    }

    static com.google.gson.JsonArray rows(String body) {
        var rows = new com.google.gson.JsonArray();
        for (var d : JsonParser.parseString(body).getAsJsonObject().getAsJsonArray("data"))
            rows.add(d.getAsJsonObject().getAsJsonArray("embedding"));
        return rows;
    }

    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(strings = {"default", "merge"})
    void aRequestsTaskPicksTheModelServingIt(String adapters) throws Exception {
        Map<String, Path> models = new java.util.LinkedHashMap<>();
        models.put("q", MODEL);
        models.put("p", MODEL);
        // by default the folder's two tasks share its weights, each adapter run beside them; merge: a copy per task
        EmbedderOptions options = adapters.equals("merge")
                ? EmbedderOptions.defaults().withTaskAdapters(io.attn.engine.TaskAdapters.Mode.MERGE)
                : EmbedderOptions.defaults();
        AttnServer server = AttnServer.start(
                Engine.open(EngineOptions.defaults().withDevice("cpu")),
                models,
                options,
                Map.of("q", "retrieval.query", "p", "retrieval.passage"),
                ServerOptions.defaults().withHost("127.0.0.1").withPort(0),
                "test");
        try (ServerFixture s = new ServerFixture(server, MODEL)) {
            for (String name : List.of("q", "p"))
                assertEquals(
                        !adapters.equals("merge"),
                        server.model(name).embedder.description().contains("beside weights shared"),
                        server.model(name).embedder.description());
            for (String task : List.of("retrieval.passage", "retrieval.query")) {
                HttpResponse<String> r =
                        s.post("/v1/embeddings", "{\"input\":" + inputs() + ",\"task\":\"" + task + "\"}");
                assertEquals(200, r.statusCode(), r.body());
                assertEquals(
                        task.equals("retrieval.query") ? "q" : "p",
                        JsonParser.parseString(r.body())
                                .getAsJsonObject()
                                .get("model")
                                .getAsString());
                PromptsTest.same(task, want(task), rows(r.body()));
            }
            HttpResponse<String> r =
                    s.post("/v1/embeddings", "{\"input\":\"x\",\"model\":\"q\",\"task\":\"retrieval.passage\"}");
            assertEquals(400, r.statusCode(), r.body());
            org.junit.jupiter.api.Assertions.assertTrue(
                    r.body().contains("not served by model q: it serves task \\\"retrieval.query\\\""), r.body());
            r = s.post("/v1/embeddings", "{\"input\":\"x\",\"task\":\"separation\"}");
            assertEquals(400, r.statusCode(), r.body());
            org.junit.jupiter.api.Assertions.assertTrue(
                    r.body().contains("not served here (served tasks: q=retrieval.query, p=retrieval.passage"),
                    r.body());
        }
    }

    /**
     * One folder served under two names, a task for every model ({@code --task retrieval.query}) and another for one
     * name ({@code --task p=retrieval.passage}): read once, each name with its own task, the weights the same objects.
     */
    @Test
    void aFolderServedForTwoTasksIsReadOnceWithEachNamesTask() throws Exception {
        Map<String, Path> models = new java.util.LinkedHashMap<>();
        models.put("q", MODEL);
        models.put("p", MODEL);
        EmbedderOptions options = EmbedderOptions.defaults().withTask("retrieval.query");
        Map<String, String> tasks = Map.of("p", "retrieval.passage");
        var read = AttnServer.sharedTasks(models, options, tasks);
        assertEquals("retrieval.query", read.get("q").task());
        assertEquals("retrieval.passage", read.get("p").task());
        String w = "roberta.encoder.layers.0.mixer.Wqkv.weight";
        org.junit.jupiter.api.Assertions.assertSame(
                read.get("q").weights().get(w), read.get("p").weights().get(w), w + " is one tensor");
        // and the server starts with it, each name answering with its task's vectors
        AttnServer server = AttnServer.start(
                Engine.open(EngineOptions.defaults().withDevice("cpu")),
                models,
                options,
                tasks,
                ServerOptions.defaults().withHost("127.0.0.1").withPort(0),
                "test");
        try (ServerFixture s = new ServerFixture(server, MODEL)) {
            for (String task : List.of("retrieval.query", "retrieval.passage")) {
                HttpResponse<String> r =
                        s.post("/v1/embeddings", "{\"input\":" + inputs() + ",\"task\":\"" + task + "\"}");
                assertEquals(200, r.statusCode(), r.body());
                PromptsTest.same(task, want(task), rows(r.body()));
            }
        }
        // merge asked: no shared reading
        assertEquals(
                0,
                AttnServer.sharedTasks(models, options.withTaskAdapters(io.attn.engine.TaskAdapters.Mode.MERGE), tasks)
                        .size());
    }

    @Test
    void aServedTaskModelAnswersWithItsTasksVectors() throws Exception {
        List<List<Number>> want = want("retrieval.query");
        String inputs = inputs();
        AttnServer server = AttnServer.start(
                Engine.open(EngineOptions.defaults().withDevice("cpu")),
                MODEL,
                EmbedderOptions.defaults().withTask("retrieval.query"),
                ServerOptions.defaults().withHost("127.0.0.1").withPort(0),
                "test");
        try (ServerFixture s = new ServerFixture(server, MODEL)) {
            HttpResponse<String> r = s.post("/embed", "{\"inputs\":" + inputs + ",\"truncate\":true}");
            assertEquals(200, r.statusCode(), r.body());
            PromptsTest.same("/embed", want, JsonParser.parseString(r.body()).getAsJsonArray());
            r = s.post("/v1/embeddings", "{\"input\":" + inputs + "}");
            assertEquals(200, r.statusCode(), r.body());
            PromptsTest.same("/v1/embeddings", want, rows(r.body()));
            // Jina's API names the task per request: the served one answers the same, another is a 400 naming it
            r = s.post("/v1/embeddings", "{\"input\":" + inputs + ",\"task\":\"retrieval.query\"}");
            assertEquals(200, r.statusCode(), r.body());
            r = s.post("/v1/embeddings", "{\"input\":\"x\",\"task\":\"retrieval.passage\"}");
            assertEquals(400, r.statusCode(), r.body());
            org.junit.jupiter.api.Assertions.assertTrue(
                    r.body()
                            .contains(
                                    "task \\\"retrieval.passage\\\" is not served here (served tasks: jina-v3-hub=retrieval.query"),
                    r.body());
        }
    }
}
