"""Every tensor of an optimized graph as an output, and the first tensors where two ONNX Runtime versions differ.

python allout.py prepare OPT.onnx ALLOUT.onnx NAME TEXT   # writes ALLOUT.onnx and $QGAP/ids.bin (text TEXT's ids)
python allout.py compare ALLOUT.onnx DUMP_DIR             # this ONNX Runtime (no optimizations) vs AllOut.java's dump
"""
import os, sys, numpy as np, onnx, onnxruntime as ort

QDIR = os.environ.get("QGAP", "/tmp/qgap")
if sys.argv[1] == "prepare":
    m = onnx.load(sys.argv[2])
    have = {o.name for o in m.graph.output}
    vi = {v.name: v for v in m.graph.value_info}
    for n in m.graph.node:
        for o in n.output:
            if o and o not in have and o in vi: m.graph.output.append(vi[o])
    onnx.save(m, sys.argv[3])
    ids = [list(map(int, l.split())) for l in open(f"{QDIR}/{sys.argv[4]}-ids.txt")]
    np.array(ids[int(sys.argv[5])], dtype=np.int64).tofile(f"{QDIR}/ids.bin")
else:
    m = onnx.load(sys.argv[2]); prod = {o: n for n in m.graph.node for o in n.output}
    so = ort.SessionOptions(); so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    s = ort.InferenceSession(sys.argv[2], so, providers=["CPUExecutionProvider"])
    ids = np.fromfile(f"{QDIR}/ids.bin", dtype=np.int64)[None]
    feed = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
    if "token_type_ids" in [i.name for i in s.get_inputs()]: feed["token_type_ids"] = np.zeros_like(ids)
    shown = 0
    for i, (o, y) in enumerate(zip(s.get_outputs(), s.run(None, feed))):
        j = np.fromfile(f"{sys.argv[3]}/{i:04d}.bin", dtype=y.dtype).reshape(y.shape)
        if (j != y).any() and shown < 12:
            node = prod.get(o.name)
            print(i, node.op_type if node else "-", o.name, y.shape, "max |diff|", float(np.abs(j.astype(np.float64) - y).max()),
                  "values that differ", int((j != y).sum()), "of", y.size)
            shown += 1
