package io.attn.engine;

import io.attn.AttnException;
import io.attn.io.SafeTensors;
import io.attn.tensor.Shape;
import io.attn.tensor.Tensor;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.FloatBuffer;
import java.nio.file.Path;
import java.util.Map;

/**
 * Tensors from and to the host memory a service holds, and from and to {@code .safetensors} files: {@code float[]} (wrapped, not copied), {@link FloatBuffer} and
 * {@link MemorySegment} (copied). Data is row-major (C order). The source must hold exactly as many floats as the
 * shape has elements, else the call throws {@link AttnException} SHAPE_MISMATCH.
 *
 * <p>Stateless and thread-safe; the buffers and segments themselves are the caller's to guard.
 */
public final class Tensors {
    private Tensors() {}

    /** Wraps {@code data} (no copy; do not mutate it while a call reads it). */
    public static Tensor of(float[] data, int... shape) {
        if (data == null) throw AttnException.badInput("data is null");
        return Tensor.of(checked(data.length, shape), data);
    }

    /** Copies the buffer's {@code remaining()} floats, from its position; the position is not moved. */
    public static Tensor of(FloatBuffer data, int... shape) {
        if (data == null) throw AttnException.badInput("data is null");
        Shape s = checked(data.remaining(), shape);
        float[] a = new float[s.size()];
        data.duplicate().get(a);
        return Tensor.of(s, a);
    }

    /**
     * Copies a segment of {@code 4 * size} bytes holding floats in the platform's byte order ({@link
     * ValueLayout#JAVA_FLOAT}, as an {@code Arena}-allocated float array or a native library would write them).
     */
    public static Tensor of(MemorySegment data, int... shape) {
        if (data == null) throw AttnException.badInput("data is null");
        if (data.byteSize() % Float.BYTES != 0 || data.byteSize() / Float.BYTES > Integer.MAX_VALUE)
            throw AttnException.shape("memory segment of " + data.byteSize() + " bytes is not a float array");
        Shape s = checked(data.byteSize() / Float.BYTES, shape);
        float[] a = new float[s.size()];
        MemorySegment.copy(data, ValueLayout.JAVA_FLOAT_UNALIGNED, 0, a, 0, a.length);
        return Tensor.of(s, a);
    }

    /** Copies {@code t} into {@code dst} at its position, which moves past the data (as {@code put} does). */
    public static void copyInto(Tensor t, FloatBuffer dst) {
        if (dst.remaining() < t.size())
            throw AttnException.shape(
                    "buffer has room for " + dst.remaining() + " floats, the tensor " + t.shape() + " has " + t.size());
        dst.put(t.data(), 0, t.size());
    }

    /** Copies {@code t} into the start of {@code dst} as platform-order floats. */
    public static void copyInto(Tensor t, MemorySegment dst) {
        if (dst.byteSize() < (long) t.size() * Float.BYTES)
            throw AttnException.shape("memory segment of " + dst.byteSize() + " bytes is too small for tensor "
                    + t.shape() + " (" + (long) t.size() * Float.BYTES + " bytes)");
        MemorySegment.copy(t.data(), 0, dst, ValueLayout.JAVA_FLOAT_UNALIGNED, 0, t.size());
    }

    /**
     * Reads every tensor of a {@code .safetensors} file, in header order, widened to float32 (F16, BF16, F64 and the
     * integer dtypes too). Sizes are checked against the file before anything is allocated.
     *
     * @throws AttnException BAD_INPUT naming the file and the problem
     */
    public static Map<String, Tensor> readSafetensors(Path file) {
        if (file == null) throw AttnException.badInput("safetensors path is null");
        return SafeTensors.read(file).tensors();
    }

    /**
     * Writes float32 tensors (in map order) and optional string metadata as a {@code .safetensors} file, atomically: a
     * temporary file renamed into place, so a failure leaves no partial file.
     */
    public static void writeSafetensors(Path file, Map<String, Tensor> tensors, Map<String, String> metadata) {
        if (file == null || tensors == null) throw AttnException.badInput("safetensors path and tensors are required");
        SafeTensors.write(file, tensors, metadata == null ? Map.of() : metadata);
    }

    private static Shape checked(long elements, int[] shape) {
        if (shape == null || shape.length == 0) throw AttnException.badInput("a shape is required");
        Shape s = Shape.of(shape);
        if (s.size() != elements)
            throw AttnException.shape("data has " + elements + " floats but shape " + s + " needs " + s.size());
        return s;
    }
}
