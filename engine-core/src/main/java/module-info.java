/**
 * attn's engine. The public API, for any client (a service, the attn CLI, the server, Spark jobs): {@code io.attn}
 * ({@link io.attn.AttnException}), {@code io.attn.engine} (Engine, AttnModel, Request, Result, Tensors, Devices,
 * ...), {@code io.attn.tensor} (the tensor value type) and {@code io.attn.io} (the file formats: npy, npz,
 * safetensors, word vectors).
 *
 * <p>Everything else is internal: the compute graph ({@code io.attn.graph}), its executor ({@code io.attn.exec}), the
 * modules that build graphs ({@code io.attn.nn}, {@code io.attn.generate}), the backend interface ({@code
 * io.attn.backend}) and the API layer's door for running a checked request on a given backend ({@code
 * io.attn.engine.internal}) are exported only to the engine's own modules: the backends ({@code io.attn.cpu}, {@code
 * io.attn.cuda}), the judge ({@code io.attn.reference}, which builds single-op graphs) and the benchmarks. They may
 * change in any release. The text models, the server and the Spark jobs use the public API only.
 */
module io.attn.engine {
    requires jdk.incubator.vector; // io.attn.tensor.Finite scans for NaN/Inf with vectors
    requires com.google.gson; // io.attn.io.Json reads JSON with Gson's strict streaming reader

    exports io.attn;
    exports io.attn.engine;
    exports io.attn.tensor;
    exports io.attn.io;
    exports io.attn.backend to
            io.attn.cpu,
            io.attn.cuda,
            io.attn.reference,
            io.attn.benchmarks;
    exports io.attn.graph to
            io.attn.cpu,
            io.attn.cuda,
            io.attn.reference,
            io.attn.benchmarks;
    exports io.attn.exec to
            io.attn.cpu,
            io.attn.cuda,
            io.attn.reference,
            io.attn.benchmarks;
    exports io.attn.engine.internal to
            io.attn.cpu,
            io.attn.cuda,
            io.attn.reference,
            io.attn.benchmarks;
    exports io.attn.nn to
            io.attn.cpu,
            io.attn.cuda,
            io.attn.reference,
            io.attn.benchmarks;

    uses io.attn.backend.BackendProvider;
}
