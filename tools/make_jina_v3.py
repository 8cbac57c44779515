#!/usr/bin/env python3
"""tests/families/jina-v3-hub: jina-embeddings-v3 as its hub folder holds it (jinaai/jina-embeddings-v3, written for
its remote code): `model_type` "xlm-roberta" with `position_embedding_type` "rotary" and `rotary_emb_base`, `auto_map`
to Jina AI's remote code, every linear layer and embedding table saved by torch.nn.utils.parametrize with its five
task LoRA adapters (`X.parametrizations.weight.original`, `.0.lora_A`, `.0.lora_B`, under `roberta.`), bfloat16
tensors, and a sentence-transformers `modules.json` whose first module is the model's own `custom_st.Transformer`.

The base weights, tokenizer and texts are the `jina-v3` fixture's (transformers' native jina_embeddings_v3, made by
make_families.py: run that first); this script draws the adapters. The remote code (LoRAParametrization.lora_forward)
runs task t with W + (lora_alpha / lora_rank) * delta_t, delta_t = lora_B[t] @ lora_A[t] for a linear layer (A: tasks
x r x in, B: tasks x out x r) and lora_A[t] @ lora_B[t] for an embedding table (A: tasks x rows x r, B: tasks x r x
width); without a task its adapters are off. The judge, per task (none, and three of the five): those merged weights
(float32, from the bfloat16 file's values: the remote code's arithmetic with the model loaded in float32) saved as a
native jina_embeddings_v3 folder, run by transformers (last hidden state) and sentence-transformers (encode with the
task's prompt, as Jina's API applies a task's instruction with its adapter). The script checks that the tasks tell
apart: every task's hidden states are more than 1e-2 from the base model's.

Written: the folder, hidden-<task>.npy (the last hidden state per task, zero at padding) and tasks.json (texts,
tokens, per task its prompt and sentence-transformers embeddings; not expected.json: the folder is not one of
FamiliesTest's, whose format it does not follow).

usage: python3 tools/make_jina_v3.py   (reads tests/families/jina-v3, writes tests/families/jina-v3-hub; seconds)
       python3 tools/make_jina_v3.py --from DIR --out DIR   (the hub folder of any native jina_embeddings_v3 folder,
           such as make_families.py --shape jina-embeddings-v3's, adapters drawn as here; no judge run: for benchmarks)
"""
import json
import os
import shutil
import tempfile

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

import numpy as np
import torch
from safetensors.torch import load_file, save_file

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "families")
SRC, OUT = os.path.join(ROOT, "jina-v3"), os.path.join(ROOT, "jina-v3-hub")
SEED = 73
TASKS = ["retrieval.query", "retrieval.passage", "separation", "classification", "text-matching"]
RANK, ALPHA = 4, 1
RUN = [None, "retrieval.query", "retrieval.passage", "text-matching"]
INSTRUCTIONS = {"retrieval.query": "Represent the query for retrieving evidence documents: ",
                "retrieval.passage": "Represent the document for retrieval: ", "separation": "",
                "classification": "", "text-matching": ""}


def lora(name, w, g):
    """One parametrized tensor's adapters, drawn so that each task moves the weight by about half its own scale."""
    n = len(TASKS)
    rows, cols = w.shape
    if "embeddings" in name:   # A (tasks, rows, r), B (tasks, r, cols)
        a = torch.randn(n, rows, RANK, generator=g)
        b = torch.randn(n, RANK, cols, generator=g) * float(w.float().std()) * 2 / np.sqrt(RANK)
    else:                      # A (tasks, r, in), B (tasks, out, r)
        a = torch.randn(n, RANK, cols, generator=g) / np.sqrt(cols)
        b = torch.randn(n, rows, RANK, generator=g) * float(w.float().std()) * 2 * np.sqrt(cols) / np.sqrt(RANK)
    return a, b


def merged(hub, task):
    """The remote code's weight for `task` (None: the originals), float32, under jina_embeddings_v3's save names."""
    out = {}
    t = None if task is None else TASKS.index(task)
    for k, v in hub.items():
        if ".lora_" in k:
            continue
        name = k[len("roberta."):]
        if k.endswith(".parametrizations.weight.original"):
            base = k[: -len(".parametrizations.weight.original")]
            w = v.float()
            if t is not None:
                a = hub[base + ".parametrizations.weight.0.lora_A"].float()[t]
                b = hub[base + ".parametrizations.weight.0.lora_B"].float()[t]
                delta = a @ b if "embeddings" in base else b @ a
                w = w + delta.view(w.shape) * (ALPHA / RANK)
            name = base[len("roberta."):] + ".weight"
            v = w
        out[name] = v.float().contiguous()
    return out


