import ai.onnxruntime.*;
import io.attn.engine.*;
import io.attn.text.*;
import dev.langchain4j.model.embedding.EmbeddingModel;
import java.nio.*;
import java.nio.file.*;
import java.util.*;

public class Probe {
    static final String W = System.getenv().getOrDefault("QGAP", "/tmp/qgap");
    static double cos(float[] a, float[] b) {
        double ab = 0, aa = 0, bb = 0;
        for (int k = 0; k < a.length; k++) { ab += (double) a[k] * b[k]; aa += (double) a[k] * a[k]; bb += (double) b[k] * b[k]; }
        return ab / Math.sqrt(aa * bb);
    }
    static Path res(Path dir, String name) throws Exception {
        Path p = dir.resolve(name);
        if (!Files.exists(p)) try (var in = Probe.class.getClassLoader().getResourceAsStream(name)) { Files.copy(in, p); }
        return p;
    }
    static float[] pool(float[][] h, boolean cls) {
        float[] v = new float[h[0].length];
        if (cls) v = h[0].clone(); else { for (float[] r : h) for (int k = 0; k < v.length; k++) v[k] += r[k]; for (int k = 0; k < v.length; k++) v[k] /= h.length; }
        double n = 0; for (float x : v) n += x * x; n = Math.sqrt(n);
        for (int k = 0; k < v.length; k++) v[k] /= (float) n;
        return v;
    }
    static String summary(List<Double> l) {
        double[] c = l.stream().mapToDouble(d -> d).sorted().toArray();
        return String.format("median %.7f worst %.7f n=%d", c[c.length / 2], c[0], c.length);
    }
    public static void main(String[] a) throws Exception {
        String name = a[0]; boolean cls = a[1].equals("cls");
        EmbeddingModel l4j = (EmbeddingModel) Class.forName(a[2]).getConstructor().newInstance();
        Path dir = Paths.get(W + "/res"); Files.createDirectories(dir);
        List<String> texts = new ArrayList<>(Files.readAllLines(Paths.get("text/src/test/resources/io/attn/text/mixed.txt")));
        texts.add("A long document. ".repeat(200) + "Its end.");
        EmbedderOptions o = EmbedderOptions.defaults().withPooling(cls ? Pooling.CLS : Pooling.MEAN).withNormalize(true).withTokenizer(res(dir, name + "-tokenizer.json"));
        float[][] ours; List<TokenEmbeddings> toks;
        try (Engine engine = Engine.open(EngineOptions.defaults().withDevice("cpu"));
             Embedder e = Embedder.load(engine, res(dir, name + ".onnx"), o)) { ours = e.embed(texts); toks = e.embedTokens(texts); }
        OrtEnvironment env = OrtEnvironment.getEnvironment();
        System.out.println("ORT " + env.getVersion());
        byte[] model = Files.readAllBytes(res(dir, name + ".onnx"));
        Map<String, OrtSession.SessionOptions.OptLevel> levels = new LinkedHashMap<>();
        levels.put("default", null);
        for (String s : a.length > 3 ? a[3].split(",") : new String[0]) levels.put(s, OrtSession.SessionOptions.OptLevel.valueOf(s));
        float[][] l4jv = new float[texts.size()][];
        for (int i = 0; i < texts.size(); i++) if (!texts.get(i).isBlank()) l4jv[i] = l4j.embed(texts.get(i)).content().vector();
        List<Double> la = new ArrayList<>();
        for (int i = 0; i < texts.size(); i++) if (l4jv[i] != null) la.add(cos(l4jv[i], ours[i]));
        System.out.println(name + " attn vs l4j: " + summary(la));
        try (var w = Files.newBufferedWriter(Paths.get(W + "/" + name + "-ids.txt"))) {
            for (var t : toks) { StringBuilder sb = new StringBuilder(); for (int id : t.ids()) sb.append(id).append(' '); w.write(sb.toString().trim()); w.newLine(); }
        }
        for (var lv : levels.entrySet()) {
            var so = new OrtSession.SessionOptions();
            if (lv.getValue() != null) so.setOptimizationLevel(lv.getValue());
            try (OrtSession s = lv.getValue() == null ? env.createSession(model) : env.createSession(model, so)) {
                List<Double> ol = new ArrayList<>(), oa = new ArrayList<>();
                float[][] ov = new float[texts.size()][];
                for (int i = 0; i < texts.size(); i++) {
                    int[] ids = toks.get(i).ids(); int n = ids.length;
                    long[] l = new long[n], ones = new long[n], zeros = new long[n];
                    for (int j = 0; j < n; j++) { l[j] = ids[j]; ones[j] = 1; }
                    long[] shape = {1, n};
                    Map<String, OnnxTensor> in = new HashMap<>();
                    in.put("input_ids", OnnxTensor.createTensor(env, LongBuffer.wrap(l), shape));
                    in.put("attention_mask", OnnxTensor.createTensor(env, LongBuffer.wrap(ones), shape));
                    if (s.getInputNames().contains("token_type_ids")) in.put("token_type_ids", OnnxTensor.createTensor(env, LongBuffer.wrap(zeros), shape));
                    try (var r = s.run(in)) { ov[i] = pool(((float[][][]) r.get(0).getValue())[0], cls); }
                    if (l4jv[i] != null) ol.add(cos(l4jv[i], ov[i]));
                    oa.add(cos(ov[i], ours[i]));
                }
                System.out.println(name + " ORT-Java[" + lv.getKey() + "] on attn ids vs l4j: " + summary(ol));
                System.out.println(name + " ORT-Java[" + lv.getKey() + "] on attn ids vs attn: " + summary(oa));
                try (var w = Files.newBufferedWriter(Paths.get(W + "/" + name + "-ortjava-" + lv.getKey() + ".txt"))) {
                    for (float[] v : ov) { StringBuilder sb = new StringBuilder(); for (float x : v) sb.append(x).append(' '); w.write(sb.toString().trim()); w.newLine(); }
                }
            }
        }
        try (var w = Files.newBufferedWriter(Paths.get(W + "/" + name + "-attn.txt"))) {
            for (float[] v : ours) { StringBuilder sb = new StringBuilder(); for (float x : v) sb.append(x).append(' '); w.write(sb.toString().trim()); w.newLine(); }
        }
        try (var w = Files.newBufferedWriter(Paths.get(W + "/" + name + "-l4j.txt"))) {
            for (float[] v : l4jv) { StringBuilder sb = new StringBuilder(); if (v != null) for (float x : v) sb.append(x).append(' '); w.write(sb.toString().trim()); w.newLine(); }
        }
    }
}
