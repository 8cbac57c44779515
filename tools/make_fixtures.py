#!/usr/bin/env python3
"""Writes the io test fixtures and their manifest (expected values computed by numpy).

Usage: python3 tools/make_fixtures.py   (from the repository root; needs numpy only)

Output: engine-core/src/test/resources/fixtures/*  plus manifest.json, which lists for every fixture the shape and
the full flat C-order values as float64 of the float32 the Java reader must produce (non-finite values as the strings
"nan", "inf", "-inf"). The files are tiny (KBs) and committed; rerun only to change them.
"""
import io
import json
import os
import struct
import zipfile

import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "engine-core", "src", "test", "resources", "fixtures")


def enc(v):
    v = float(v)
    if np.isnan(v):
        return "nan"
    if np.isinf(v):
        return "inf" if v > 0 else "-inf"
    return v


def expect(a):
    """Shape and flat C-order values of a as float32 (what the reader returns), as float64 numbers."""
    f = np.array(np.asarray(a).astype(np.float32), order="C")  # (ascontiguousarray would make 0-d 1-d)
    return {"shape": list(f.shape), "values": [enc(x) for x in f.astype(np.float64).ravel(order="C")]}


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(20261121)
    man = {"npy": [], "npz": [], "safetensors": [], "wordvectors": []}

    def npy(name, a, version=None):
        path = os.path.join(OUT, name)
        if version is None:
            np.save(path, a, allow_pickle=False)
        else:
            with open(path, "wb") as f:
                np.lib.format.write_array(f, a, version=version, allow_pickle=False)
        e = expect(a)
        e["file"] = name
        man["npy"].append(e)

    npy("f4_2x3.npy", (np.arange(6, dtype=np.float32).reshape(2, 3) * 0.5 - 1).astype("<f4"))
    npy("f8_3x2.npy", rng.standard_normal((3, 2)).astype("<f8"))
    f16 = np.array([0.0, -0.0, 1.0, -2.5, 65504.0, 2.0**-24, 2.0**-14, 1023 * 2.0**-24, np.inf, -np.inf, np.nan, 0.1],
                   dtype="<f2")
    npy("f2_specials.npy", f16)
    npy("be_f4_2x2.npy", np.array([[1.5, -2.25], [3.0e-3, 1e10]], dtype=">f4"))
    npy("be_f2_3.npy", np.array([0.5, -7.0, 2.0**-20], dtype=">f2"))
    npy("be_i4_3.npy", np.array([1, -2, 70000], dtype=">i4"))
    npy("fortran_3x4.npy", np.asfortranarray(np.arange(12, dtype="<f4").reshape(3, 4)))
    npy("fortran_2x3x4.npy", np.asfortranarray(rng.standard_normal((2, 3, 4)).astype("<f4")))
    npy("v2_f4_4.npy", np.array([1, 2, 3, 4], dtype="<f4"), version=(2, 0))
    npy("v3_f4_2.npy", np.array([5, 6], dtype="<f4"), version=(3, 0))
    npy("scalar_0d.npy", np.array(3.25, dtype="<f4"))
    npy("empty_0x3.npy", np.zeros((0, 3), dtype="<f4"))
    npy("bool_2x4.npy", np.array([[True, False, True, True], [False, False, True, False]]))
    npy("i8_ids.npy", np.array([1, 2, 3, 100000, -5], dtype="<i8"))
    npy("i4_2x2.npy", np.array([[7, -8], [9, 2**31 - 1]], dtype="<i4"))
    npy("i2_3.npy", np.array([-32768, 0, 32767], dtype="<i2"))
    npy("i1_3.npy", np.array([-128, 0, 127], dtype="|i1"))
    npy("u1_3.npy", np.array([0, 128, 255], dtype="|u1"))

    arrays = {"a": rng.standard_normal((2, 3)).astype("<f4"),
              "b": np.arange(5, dtype="<f8"),
              "ids": np.array([[3, 1, 4]], dtype="<i8")}
    for name, fn in (("stored.npz", np.savez), ("compressed.npz", np.savez_compressed)):
        fn(os.path.join(OUT, name), **arrays)
        man["npz"].append({"file": name, "arrays": {k: expect(v) for k, v in arrays.items()}})

    # safetensors, by a spec-following writer (header padded with spaces to 8 bytes, contiguous offsets)
    def bf16(a):
        bits = np.asarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
        rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
        back = (rounded.astype(np.uint32) << 16).view(np.float32)
        return rounded.tobytes(), back

    st = [("w32", "F32", rng.standard_normal((2, 3)).astype("<f4")),
          ("h16", "F16", np.array([1.0, -0.5, 65504, 2.0**-24], dtype="<f2")),
          ("b16", "BF16", rng.standard_normal((3,)).astype(np.float32)),
          ("d64", "F64", np.array([[np.pi], [-1e-3]], dtype="<f8")),
          ("ids", "I64", np.array([0, 5, 123456], dtype="<i8")),
          ("mask", "BOOL", np.array([True, False, True])),
          ("scalar", "F32", np.array(2.5, dtype="<f4"))]
    config = {"model_type": "toy", "hidden_size": 6, "layers": [1, 2], "name": "caf\u00e9 \u2603"}
    meta = {"format": "pt", "config": json.dumps(config)}
    header = {"__metadata__": meta}
    blobs, at, expected = [], 0, {}
    for name, dt, a in st:
        if dt == "BF16":
            raw, back = bf16(a)
            expected[name] = expect(back)
        else:
            raw = np.ascontiguousarray(a).tobytes()
            expected[name] = expect(a)
        header[name] = {"dtype": dt, "shape": list(a.shape), "data_offsets": [at, at + len(raw)]}
        blobs.append(raw)
        at += len(raw)
    hj = json.dumps(header, ensure_ascii=False).encode("utf-8")
    hj += b" " * ((8 - len(hj) % 8) % 8)
    with open(os.path.join(OUT, "mixed.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(hj)) + hj + b"".join(blobs))
    man["safetensors"].append({"file": "mixed.safetensors", "tensors": expected, "metadata": meta,
                               "config": config, "order": [n for n, _, _ in st]})

    # word vectors: GloVe form (no header) and word2vec text form (header)
    words = ["the", "cat", "caf\u00e9", "don't", ",", "sat"]
    vecs = np.round(rng.standard_normal((len(words), 4)), 5).astype(np.float32)
    lines = [w + " " + " ".join("%.5f" % v for v in vec) for w, vec in zip(words, vecs)]
    dup = "cat " + " ".join("%.5f" % v for v in np.ones(4))  # duplicate: first wins
    with open(os.path.join(OUT, "glove_4d.txt"), "w", encoding="utf-8", newline="\n") as f:
        f.write("\n".join(lines[:3] + [dup] + lines[3:]) + "\n")
    with open(os.path.join(OUT, "w2v_4d.txt"), "w", encoding="utf-8", newline="\n") as f:
        f.write("%d 4\n" % len(words) + "\r\n".join(lines) + "\r\n")
    # expected vectors: numpy's float32 parse of the same decimal text
    wexp = {w: [float(np.float32(t)) for t in l.split(" ")[1:]] for w, l in zip(words, lines)}
    man["wordvectors"].append({"file": "glove_4d.txt", "dim": 4, "size": len(words), "duplicates": 1, "vectors": wexp})
    man["wordvectors"].append({"file": "w2v_4d.txt", "dim": 4, "size": len(words), "duplicates": 0, "vectors": wexp})

    with open(os.path.join(OUT, "manifest.json"), "w", encoding="utf-8") as f:
        json.dump(man, f, indent=1, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main()
