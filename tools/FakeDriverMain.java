/**
 * Builds engine-cuda's fake libcuda.so.1 (its test class FakeDriver) into the folder given, for
 * tools/gpu_sweep_emu.py: java -cp engine-cuda/target/test-classes:engine-cuda/target/classes:kernels/target/classes
 * tools/FakeDriverMain.java DIR
 */
public class FakeDriverMain {
    public static void main(String[] args) throws Exception {
        java.nio.file.Files.createDirectories(java.nio.file.Path.of(args[0]));
        java.lang.reflect.Method m =
                Class.forName("io.attn.cuda.FakeDriver").getDeclaredMethod("build", java.nio.file.Path.class);
        m.setAccessible(true);
        System.out.println(m.invoke(null, java.nio.file.Path.of(args[0])));
    }
}
