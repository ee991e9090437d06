#!/usr/bin/python3
"""Exports the PyTorch relax-llama model to ONNX, for the ONNX Runtime peer (ort_bench.js).

Usage: llama_onnx.py PARAMS OUT_DIR [--opset 14] [--int4 nbits|dequantize] [--int4-accuracy 4]
Writes OUT_DIR/model.onnx (weights as external data files next to it when the model passes
protobuf's 2 GB limit) and OUT_DIR/model.json (the sizes and a note for the benchmark).

One graph serves prefill and decode: inputs "tokens" (batch, sequence) int64 and, per layer l,
"past_k.l" / "past_v.l" (batch, kv_heads, past, head_dim) float32 with past >= 0; outputs
"logits" (batch, vocab) of the last token and "present_k.l" / "present_v.l" (past + sequence).
bf16 weights are widened to float32 at export (ONNX Runtime's CPU MatMul has no bf16). int4
weights become ONNX Runtime's contrib MatMulNBits (its CPU int4 kernel; onnx_int4.py) with
--int4 nbits (the default), or float32 matrices dequantised at export with --int4 dequantize.
"""

import argparse
import json
import os
import sys
import time

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from llama_params import ParamFile  # noqa: E402
from llama_torch import Llama  # noqa: E402
from onnx_int4 import use_matmul_nbits  # noqa: E402


class FlatCache(nn.Module):
    """The model with the cache as flat positional inputs and outputs (k0, v0, k1, v1, ...)."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, tokens, *flat):
        past = [(flat[2 * i], flat[2 * i + 1]) for i in range(len(flat) // 2)]
        logits, present = self.model(tokens, past)
        return (logits,) + tuple(t for kv in present for t in kv)


def export(params, out_dir, opset=14, int4="nbits", int4_accuracy=4):
    pf = ParamFile(params)
    cfg = pf.config
    model = Llama(pf, torch.float32).eval()
    os.makedirs(out_dir, exist_ok=True)
    layers = cfg["layers"]
    past_names = [f"past_{kind}.{l}" for l in range(layers) for kind in ("k", "v")]
    present_names = [f"present_{kind}.{l}" for l in range(layers) for kind in ("k", "v")]
    dynamic = {"tokens": {0: "batch", 1: "sequence"}, "logits": {0: "batch"}}
    dynamic.update({n: {0: "batch", 2: "past"} for n in past_names})
    dynamic.update({n: {0: "batch", 2: "total"} for n in present_names})
    # A traced example with every dynamic size distinct and > 1, so none is taken for a constant.
    tokens = torch.randint(0, cfg["vocab"], (2, 3))
    past = model.random_cache(2, 5)
    flat = tuple(t for kv in past for t in kv)
    path = os.path.join(out_dir, "model.onnx")
    t = time.perf_counter()
    with torch.no_grad():
        torch.onnx.export(FlatCache(model), (tokens,) + flat, path, input_names=["tokens"] + past_names,
                          output_names=["logits"] + present_names, dynamic_axes=dynamic,
                          opset_version=opset, do_constant_folding=True)
    del model
    notes = {"f32": "f32", "bf16": "f32 (bf16 weights widened to float32 at export)",
             "int4": "f32 (int4 weights dequantised to float32 at export)"}
    if cfg["weights"] == "int4" and int4 == "nbits":
        use_matmul_nbits(out_dir, pf, int4_accuracy)
        notes["int4"] = f"int4 (com.microsoft MatMulNBits, accuracy_level {int4_accuracy})"
    meta = {k: cfg[k] for k in ("layers", "heads", "kv_heads", "head_dim", "vocab", "hidden")}
    meta.update(weights=cfg["weights"], compute=notes[cfg["weights"]], opset=opset,
                torch=torch.__version__, export_s=round(time.perf_counter() - t, 1))
    with open(os.path.join(out_dir, "model.json"), "w") as f:
        json.dump(meta, f)
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("params")
    ap.add_argument("out_dir")
    ap.add_argument("--opset", type=int, default=14)
    ap.add_argument("--int4", choices=("nbits", "dequantize"), default="nbits")
    ap.add_argument("--int4-accuracy", type=int, default=4, choices=(0, 1, 2, 3, 4),
                    help="MatMulNBits accuracy_level: 0 float32 compute, 4 int8 activations")
    args = ap.parse_args()
    print(export(args.params, args.out_dir, args.opset, args.int4, args.int4_accuracy))


if __name__ == "__main__":
    main()
