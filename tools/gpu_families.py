#!/usr/bin/env python3
"""Every model family of tests/families through `attn embed` on one device, judged by sentence-transformers.

Issue 35's check "the CUDA backend runs the same, on a real GPU when one is available": each folder of
tests/families (seeded random weights, made by tools/make_families.py) holds expected.json with the texts and
sentence-transformers 6's pooled vectors for every prompt it was encoded with. For each folder and each of those
encodings this runs the attn CLI (`attn embed --model DIR --device D`, the prompt given as --prompt-name, or
--prompt "" for none; once more without either for the model's default prompt) and compares every text's vector
with the same bounds as the JUnit FamiliesTest on the CPU: cosine >= 0.99999 and max |attn - st| <= 1e-4 x norm.
A folder with tasks.json instead (jina-v3-hub: a task LoRA model, tools/make_jina_v3.py) runs `attn embed --task T`
for each task it holds (--prompt "" for none), merged and with `--task-adapters share`, against that task's
sentence-transformers vectors.

  tools/gpu_families.py --attn ./attn --device cuda [--families tests/families] [--out families.json]
                        [--precision fp32] [--budget-s 240] [--only bert,qwen3]

Needs only the Python standard library (the vectors are read from attn's .jsonl output). Prints one line per family
and a last line "families: N of M ok"; exit 0 when every family passed, 1 when one failed (a bound, a crash, an error
line), 2 on bad arguments. On a machine without a GPU, --device cpu checks the same pipeline (CI's dry run does).
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time

COSINE, ABS_BOUND = 0.99999, 1e-4


def compare(want, got):
    """(lowest cosine, worst max|diff| / norm, problem or None) over the texts."""
    if len(want) != len(got):
        return 0.0, math.inf, "%d vectors, expected %d" % (len(got), len(want))
    lowest, worst_rel = 1.0, 0.0
    for i, (w, g) in enumerate(zip(want, got)):
        if len(w) != len(g):
            return 0.0, math.inf, "text %d: dimension %d, expected %d" % (i, len(g), len(w))
        dot = sum(a * b for a, b in zip(w, g))
        nw = math.sqrt(sum(a * a for a in w))
        ng = math.sqrt(sum(b * b for b in g))
        cos = dot / (nw * ng) if nw > 0 and ng > 0 else (1.0 if nw == ng else 0.0)
        rel = max(abs(a - b) for a, b in zip(w, g)) / max(nw, 1e-30)
        lowest, worst_rel = min(lowest, cos), max(worst_rel, rel)
    problem = None
    if lowest < COSINE or worst_rel > ABS_BOUND:
        problem = "lowest cosine %.7f (bound %.5f), max |diff| %.2e x norm (bound %.0e)" % (
            lowest, COSINE, worst_rel, ABS_BOUND)
    return lowest, worst_rel, problem


def embed(attn, folder, texts_file, out_file, device, precision, prompt_args, timeout):
    cmd = [attn, "embed", "--model", folder, "--input", texts_file, "--text-field", "text", "--output", out_file,
           "--device", device, "--precision", precision] + prompt_args
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        return None, "exit %d: %s" % (r.returncode, (r.stderr.strip().splitlines() or ["(no output)"])[-1][:200])
    got = {}
    with open(out_file, encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            got[row["index"]] = row["embedding"]
    return [got[i] for i in sorted(got)], None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--attn", required=True, help="the attn launcher")
    ap.add_argument("--device", required=True, choices=["cpu", "cuda", "auto"])
    ap.add_argument("--families", default=None, help="default: tests/families beside this script's repository")
    ap.add_argument("--precision", default="fp32")
    ap.add_argument("--out", default=None, help="JSON of every family's figures")
    ap.add_argument("--budget-s", type=float, default=240.0)
    ap.add_argument("--only", default=None, help="comma-separated folder names (default: every folder)")
    a = ap.parse_args()
    root = a.families or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "families")
    if not os.path.isdir(root):
        print("gpu_families: no families folder %s" % root, file=sys.stderr)
        return 2
    # expected.json: a family (make_families.py and the like); tasks.json: a task LoRA model, one run per task
    # (tools/make_jina_v3.py: jina-v3-hub), each `attn embed --task T` against that task's sentence-transformers vectors
    folders = sorted(d for d in os.listdir(root)
                     if any(os.path.isfile(os.path.join(root, d, f)) for f in ("expected.json", "tasks.json")))
    if a.only:
        want = a.only.split(",")
        missing = [w for w in want if w not in folders]
        if missing:
            print("gpu_families: no family %s under %s" % (", ".join(missing), root), file=sys.stderr)
            return 2
        folders = [f for f in folders if f in want]
    if not folders:
        print("gpu_families: no folder with expected.json or tasks.json under %s" % root, file=sys.stderr)
        return 2
    t0, rows, ok = time.time(), [], 0
    with tempfile.TemporaryDirectory() as tmp:
        for name in folders:
            folder = os.path.join(root, name)
            row = {"family": name, "device": a.device, "precision": a.precision, "encodings": []}
            left = a.budget_s - (time.time() - t0)
            if left < 10:
                row["error"] = "no time left in the budget"
                rows.append(row)
                print("%-14s SKIPPED (budget)" % name, flush=True)
                continue
            tasks = not os.path.isfile(os.path.join(folder, "expected.json"))
            with open(os.path.join(folder, "tasks.json" if tasks else "expected.json"), encoding="utf-8") as f:
                x = json.load(f)
            texts = os.path.join(tmp, name + ".jsonl")
            with open(texts, "w", encoding="utf-8") as f:
                for t in x["texts"]:
                    f.write(json.dumps({"text": t}, ensure_ascii=False) + "\n")
            runs = []
            for run in x["runs"] if tasks else []:
                t = run["task"]
                runs.append(("task %s" % t, ["--task", t] if t else ["--prompt", ""], run["embeddings"]))
                if t:  # the same task with its adapter beside the weights (attn serve's mode for several tasks)
                    runs.append(("task %s shared" % t, ["--task", t, "--task-adapters", "share"], run["embeddings"]))
            for enc in [] if tasks else x["encodings"]:
                pn = enc.get("prompt_name")
                runs.append(("prompt %s" % pn, ["--prompt-name", pn] if pn else ["--prompt", ""], enc["embeddings"]))
                if pn == x.get("default_encoding_prompt_name"):
                    runs.append(("the default prompt (%s)" % pn, [], enc["embeddings"]))
            problems = []
            for label, args, want in runs:
                out = os.path.join(tmp, "%s-%d.jsonl" % (name, len(row["encodings"])))
                try:
                    got, err = embed(a.attn, folder, texts, out, a.device, a.precision, args,
                                     max(10.0, a.budget_s - (time.time() - t0)))
                except subprocess.TimeoutExpired:
                    got, err = None, "timed out"
                if err:
                    problems.append("%s: %s" % (label, err))
                    row["encodings"].append({"encoding": label, "error": err})
                    continue
                lowest, rel, problem = compare(want, got)
                row["encodings"].append({"encoding": label, "texts": len(got), "lowest_cosine": lowest,
                                         "max_abs_over_norm": rel})
                if problem:
                    problems.append("%s: %s" % (label, problem))
            row["ok"] = not problems
            if problems:
                row["problems"] = problems
            ok += row["ok"]
            rows.append(row)
            done = [e for e in row["encodings"] if "lowest_cosine" in e]
            print("%-14s %s  %d encodings, lowest cosine %s, max |diff| %s x norm%s" % (
                name, "ok    " if row["ok"] else "FAILED", len(row["encodings"]),
                "%.7f" % min(e["lowest_cosine"] for e in done) if done else "-",
                "%.1e" % max(e["max_abs_over_norm"] for e in done) if done else "-",
                "" if row["ok"] else "; " + "; ".join(problems)[:300]), flush=True)
    summary = {"device": a.device, "precision": a.precision, "families": len(folders), "ok": ok,
               "bounds": {"cosine": COSINE, "max_abs_over_norm": ABS_BOUND}, "rows": rows,
               "seconds": round(time.time() - t0, 1)}
    if a.out:
        with open(a.out, "w", encoding="utf-8") as f:
            json.dump(summary, f, indent=1)
    print("families: %d of %d ok on %s (%s), %.0f s" % (ok, len(folders), a.device, a.precision, time.time() - t0))
    return 0 if ok == len(folders) else 1


if __name__ == "__main__":
    sys.exit(main())
