import os
QDIR = os.environ.get("QGAP", "/tmp/qgap")
import sys, numpy as np, onnx, onnxruntime as ort
from onnx import helper, numpy_helper, TensorProto
name = sys.argv[1]; text_idx = [int(t) for t in sys.argv[2].split(",")]
m = onnx.load(f"{QDIR}/res/{name}.onnx")
inits = {i.name: numpy_helper.to_array(i) for i in m.graph.initializer}
ids = [list(map(int, l.split())) for l in open(f"{QDIR}/{name}-ids.txt")]
# the Linears of layer 0 and layer 11: DQL input -> MatMulInteger weight/scale/zp, bias
nodes = list(m.graph.node)
linears = []
for n in nodes:
    if n.op_type != "MatMulInteger": continue
    if not any(f"layer.{L}/" in n.name for L in (0, 11)): continue
    dql = [d for d in nodes if d.op_type == "DynamicQuantizeLinear" and d.output[0] == n.input[0]][0]
    wname = n.input[1]; wscale = wname.replace("_quantized", "_scale"); wzp = n.input[3]
    add = [a for a in nodes if a.op_type == "Add" and a.input[1] == n.output[0].replace("_output_quantized", "")][0]
    linears.append((n.name, dql.input[0], inits[wname], inits[wscale], inits[wzp], inits[add.input[0]]))
# activations from the original graph, no optimization
m2 = onnx.load(f"{QDIR}/res/{name}.onnx")
for _, x, *_ in linears: m2.graph.output.append(helper.make_tensor_value_info(x, TensorProto.FLOAT, None))
so = ort.SessionOptions(); so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
s = ort.InferenceSession(m2.SerializeToString(), so, providers=["CPUExecutionProvider"])
innames = [i.name for i in s.get_inputs()]
outs = [o.name for o in s.get_outputs()]
def models(W, ws, wzp, b):
    K, N = W.shape
    init = [numpy_helper.from_array(W, "W"), numpy_helper.from_array(ws, "ws"), numpy_helper.from_array(wzp, "wzp"), numpy_helper.from_array(b, "b")]
    X = helper.make_tensor_value_info("X", TensorProto.FLOAT, [None, K]); Y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, [None, N])
    ops = [helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)]
    A = helper.make_graph([helper.make_node("DynamicQuantizeLinear", ["X"], ["xq", "xs", "xzp"]),
        helper.make_node("MatMulInteger", ["xq", "W", "xzp", "wzp"], ["acc"]), helper.make_node("Cast", ["acc"], ["accf"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["xs", "ws"], ["sc"]), helper.make_node("Mul", ["accf", "sc"], ["mm"]), helper.make_node("Add", ["b", "mm"], ["Y"])], "A", [X], [Y], init)
    B = helper.make_graph([helper.make_node("DynamicQuantizeMatMul", ["X", "W", "ws", "wzp", "b"], ["Y"], domain="com.microsoft")], "B", [X], [Y], init)
    C = helper.make_graph([helper.make_node("DynamicQuantizeLinear", ["X"], ["xq", "xs", "xzp"]),
        helper.make_node("MatMulIntegerToFloat", ["xq", "W", "xs", "ws", "xzp", "wzp", "b"], ["Y"], domain="com.microsoft")], "C", [X], [Y], init)
    return {k: helper.make_model(g, opset_imports=ops, ir_version=8) for k, g in (("A", A), ("B", B), ("C", C))}
def emulate(x, W, ws, wzp, b):
    x = x.astype(np.float32)
    mn = np.float32(min(x.min(), 0)); mx = np.float32(max(x.max(), 0))
    sc = np.float32((mx - mn) / np.float32(255)) if mx != mn else np.float32(1)
    zp = np.float32(np.rint(np.clip(np.float32(0) - mn / sc, 0, 255)))
    q = np.clip(np.rint(x / sc) + zp, 0, 255).astype(np.int64)
    acc = (q - int(zp)) @ (W.astype(np.int64) - wzp.astype(np.int64))
    return acc.astype(np.float32) * (sc * ws.astype(np.float32)) + b, acc, sc, zp, q
import os
os.makedirs(QDIR + "/single", exist_ok=True)
manifest = open(QDIR + "/single/manifest.txt", "w")
for ti in text_idx:
    x = np.array([ids[ti]], dtype=np.int64); feed = {"input_ids": x, "attention_mask": np.ones_like(x)}
    if "token_type_ids" in innames: feed["token_type_ids"] = np.zeros_like(x)
    r = dict(zip(outs, s.run(None, feed)))
    for li, (nname, xname, W, ws, wzp, b) in enumerate(linears):
        X = r[xname][0].astype(np.float32)
        tag = f"t{ti}-l{li}"
        X.tofile(f"{QDIR}/single/{tag}-X.bin")
        ref, acc, sc, zp, q = emulate(X, W, ws, wzp, b)
        ref.astype(np.float32).tofile(f"{QDIR}/single/{tag}-ref.bin")
        for k, mod in models(W, ws, wzp, b).items():
            p = f"{QDIR}/single/l{li}-{k}.onnx"
            if not os.path.exists(p): onnx.save(mod, p)
            so2 = ort.SessionOptions(); so2.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
            y = ort.InferenceSession(p, so2, providers=["CPUExecutionProvider"]).run(None, {"X": X})[0]
            d = np.abs(y - ref).max()
            print(f"{tag} {nname.split('/encoder/')[1]:45s} K={W.shape[0]} x[{X.min():.3g},{X.max():.3g}] zp={int(zp)} ORT{ort.__version__} {k}: max|y-emul| {d:.3g}")
        manifest.write(f"{tag} {li} {X.shape[0]} {X.shape[1]} {W.shape[1]}\n")
