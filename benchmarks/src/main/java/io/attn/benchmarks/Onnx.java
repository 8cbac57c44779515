package io.attn.benchmarks;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * A minimal ONNX model writer: the protobuf bytes of a {@code ModelProto} written by hand (no onnx or protobuf
 * dependency). Field numbers are those of {@code onnx/onnx.proto}: ModelProto {ir_version 1, graph 7, opset_import 8},
 * GraphProto {node 1, name 2, initializer 5, input 11, output 12}, NodeProto {input 1, output 2, name 3, op_type 4,
 * attribute 5, domain 7}, AttributeProto {name 1, f 2, i 3, type 20 (FLOAT 1, INT 2)}, TensorProto {dims 1, data_type
 * 2 (FLOAT 1), name 8, raw_data 9 (little-endian)}, ValueInfoProto {name 1, type 2}, TypeProto {tensor_type 1},
 * TypeProto.Tensor {elem_type 1, shape 2}, TensorShapeProto {dim 1}, Dimension {dim_value 1}, OperatorSetIdProto
 * {domain 1, version 2}.
 */
final class Onnx {
    private final List<byte[]> nodes = new ArrayList<>(), inits = new ArrayList<>();
    private final List<byte[]> inputs = new ArrayList<>(), outputs = new ArrayList<>();
    private int count;

    /** A graph input of float type. */
    Onnx input(String name, long... dims) {
        inputs.add(valueInfo(name, dims));
        return this;
    }

    /** A graph output of float type. */
    Onnx output(String name, long... dims) {
        outputs.add(valueInfo(name, dims));
        return this;
    }

    /** A float initializer (weights), stored as raw little-endian data. */
    Onnx initializer(String name, float[] data, long... dims) {
        Pb t = new Pb();
        for (long d : dims) t.varint(1, d);
        t.varint(2, 1);
        t.string(8, name);
        ByteBuffer bb = ByteBuffer.allocate(4 * data.length).order(ByteOrder.LITTLE_ENDIAN);
        for (float f : data) bb.putFloat(f);
        t.bytes(9, bb.array());
        inits.add(t.toBytes());
        return this;
    }

    /**
     * A node; {@code attrs} are (name, value) pairs, an Integer/Long value an INT attribute, a Float a FLOAT one, an int[] an INTS one (AttributeProto ints 8, type INTS 7). The
     * domain is {@code com.microsoft} for op types given as {@code "com.microsoft:Op"}.
     */
    Onnx node(String opType, String[] in, String[] out, Object... attrs) {
        Pb n = new Pb();
        for (String s : in) n.string(1, s);
        for (String s : out) n.string(2, s);
        n.string(3, "n" + count++);
        String domain = "";
        int colon = opType.indexOf(':');
        if (colon >= 0) {
            domain = opType.substring(0, colon);
            opType = opType.substring(colon + 1);
        }
        n.string(4, opType);
        for (int i = 0; i < attrs.length; i += 2) {
            Pb a = new Pb();
            a.string(1, (String) attrs[i]);
            if (attrs[i + 1] instanceof int[] ints) {
                for (int v : ints) a.varint(8, v);
                a.varint(20, 7);
            } else if (attrs[i + 1] instanceof Float f) {
                a.fixed32(2, Float.floatToIntBits(f));
                a.varint(20, 1);
            } else {
                a.varint(3, ((Number) attrs[i + 1]).longValue());
                a.varint(20, 2);
            }
            n.bytes(5, a.toBytes());
        }
        if (!domain.isEmpty()) n.string(7, domain);
        nodes.add(n.toBytes());
        return this;
    }

    /** The serialised model (IR version 8, opsets: default 17, com.microsoft 1). */
    byte[] toBytes() {
        Pb g = new Pb();
        for (byte[] n : nodes) g.bytes(1, n);
        g.string(2, "attn-bench");
        for (byte[] t : inits) g.bytes(5, t);
        for (byte[] v : inputs) g.bytes(11, v);
        for (byte[] v : outputs) g.bytes(12, v);
        Pb m = new Pb();
        m.varint(1, 8);
        m.bytes(7, g.toBytes());
        m.bytes(8, new Pb().string(1, "").varint(2, 17).toBytes());
        m.bytes(8, new Pb().string(1, "com.microsoft").varint(2, 1).toBytes());
        return m.toBytes();
    }

    private static byte[] valueInfo(String name, long... dims) {
        Pb shape = new Pb();
        for (long d : dims) shape.bytes(1, new Pb().varint(1, d).toBytes());
        Pb tensor = new Pb().varint(1, 1).bytes(2, shape.toBytes());
        Pb type = new Pb().bytes(1, tensor.toBytes());
        return new Pb().string(1, name).bytes(2, type.toBytes()).toBytes();
    }

    /** Protobuf wire format: varint (type 0), fixed32 (type 5), length-delimited (type 2) fields. */
    private static final class Pb {
        private final ByteArrayOutputStream out = new ByteArrayOutputStream();

        private void raw(long v) {
            while ((v & ~0x7FL) != 0) {
                out.write((int) ((v & 0x7F) | 0x80));
                v >>>= 7;
            }
            out.write((int) v);
        }

        Pb varint(int field, long v) {
            raw((long) field << 3);
            raw(v);
            return this;
        }

        Pb fixed32(int field, int v) {
            raw(((long) field << 3) | 5);
            for (int i = 0; i < 4; i++) out.write((v >>> (8 * i)) & 0xFF);
            return this;
        }

        Pb bytes(int field, byte[] b) {
            raw(((long) field << 3) | 2);
            raw(b.length);
            out.write(b, 0, b.length);
            return this;
        }

        Pb string(int field, String s) {
            return bytes(field, s.getBytes(StandardCharsets.UTF_8));
        }

        byte[] toBytes() {
            return out.toByteArray();
        }
    }
}