def write_hub(SRC, OUT, max_seq_length):
    """OUT: SRC's weights as the hub folder holds them (bfloat16, parametrized, five drawn adapters); the hub dict."""
    base = load_file(os.path.join(SRC, "model.safetensors"))
    g = torch.Generator().manual_seed(SEED)
    hub = {}
    for k in sorted(base):
        v = base[k]
        if k.startswith("pooler."):
            continue
        if v.ndim == 2:   # a linear layer or an embedding table: parametrized, with its adapters
            a, b = lora(k, v, g)
            stem = "roberta." + k[: -len(".weight")] + ".parametrizations.weight"
            hub[stem + ".original"] = v.to(torch.bfloat16)
            hub[stem + ".0.lora_A"] = a.to(torch.bfloat16)
            hub[stem + ".0.lora_B"] = b.to(torch.bfloat16)
        else:
            hub["roberta." + k] = v.to(torch.bfloat16)

    if os.path.exists(OUT):
        shutil.rmtree(OUT)
    os.makedirs(os.path.join(OUT, "1_Pooling"))
    os.makedirs(os.path.join(OUT, "2_Normalize"))
    save_file(hub, os.path.join(OUT, "model.safetensors"), metadata={"format": "pt"})
    src_cfg = json.load(open(os.path.join(SRC, "config.json")))
    cfg = {
        "_name_or_path": "jinaai/jina-embeddings-v3",
        "architectures": ["XLMRobertaLoRA"],
        "attention_probs_dropout_prob": 0.1,
        "auto_map": {
            "AutoConfig": "jinaai/xlm-roberta-flash-implementation--configuration_xlm_roberta.XLMRobertaFlashConfig",
            "AutoModel": "jinaai/xlm-roberta-flash-implementation--modeling_lora.XLMRobertaLoRA",
            "AutoModelForMaskedLM":
                "jinaai/xlm-roberta-flash-implementation--modeling_xlm_roberta.XLMRobertaForMaskedLM",
            "AutoModelForPreTraining":
                "jinaai/xlm-roberta-flash-implementation--modeling_xlm_roberta.XLMRobertaForPreTraining"},
        "bos_token_id": src_cfg["bos_token_id"], "classifier_dropout": None, "emb_pooler": None,
        "eos_token_id": src_cfg["eos_token_id"], "hidden_act": "gelu", "hidden_dropout_prob": 0.1,
        "hidden_size": src_cfg["hidden_size"], "initializer_range": 0.02,
        "intermediate_size": src_cfg["intermediate_size"], "layer_norm_eps": src_cfg["layer_norm_eps"],
        "load_trained_adapters": True, "lora_adaptations": TASKS, "lora_alpha": ALPHA, "lora_dropout_p": 0.0,
        "lora_main_params_trainable": False, "lora_rank": RANK, "matryoshka_dimensions": [8, 16, 32],
        "max_position_embeddings": src_cfg["max_position_embeddings"], "model_type": "xlm-roberta",
        "num_attention_heads": src_cfg["num_attention_heads"], "num_hidden_layers": src_cfg["num_hidden_layers"],
        "output_past": True, "pad_token_id": src_cfg["pad_token_id"], "position_embedding_type": "rotary",
        "rotary_emb_base": src_cfg["rope_parameters"]["rope_theta"],
        "task_instructions": {k: v for k, v in INSTRUCTIONS.items()}, "torch_dtype": "bfloat16",
        "transformers_version": "4.41.2", "truncate_dim": None, "type_vocab_size": src_cfg["type_vocab_size"],
        "use_cache": True, "use_flash_attn": True, "vocab_size": src_cfg["vocab_size"],
    }
    json.dump(cfg, open(os.path.join(OUT, "config.json"), "w"), indent=2)
    for f in ["tokenizer.json", "tokenizer_config.json", "1_Pooling/config.json"]:
        shutil.copy(os.path.join(SRC, f), os.path.join(OUT, f))
    json.dump([{"idx": 0, "name": "transformer", "path": "", "type": "custom_st.Transformer", "kwargs": ["task"]},
               {"idx": 1, "name": "pooler", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
               {"idx": 2, "name": "normalizer", "path": "2_Normalize",
                "type": "sentence_transformers.models.Normalize"}],
              open(os.path.join(OUT, "modules.json"), "w"), indent=2)
    json.dump({"__version__": {"sentence_transformers": "3.1.0", "transformers": "4.41.2", "pytorch": "2.3.1+cu121"},
               "prompts": INSTRUCTIONS, "default_prompt_name": None, "similarity_fn_name": "cosine"},
              open(os.path.join(OUT, "config_sentence_transformers.json"), "w"), indent=2)
    json.dump({"max_seq_length": max_seq_length, "do_lower_case": False},
              open(os.path.join(OUT, "sentence_bert_config.json"), "w"), indent=2)
    return hub


def main():
    from sentence_transformers import SentenceTransformer
    from transformers import AutoModel, AutoTokenizer

    torch.set_num_threads(2)
    exp_src = json.load(open(os.path.join(SRC, "expected.json"), encoding="utf-8"))
    texts = exp_src["texts"]
    hub = write_hub(SRC, OUT, exp_src["settings"]["max_seq_length"])

    tok = AutoTokenizer.from_pretrained(OUT)
    msl = exp_src["settings"]["max_seq_length"]
    batch = tok(texts, padding=True, truncation=True, max_length=msl, return_tensors="pt")
    assert batch["input_ids"].tolist() == exp_src["tokens"]["input_ids"]
    mask = batch["attention_mask"]
    runs, hiddens, checks = [], {}, {}
    for task in RUN:
        with tempfile.TemporaryDirectory() as tmp:
            for f in os.listdir(SRC):
                p = os.path.join(SRC, f)
                if f in ("expected.json", "hidden.npy", "model.safetensors"):
                    continue
                (shutil.copytree if os.path.isdir(p) else shutil.copy)(p, os.path.join(tmp, f))
            save_file(merged(hub, task), os.path.join(tmp, "model.safetensors"), metadata={"format": "pt"})
            model = AutoModel.from_pretrained(tmp)
            model.eval()
            with torch.no_grad():
                h = model(input_ids=batch["input_ids"], attention_mask=mask).last_hidden_state.float()
            st = SentenceTransformer(tmp, device="cpu")
            prompt = INSTRUCTIONS[task] if task else ""
            emb = st.encode(texts, prompt=prompt, batch_size=len(texts), convert_to_numpy=True)
        h = (h * mask.unsqueeze(-1)).numpy().astype(np.float32)
        name = "hidden-" + (task or "none") + ".npy"
        np.save(os.path.join(OUT, name), h)
        hiddens[task] = h
        runs.append({"task": task, "prompt": prompt, "hidden": name, "embeddings": emb.astype(np.float32).tolist()})
    for task in RUN[1:]:
        d = float(np.abs(hiddens[task] - hiddens[None]).max())
        checks[f"hidden_{task}_vs_base_max_abs"] = d
        assert d > 1e-2, f"task {task} changes nothing"
    import sentence_transformers
    import transformers
    exp = {"family": "jina-v3-hub", "model_type": "xlm-roberta", "base": "jina-v3", "seed": SEED,
           "versions": {"torch": torch.__version__, "transformers": transformers.__version__,
                        "sentence_transformers": sentence_transformers.__version__},
           "texts": texts, "tokens": {k: v.tolist() for k, v in batch.items()}, "tasks": TASKS,
           "lora": {"rank": RANK, "alpha": ALPHA}, "runs": runs, "checks": checks}
    with open(os.path.join(OUT, "tasks.json"), "w", encoding="utf-8") as f:
        json.dump(exp, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print("jina-v3-hub:", {k: f"{v:.3g}" for k, v in checks.items()})


if __name__ == "__main__":
    import sys
    if "--from" in sys.argv:
        src, out = sys.argv[sys.argv.index("--from") + 1], sys.argv[sys.argv.index("--out") + 1]
        msl = json.load(open(os.path.join(src, "sentence_bert_config.json"))).get("max_seq_length", 8192)
        write_hub(src, out, msl)
        print("wrote", out)
    else:
        main()
