import ai.onnxruntime.*;
public class Dump {
    public static void main(String[] a) throws Exception {
        var env = OrtEnvironment.getEnvironment();
        var so = new OrtSession.SessionOptions();
        so.setOptimizationLevel(OrtSession.SessionOptions.OptLevel.valueOf(a[2]));
        so.setOptimizedModelFilePath(a[1]);
        try (var s = env.createSession(a[0], so)) { System.out.println("ORT " + env.getVersion() + " wrote " + a[1]); }
    }
}
