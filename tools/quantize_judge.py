"""The judge of `attn quantize` (issue 37): ONNX Runtime's own quantize_dynamic on the same weights.

For a model folder's safetensors, builds an ONNX graph holding each projection weight W (out, in) as the constant B =
W^T (in, out) of a MatMul and each embedding table as the constant of a Gather (the forms torch.onnx gives them), runs
onnxruntime.quantization.quantize_dynamic at its defaults (and with per_channel=True, and with reduce_range=True), and
writes what it made of each tensor to one safetensors file: '<variant>/<name>' (int8 (in, out) weights, uint8
tables), '<variant>/<name>_scale' (float, (1) or (out)), '<variant>/<name>_zero_point'. attn's QuantizeTest compares
attn quantize's tensors with these, value by value.

    python tools/quantize_judge.py tests/families/bert tests/quantized/bert-ort.safetensors
"""

import sys

import numpy as np
import onnx
import onnxruntime
from onnx import TensorProto, helper, numpy_helper
from onnxruntime.quantization import quantize_dynamic
from safetensors.numpy import load_file, save_file


def graph(weights):
    nodes, inits, outs = [], [], []
    ids = helper.make_tensor_value_info("ids", TensorProto.INT64, ["b"])
    for name, w in weights.items():
        if w.ndim != 2 or not name.endswith(".weight") or "LayerNorm" in name:
            continue
        if name.startswith(("pooler.", "classifier.")):  # a Linear on (B, E): torch.onnx makes it a Gemm, left float
            continue
        if "embeddings" in name:
            inits.append(numpy_helper.from_array(w, name))
            nodes.append(helper.make_node("Gather", [name, "ids"], [name + ".out"], name=name + ".gather"))
        else:
            b = np.ascontiguousarray(w.T)
            inits.append(numpy_helper.from_array(b, name))
            xi = name + ".x"
            # each MatMul's input of its own width: x1 broadcast against a zero row (the value does not matter)
            inits.append(numpy_helper.from_array(np.zeros((1, b.shape[0]), np.float32), name + ".zero"))
            nodes.append(helper.make_node("Add", ["x1", name + ".zero"], [xi], name=name + ".add"))
            nodes.append(helper.make_node("MatMul", [xi, name], [name + ".out"], name=name + ".matmul"))
        outs.append(helper.make_tensor_value_info(name + ".out", TensorProto.FLOAT, None))
    x1 = helper.make_tensor_value_info("x1", TensorProto.FLOAT, ["b", None])
    g = helper.make_graph(nodes, "judge", [x1, ids], outs, inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def main(folder, out):
    weights = load_file(folder + "/model.safetensors")
    model = graph(weights)
    result = {}
    for variant, kw in [("tensor", {}), ("channel", {"per_channel": True}), ("reduced", {"reduce_range": True})]:
        path = "/tmp/attn-quantize-judge-" + variant + ".onnx"
        quantize_dynamic(model, path, **kw)
        q = {i.name: numpy_helper.to_array(i) for i in onnx.load(path).graph.initializer}
        for name, w in weights.items():
            if name + "_quantized" in q:
                result[variant + "/" + name] = q[name + "_quantized"]
                result[variant + "/" + name + "_scale"] = np.atleast_1d(q[name + "_scale"]).astype(np.float32)
                result[variant + "/" + name + "_zero_point"] = np.atleast_1d(q[name + "_zero_point"])
    assert result, "nothing quantized"
    save_file(result, out, metadata={"onnxruntime": onnxruntime.__version__, "source": folder})
    print(out, len(result), "tensors, onnxruntime", onnxruntime.__version__)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
