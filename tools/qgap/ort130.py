import os
QDIR = os.environ.get("QGAP", "/tmp/qgap")
import sys, numpy as np, onnxruntime as ort
name, cls = sys.argv[1], sys.argv[2] == "cls"
ids = [list(map(int, l.split())) for l in open(f"{QDIR}/{name}-ids.txt")]
def load(f): return [np.array(list(map(float, l.split())), dtype=np.float64) if l.strip() else None for l in open(f)]
attn = load(f"{QDIR}/{name}-attn.txt"); l4j = load(f"{QDIR}/{name}-l4j.txt")
java = {k: load(f"{QDIR}/{name}-ortjava-{k}.txt") for k in ["default", "NO_OPT"]}
def cos(a, b): return float(a @ b / np.sqrt((a @ a) * (b @ b)))
def summ(c): c = sorted(c); return f"median {c[len(c)//2]:.7f} worst {c[0]:.7f}"
print("ORT", ort.__version__)
levels = {"DISABLE_ALL": ort.GraphOptimizationLevel.ORT_DISABLE_ALL, "BASIC": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
          "EXTENDED": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED, "ALL": ort.GraphOptimizationLevel.ORT_ENABLE_ALL}
for lv, v in levels.items():
    so = ort.SessionOptions(); so.graph_optimization_level = v; so.intra_op_num_threads = 2
    so.optimized_model_filepath = f"{QDIR}/{name}-py130-{lv}.onnx"
    s = ort.InferenceSession(f"{QDIR}/res/{name}.onnx", so, providers=["CPUExecutionProvider"])
    names = [i.name for i in s.get_inputs()]
    out = []
    for t in ids:
        x = np.array([t], dtype=np.int64); feed = {"input_ids": x, "attention_mask": np.ones_like(x)}
        if "token_type_ids" in names: feed["token_type_ids"] = np.zeros_like(x)
        h = s.run(None, feed)[0][0].astype(np.float64)
        p = h[0] if cls else h.mean(0)   # float64 pooling; cosine is scale-free
        out.append(p)
    print(lv, "vs attn:", summ([cos(a, b) for a, b in zip(out, attn)]),
          "| vs l4j:", summ([cos(a, b) for a, b in zip(out, l4j) if b is not None]),
          "| vs ORT-Java1.20 default:", summ([cos(a, b) for a, b in zip(out, java["default"])]),
          "| vs ORT-Java1.20 NO_OPT:", summ([cos(a, b) for a, b in zip(out, java["NO_OPT"])]))
