import ai.onnxruntime.*;
import java.nio.*;
import java.nio.file.*;
import java.util.*;
public class AllOut {
    public static void main(String[] a) throws Exception {
        var env = OrtEnvironment.getEnvironment();
        var so = new OrtSession.SessionOptions(); so.setOptimizationLevel(OrtSession.SessionOptions.OptLevel.NO_OPT);
        var lb = ByteBuffer.wrap(Files.readAllBytes(Paths.get(a[1]))).order(ByteOrder.LITTLE_ENDIAN).asLongBuffer();
        long[] ids = new long[lb.remaining()]; lb.get(ids); long[] ones = new long[ids.length], zeros = new long[ids.length]; Arrays.fill(ones, 1);
        Path out = Paths.get(a[2]); Files.createDirectories(out);
        try (var s = env.createSession(a[0], so)) {
            long[] shape = {1, ids.length};
            Map<String, OnnxTensor> in = new HashMap<>();
            in.put("input_ids", OnnxTensor.createTensor(env, LongBuffer.wrap(ids), shape));
            in.put("attention_mask", OnnxTensor.createTensor(env, LongBuffer.wrap(ones), shape));
            if (s.getInputNames().contains("token_type_ids")) in.put("token_type_ids", OnnxTensor.createTensor(env, LongBuffer.wrap(zeros), shape));
            try (var r = s.run(in)) {
                int i = 0;
                for (var e : r) {
                    if (!(e.getValue() instanceof OnnxTensor t)) continue;
                    var info = t.getInfo();
                    ByteBuffer bb = ByteBuffer.allocate((int) (info.getNumElements() * (info.type == OnnxJavaType.FLOAT ? 4 : info.type == OnnxJavaType.INT64 ? 8 : info.type == OnnxJavaType.INT32 ? 4 : 1))).order(ByteOrder.LITTLE_ENDIAN);
                    switch (info.type) {
                        case FLOAT -> bb.asFloatBuffer().put(t.getFloatBuffer());
                        case INT64 -> bb.asLongBuffer().put(t.getLongBuffer());
                        case INT32 -> bb.asIntBuffer().put(t.getIntBuffer());
                        default -> bb.put(t.getByteBuffer());
                    }
                    Files.write(out.resolve(String.format("%04d.bin", i++)), bb.array());
                }
            }
        }
    }
}
