package io.attn.text.onnx;

import io.attn.AttnException;
import io.attn.text.onnx.proto.OnnxProto.AttributeProto;
import io.attn.text.onnx.proto.OnnxProto.GraphProto;
import io.attn.text.onnx.proto.OnnxProto.NodeProto;
import io.attn.text.onnx.proto.OnnxProto.TensorProto;
import io.attn.text.onnx.proto.OnnxProto.TensorProto.DataType;
import io.attn.text.onnx.proto.OnnxProto.ValueInfoProto;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.Set;

/**
 * One ONNX graph indexed by tensor name: who produces and who consumes each tensor, and which tensors are constants
 * (initializers or outputs of {@code Constant} nodes). Not thread-safe; one read uses it, then drops it.
 */
final class Graph {
    private final ModelFile file;
    private final TensorData data;
    private final Map<String, TensorProto> initializers = new HashMap<>();
    private final Map<String, TensorProto> constantNodes = new HashMap<>();
    private final Map<String, NodeProto> producers = new HashMap<>();
    private final Map<String, List<NodeProto>> consumers = new HashMap<>();
    private final Set<String> inputs = new HashSet<>();

    Graph(ModelFile file, GraphProto graph) {
        this.file = file;
        this.data = new TensorData(file);
        for (TensorProto t : graph.getInitializerList())
            if (initializers.putIfAbsent(t.getName(), t) != null)
                throw file.bad("initializer '" + t.getName() + "' is defined twice");
        initializers.remove(""); // "" names no tensor: it stands for a missing input
        for (ValueInfoProto v : graph.getInputList())
            if (!v.getName().isEmpty() && !initializers.containsKey(v.getName())) inputs.add(v.getName());
        for (NodeProto n : graph.getNodeList()) {
            for (String out : n.getOutputList()) {
                if (out.isEmpty()) continue;
                if (producers.putIfAbsent(out, n) != null || initializers.containsKey(out) || inputs.contains(out))
                    throw file.bad("tensor '" + out + "' is produced twice");
            }
            for (String in : n.getInputList())
                if (!in.isEmpty())
                    consumers.computeIfAbsent(in, k -> new ArrayList<>()).add(n);
            if (is(n, "Constant") && n.getOutputCount() == 1)
                constantTensor(n).ifPresent(t -> constantNodes.put(output(n), t));
        }
    }

    AttnException bad(String what) {
        return file.bad(what);
    }

    /** The operator of a node: its type for the standard (default) domain, else "domain:type". */
    static String op(NodeProto n) {
        boolean standard = n.getDomain().isEmpty() || n.getDomain().equals("ai.onnx");
        return standard ? n.getOpType() : n.getDomain() + ":" + n.getOpType();
    }

    /** True for a node of the given standard operator. */
    static boolean is(NodeProto n, String op) {
        return op(n).equals(op);
    }

    Set<String> initializerNames() {
        return initializers.keySet();
    }

    boolean isInput(String name) {
        return inputs.contains(name);
    }

    Optional<NodeProto> producer(String name) {
        return Optional.ofNullable(producers.get(name));
    }

    List<NodeProto> consumers(String name) {
        return consumers.getOrDefault(name, List.of());
    }

    /** The consumers that use the tensor's values, not only its shape ({@code Shape} and {@code Size} are left out). */
    List<NodeProto> valueConsumers(String name) {
        return consumers(name).stream()
                .filter(n -> !is(n, "Shape") && !is(n, "Size"))
                .toList();
    }

    Optional<TensorProto> constant(String name) {
        TensorProto t = initializers.get(name);
        return t != null ? Optional.of(t) : Optional.ofNullable(constantNodes.get(name));
    }

    /** How messages name a constant: "initializer 'x'" or "constant 'x'". */
    String what(String name) {
        return (initializers.containsKey(name) ? "initializer '" : "constant '") + name + "'";
    }

    /** A constant that must exist: a one-line failure if it does not. */
    TensorProto required(String name) {
        return constant(name).orElseThrow(() -> bad(name + " is missing"));
    }

    /** The shape of a constant weight, which must hold floats. */
    int[] weightDims(String name) {
        return data.floatDims(required(name), what(name));
    }

    /** The shape of a constant of any type the reader knows (quantized weights: int8, uint8). */
    int[] anyDims(String name) {
        return data.dims(required(name), what(name));
    }

    /** The value of a one-element float constant; empty if the tensor is not one. */
    OptionalDouble scalar(String name) {
        Optional<TensorProto> t = constant(name);
        if (t.isEmpty() || !TensorData.isFloat(t.get())) return OptionalDouble.empty();
        if (Arrays.stream(data.dims(t.get(), what(name))).anyMatch(d -> d != 1)) return OptionalDouble.empty();
        return OptionalDouble.of(data.floats(t.get(), what(name))[0]);
    }

    /** The values of an integer constant; empty if the tensor is not one. */
    Optional<long[]> ints(String name) {
        Optional<TensorProto> t = constant(name);
        if (t.isEmpty() || TensorData.isFloat(t.get())) return Optional.empty();
        return Optional.of(data.longs(t.get(), what(name)));
    }

    static Optional<AttributeProto> attribute(NodeProto n, String name) {
        return n.getAttributeList().stream()
                .filter(a -> a.getName().equals(name))
                .findFirst();
    }

    static long intAttribute(NodeProto n, String name, long otherwise) {
        return attribute(n, name).map(AttributeProto::getI).orElse(otherwise);
    }

    static float floatAttribute(NodeProto n, String name, float otherwise) {
        return attribute(n, name).map(AttributeProto::getF).orElse(otherwise);
    }

    /** Input {@code i} of a node, or "" (no tensor) if it has fewer. */
    static String input(NodeProto n, int i) {
        return i < n.getInputCount() ? n.getInput(i) : "";
    }

    /** The first output of a node, or "" (no tensor) if it has none. */
    static String output(NodeProto n) {
        return n.getOutputCount() > 0 ? n.getOutput(0) : "";
    }

    /** The other input of a two-input node, given one of them. */
    static String otherInput(NodeProto n, String one) {
        return input(n, 0).equals(one) ? input(n, 1) : input(n, 0);
    }

    /** A Constant node's value as a tensor; empty for the kinds no BERT export uses (strings, sparse). */
    private static Optional<TensorProto> constantTensor(NodeProto n) {
        for (AttributeProto a : n.getAttributeList()) {
            TensorProto.Builder t = TensorProto.newBuilder().setName(output(n));
            switch (a.getName()) {
                case "value" -> {
                    return Optional.of(a.getT());
                }
                case "value_float" -> {
                    return Optional.of(t.setDataType(DataType.FLOAT_VALUE)
                            .addFloatData(a.getF())
                            .build());
                }
                case "value_floats" -> {
                    return Optional.of(t.setDataType(DataType.FLOAT_VALUE)
                            .addDims(a.getFloatsCount())
                            .addAllFloatData(a.getFloatsList())
                            .build());
                }
                case "value_int" -> {
                    return Optional.of(t.setDataType(DataType.INT64_VALUE)
                            .addInt64Data(a.getI())
                            .build());
                }
                case "value_ints" -> {
                    return Optional.of(t.setDataType(DataType.INT64_VALUE)
                            .addDims(a.getIntsCount())
                            .addAllInt64Data(a.getIntsList())
                            .build());
                }
                default -> {}
            }
        }
        return Optional.empty();
    }
}
