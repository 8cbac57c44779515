#!/usr/bin/env python3
"""Writes the seed corpus of the Jazzer fuzz tests (engine-core ParserFuzzTest) from the io fixtures plus
hand-made hostile files. Run from the repository root; the output is committed, tests do not need Python."""
import io, json, os, shutil, struct, zipfile

FIX = "engine-core/src/test/resources/fixtures"
OUT = "engine-core/src/test/resources/io/attn/io/ParserFuzzTestInputs"


def npy(d, data=b"", major=1):
    prefix = 10 if major == 1 else 12
    total = (prefix + len(d) + 1 + 63) // 64 * 64
    hl = total - prefix
    h = b"\x93NUMPY" + bytes([major, 0]) + (struct.pack("<H", hl) if major == 1 else struct.pack("<I", hl))
    return h + (d.encode() + b" " * (hl - len(d) - 1) + b"\n") + data


def st(header, data=b""):
    h = json.dumps(header).encode() if not isinstance(header, bytes) else header
    h += b" " * (-len(h) % 8)
    return struct.pack("<Q", len(h)) + h + data


def put(method, name, b):
    os.makedirs(f"{OUT}/{method}", exist_ok=True)
    with open(f"{OUT}/{method}/{name}", "wb") as f:
        f.write(b)


shutil.rmtree(OUT, ignore_errors=True)
f6 = struct.pack("<6f", *range(6))
for fn in sorted(os.listdir(FIX)):
    b = open(f"{FIX}/{fn}", "rb").read()
    kind = {"npy": "npy", "npz": "npz", "safetensors": "safetensors", "txt": "wordVectors"}.get(fn.rsplit(".", 1)[-1])
    if kind:
        put(kind, fn, b)
        put(kind, "trunc_" + fn, b[: len(b) // 2])

# npy: lying headers
put("npy", "huge_shape", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000, 1000000000), }", f6))
put("npy", "neg_dim", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (-2, 3), }", f6))
put("npy", "overflow_dim", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999, 3), }", f6))
put("npy", "bad_dtype", npy("{'descr': '<c16', 'fortran_order': False, 'shape': (2, 3), }", f6))
put("npy", "object_dtype", npy("{'descr': '|O', 'fortran_order': False, 'shape': (2, 3), }", f6))
put("npy", "short_data", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (4, 3), }", f6))
put("npy", "huge_hlen", b"\x93NUMPY\x02\x00" + struct.pack("<I", 0x7FFFFFFF) + b"{}")
put("npy", "not_npy", b"PK\x03\x04garbage")
put("npy", "latin1_header", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (6,), 'x\xe9': 1}", f6))

# npz: a valid one, bad entries, a small zip bomb
def z(entries, method=zipfile.ZIP_DEFLATED):
    bio = io.BytesIO()
    with zipfile.ZipFile(bio, "w", method) as zf:
        for n, b in entries:
            zf.writestr(n, b)
    return bio.getvalue()

good = npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", f6)
put("npz", "good_deflated", z([("a.npy", good), ("b.npy", good)]))
put("npz", "not_npy_entry", z([("a.txt", b"hello")]))
put("npz", "bad_entry", z([("a.npy", b"\x93NUMPY\x01\x00\xff\xff")]))
put("npz", "duplicate", z([("a.npy", good), ("a.npy", good)], zipfile.ZIP_STORED))
put("npz", "bomb", z([("a.npy", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (4000000,), }") + bytes(16_000_000))]))
put("npz", "empty_zip", z([]))

# safetensors
put("safetensors", "good", st({"__metadata__": {"config": '{"module":"MultiheadAttention","embed_dim":2,"num_heads":1}'},
                              "a": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]}}, f6))
put("safetensors", "huge_shape", st({"a": {"dtype": "F32", "shape": [1 << 40, 1 << 40], "data_offsets": [0, 24]}}, f6))
put("safetensors", "overlap", st({"a": {"dtype": "F32", "shape": [6], "data_offsets": [0, 24]},
                                 "b": {"dtype": "F32", "shape": [3], "data_offsets": [12, 24]}}, f6))
put("safetensors", "out_of_range", st({"a": {"dtype": "F32", "shape": [6], "data_offsets": [0, 2400]}}, f6))
put("safetensors", "neg_offsets", st({"a": {"dtype": "F32", "shape": [6], "data_offsets": [-24, 0]}}, f6))
put("safetensors", "bad_dtype", st({"a": {"dtype": "C64", "shape": [3], "data_offsets": [0, 24]}}, f6))
put("safetensors", "dup_name", st(b'{"a":{"dtype":"F32","shape":[3],"data_offsets":[0,12]},"a":{"dtype":"F32","shape":[3],"data_offsets":[12,24]}}', f6))
put("safetensors", "huge_header_len", struct.pack("<Q", 1 << 62) + b"{}")
put("safetensors", "deep_json", st(b"[" * 5000 + b"]" * 5000))
put("safetensors", "non_utf8", st(b'{"a\xff":{"dtype":"F32","shape":[6],"data_offsets":[0,24]}}', f6))

# word vectors
put("wordVectors", "good", b"2 3\nthe 0.1 0.2 0.3\ncat 1 2 3\n")
put("wordVectors", "ragged", b"the 0.1 0.2 0.3\ncat 1 2\n")
put("wordVectors", "non_utf8", b"the 0.1 0.2\ncaf\xe9 1 2\n")
put("wordVectors", "nan", b"the NaN 0.2\ncat inf 2\n")
put("wordVectors", "lying_count", b"99999999999 99999999\nthe 1 2\n")
put("wordVectors", "dup", b"the 1 2\nthe 3 4\n")
put("wordVectors", "long_line", b"w " + b"1 " * 5000 + b"\n")

# JSON and model configs
configs = [
    {"module": "MultiheadAttention", "embed_dim": 64, "num_heads": 4, "bias": True},
    {"module": "MultiheadAttention", "embed_dim": 10, "num_heads": 3},
    {"module": "TransformerEncoderLayer", "d_model": 64, "nhead": 4, "dim_feedforward": 128, "activation": "gelu",
     "layer_norm_eps": 1e-5, "norm_first": True},
    {"module": "TransformerEncoder", "d_model": 8, "nhead": 2, "num_layers": 2, "final_norm": True},
    {"module": "Transformer", "d_model": 8, "nhead": 2, "num_encoder_layers": 1, "num_decoder_layers": 1},
    {"module": "SelfAttention", "embed_size": -4},
    {"module": "TransformerDecoderLayer", "d_model": 1e300, "nhead": 0},
    {"module": "Nope"},
    {"module": "MultiheadAttention", "embed_dim": 4, "num_heads": 2, "typo": 1},
]
for i, c in enumerate(configs):
    put("modelConfig", f"config{i}.json", json.dumps(c).encode())
    put("json", f"config{i}.json", json.dumps(c).encode())
for name, b in {"deep": b"[" * 3000, "bad_utf8": b'{"a": "\xc3\x28"}', "bom": b'\xef\xbb\xbf{"a":1}',
                "surrogate": b'"\\ud800"', "big_number": b"1e999999", "trailing": b"{} {}",
                "unterminated": b'{"a": "abc', "dup_key": b'{"a":1,"a":2}', "empty": b""}.items():
    put("json", name, b)
    put("modelConfig", name, b)
