import ai.onnxruntime.*;
import java.nio.*;
import java.nio.file.*;
import java.util.*;
public class Single {
    static final String W = System.getenv().getOrDefault("QGAP", "/tmp/qgap");
    static float[] read(String f) throws Exception { var b = ByteBuffer.wrap(Files.readAllBytes(Paths.get(f))).order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer(); float[] a = new float[b.remaining()]; b.get(a); return a; }
    public static void main(String[] a) throws Exception {
        var env = OrtEnvironment.getEnvironment();
        String d = W + "/single/";
        for (String line : Files.readAllLines(Paths.get(d + "manifest.txt"))) {
            String[] f = line.split(" "); String tag = f[0]; int li = Integer.parseInt(f[1]), M = Integer.parseInt(f[2]), K = Integer.parseInt(f[3]), N = Integer.parseInt(f[4]);
            float[] x = read(d + tag + "-X.bin"), ref = read(d + tag + "-ref.bin");
            StringBuilder sb = new StringBuilder(tag + " K=" + K + " ORT" + env.getVersion());
            for (String k : new String[] {"A", "B", "C"}) {
                for (var lv : new OrtSession.SessionOptions.OptLevel[] {OrtSession.SessionOptions.OptLevel.NO_OPT}) {
                    var so = new OrtSession.SessionOptions(); so.setOptimizationLevel(lv);
                    try (var s = env.createSession(d + "l" + li + "-" + k + ".onnx", so);
                         var t = OnnxTensor.createTensor(env, FloatBuffer.wrap(x), new long[] {M, K});
                         var r = s.run(Map.of("X", t))) {
                        float[][] y = (float[][]) r.get(0).getValue();
                        double max = 0, rel = 0; int diff = 0;
                        for (int i = 0; i < M; i++) for (int j = 0; j < N; j++) { double e = Math.abs(y[i][j] - ref[i * N + j]); max = Math.max(max, e); if (e > 0) diff++; }
                        sb.append(String.format(" %s: max|y-emul| %.3g (%d of %d differ)", k, max, diff, M * N));
                        if (k.equals("B") && tag.endsWith("l0")) {
                            // dump one row's diffs for analysis
                            try (var w = Files.newBufferedWriter(Paths.get(d + tag + "-B-java120.txt"))) { for (int i = 0; i < M; i++) { StringBuilder q = new StringBuilder(); for (int j = 0; j < N; j++) q.append(y[i][j]).append(' '); w.write(q.toString()); w.newLine(); } }
                        }
                    }
                }
            }
            System.out.println(sb);
        }
    }
}
