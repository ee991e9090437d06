#!/usr/bin/python3
"""Correctness of the peers at small shapes: PyTorch against the numpy reference, ONNX Runtime
against PyTorch. Prints the max relative difference (max |a - b| / max |b|) of each comparison and
exits 1 if any is above its tolerance.

Usage: check_peers.py [--dir /tmp/peers_check] [--node-path build/peers/node_modules] [--no-ort]

For each weight format (f32, bf16, int4) and two model shapes (GQA groups of 2 and 4), it writes
a random parameter file and compares:
  - torch prefill logits of a prompt, batch 1, with the numpy reference (llama_ref.py: whole
    sequence, no cache, int4 unpacked row by row, float64);
  - torch prefill of part of the prompt then one-token decode steps (the KV cache path), batch 2
    with two different prompts, with the reference at every step;
  - for bf16 also the bf16-matmul torch model (looser tolerance: activations rounded to bf16);
  - ONNX Runtime (ort_bench.js --check on the exported graph) prefill and prefill+decode logits
    with torch; for int4 the graph with dequantised float32 weights, and with MatMulNBits at
    accuracy level 0 (float32 compute) and 4 (int8 activations, looser tolerance).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import llama_onnx  # noqa: E402
import llama_ref  # noqa: E402
from llama_params import SMALL, ParamFile, write_random  # noqa: E402
from llama_torch import Llama  # noqa: E402

SHAPES = {
    "gqa2": dict(SMALL),
    "gqa4": dict(SMALL, hidden=48, heads=8, kv_heads=2, head_dim=8, intermediate=80, vocab=67,
                 group_size=16, layers=3, rope_theta=500.0),
}
TOL_F32 = 1e-4
TOL_BF16_MATMUL = 5e-2
TOL_INT8_ACTIVATIONS = 5e-2


def rel(a, b):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return float(np.abs(a - b).max() / np.abs(b).max())


class Report:
    def __init__(self):
        self.failed = []

    def check(self, name, diff, tol):
        ok = diff <= tol
        print(f"{'ok  ' if ok else 'FAIL'} {name}: max relative difference {diff:.2e} (tolerance {tol:.0e})")
        if not ok:
            self.failed.append(name)


def torch_steps(model, prompts, split):
    """Logits after a prefill of prompts[:, :split], then after each one-token decode step."""
    with torch.inference_mode():
        logits, past = model(torch.tensor([p[:split] for p in prompts]), model.empty_cache(len(prompts)))
        out = [logits.float().numpy()]
        for i in range(split, len(prompts[0])):
            logits, past = model(torch.tensor([[p[i]] for p in prompts]), past)
            out.append(logits.float().numpy())
    return out


def check_file(report, label, path, args):
    pf = ParamFile(path)
    vocab = pf.config["vocab"]
    rng = np.random.default_rng(len(label))
    prompts = [rng.integers(0, vocab, 9).tolist(), rng.integers(0, vocab, 9).tolist()]
    split = 5
    refs = [llama_ref.forward(pf, p) for p in prompts]  # (positions, vocab) each
    computes = [(torch.float32, TOL_F32)]
    if pf.config["weights"] == "bf16":
        computes.append((torch.bfloat16, TOL_BF16_MATMUL))
    for dtype, tol in computes:
        model = Llama(pf, dtype).eval()
        name = f"{label} torch[{str(dtype).split('.')[-1]}]"
        with torch.inference_mode():
            whole, _ = model(torch.tensor([prompts[0]]), model.empty_cache(1))
        report.check(f"{name} prefill vs numpy", rel(whole[0].float().numpy(), refs[0][-1]), tol)
        for batch in (1, 2):
            steps = torch_steps(model, prompts[:batch], split)
            diff = max(rel(steps[i][b], refs[b][split - 1 + i]) for i in range(len(steps)) for b in range(batch))
            report.check(f"{name} batch-{batch} prefill {split} + {len(steps) - 1} decode steps vs numpy", diff, tol)
    if args.no_ort:
        return
    model = Llama(pf, torch.float32).eval()
    with torch.inference_mode():
        whole, _ = model(torch.tensor([prompts[0]]), model.empty_cache(1))
    whole = whole[0].numpy()
    variants = [("", {}, TOL_F32)]
    if pf.config["weights"] == "int4":
        variants = [("[dequantized]", dict(int4="dequantize"), TOL_F32),
                    ("[MatMulNBits level 0]", dict(int4="nbits", int4_accuracy=0), TOL_F32),
                    ("[MatMulNBits level 4]", dict(int4="nbits", int4_accuracy=4), TOL_INT8_ACTIVATIONS)]
    for variant, options, tol in variants:
        onnx_dir = os.path.join(args.dir, f"onnx_{label}")
        shutil.rmtree(onnx_dir, ignore_errors=True)
        llama_onnx.export(path, onnx_dir, **options)
        out = os.path.join(args.dir, f"ort_{label}.json")
        env = dict(os.environ, NODE_PATH=args.node_path)
        subprocess.run(["node", os.path.join(HERE, "ort_bench.js"), onnx_dir, "--check", "--tokens",
                        ",".join(map(str, prompts[0])), "--split", "3", "--out", out],
                       check=True, env=env, stdout=subprocess.DEVNULL)
        with open(out) as f:
            ort = json.load(f)
        name = f"{label} onnxruntime{variant}"
        report.check(f"{name} prefill vs torch", rel(ort["logits"], whole), tol)
        report.check(f"{name} prefill 6 + 3 decode steps vs torch", rel(ort["logits_decoded"], whole), tol)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", default="/tmp/peers_check")
    ap.add_argument("--node-path", default=os.path.join(HERE, "..", "..", "build", "peers", "node_modules"))
    ap.add_argument("--no-ort", action="store_true")
    args = ap.parse_args()
    args.node_path = os.path.abspath(args.node_path)
    os.makedirs(args.dir, exist_ok=True)
    torch.set_num_threads(2)
    report = Report()
    for shape, cfg in SHAPES.items():
        for weights in ("f32", "bf16", "int4"):
            label = f"{shape}_{weights}"
            path = os.path.join(args.dir, f"{label}.safetensors")
            write_random(path, cfg, weights, seed=7)
            check_file(report, label, path, args)
    if report.failed:
        print(f"{len(report.failed)} check(s) failed: {', '.join(report.failed)}")
        sys.exit(1)
    print("all checks passed")


if __name__ == "__main__":
    main()
