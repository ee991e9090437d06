#!/usr/bin/python3
"""The relax-llama model in PyTorch eager: the PyTorch peer of the language-model benchmark.

Usage (Debian's python3-torch: call /usr/bin/python3, the pyenv python3 has no torch):
  llama_torch.py PARAMS [--threads 2] [--prefill 128,512] [--decode-context 128,1024]
                 [--decode-batch 1,4] [--steps 8] [--reps 3] [--bf16 auto|on|off] [--out FILE]
      benchmarks; prints one JSON line per case (and appends them to FILE)
  llama_torch.py PARAMS --check --tokens 1,2,3 [--out logits.npy]
      prints the last-token logits of the prompt (prefill), writes them as .npy or .json

Weights: f32 as stored; int4 is dequantised to float32 at load (PyTorch 1.13 has no int4 CPU
matmul); bf16 runs bf16 matmuls (activations cast to bf16 at each matmul, the rest in f32) when
a bf16 matmul is not slower than f32 on this CPU (--bf16 auto measures it), else the weights
are widened to float32. Each JSON line says which ("compute").

The KV cache is the standard past_key_values form: a list of (k, v) per layer, each
(batch, kv_heads, past_length, head_dim), passed in and returned extended by the new tokens.
"""

import argparse
import json
import math
import os
import sys
import time

import numpy as np
import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from llama_params import ParamFile, dequantize_int4  # noqa: E402


def load_matrix(pf, name, compute_dtype):
    """A matrix (in, out) as a torch tensor of compute_dtype (float32 or bfloat16)."""
    if pf.config["weights"] == "int4":
        w = torch.from_numpy(dequantize_int4(pf.raw(name + ".q4"), pf.raw(name + ".scales"),
                                             pf.config["group_size"]))
        return w.to(compute_dtype)
    raw = pf.raw(name)
    if pf.dtype(name) == "BF16":
        w = torch.from_numpy(raw.view(np.int16).copy()).view(torch.bfloat16)
        return w if compute_dtype == torch.bfloat16 else w.float()
    return torch.from_numpy(np.array(raw, dtype=np.float32)).to(compute_dtype)


def load_vector(pf, name):
    raw = pf.raw(name)
    if pf.dtype(name) == "BF16":
        return torch.from_numpy(raw.view(np.int16).copy()).view(torch.bfloat16).float()
    return torch.from_numpy(np.array(raw, dtype=np.float32))


def frozen(t):
    return nn.Parameter(t, requires_grad=False)


def matmul(x, w):
    """x (f32) @ w; a bf16 w runs a bf16 matmul and returns f32.

    One row by an f32 w runs as a matrix-vector product: the BLAS Debian's torch calls
    (OpenBLAS 0.3.21) packs all of B for a one-row sgemm, twice the memory traffic of its sgemv
    (about 2x slower at decode); MKL makes the same switch inside sgemm. Eager only: the ONNX
    export traces more than one row.
    """
    if w.dtype == torch.bfloat16:
        return torch.matmul(x.to(torch.bfloat16), w).float()
    if not torch.jit.is_tracing() and x.numel() == w.shape[0]:
        return torch.mv(w.t(), x.reshape(-1)).view(x.shape[:-1] + (w.shape[1],))
    return torch.matmul(x, w)


def rmsnorm(x, w, eps: float):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def rotary(x, cos, sin):
    """Half rotation: x (b, s, heads, d); cos, sin (s, d/2)."""
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]
    c = cos[None, :, None, :]
    s = sin[None, :, None, :]
    return torch.cat([x1 * c - x2 * s, x2 * c + x1 * s], dim=-1)


class Layer(nn.Module):
    def __init__(self, pf, l, compute_dtype):
        super().__init__()
        p = f"layers.{l}."
        self.attn_norm = frozen(load_vector(pf, p + "attn_norm"))
        self.mlp_norm = frozen(load_vector(pf, p + "mlp_norm"))
        for m in ("wq", "wk", "wv", "wo", "w_gate", "w_up", "w_down"):
            setattr(self, m, frozen(load_matrix(pf, p + m, compute_dtype)))


class Llama(nn.Module):
    def __init__(self, pf, compute_dtype=torch.float32):
        super().__init__()
        cfg = pf.config
        self.cfg = cfg
        self.heads, self.kv_heads, self.head_dim = cfg["heads"], cfg["kv_heads"], cfg["head_dim"]
        self.eps = cfg["norm_epsilon"]
        self.embed = frozen(load_vector(pf, "embed"))
        self.layers = nn.ModuleList([Layer(pf, l, compute_dtype) for l in range(cfg["layers"])])
        self.final_norm = frozen(load_vector(pf, "final_norm"))
        self.lm_head = frozen(load_matrix(pf, "lm_head", compute_dtype))
        d = self.head_dim
        inv_freq = cfg["rope_theta"] ** (-torch.arange(0, d // 2, dtype=torch.float64) * 2.0 / d)
        self.register_buffer("inv_freq", inv_freq.float(), persistent=False)

    def empty_cache(self, batch):
        shape = (batch, self.kv_heads, 0, self.head_dim)
        return [(torch.zeros(shape), torch.zeros(shape)) for _ in self.layers]

    def random_cache(self, batch, length, seed=0):
        g = torch.Generator().manual_seed(seed)
        shape = (batch, self.kv_heads, length, self.head_dim)
        return [(torch.randn(shape, generator=g), torch.randn(shape, generator=g)) for _ in self.layers]

    def forward(self, tokens, past):
        """tokens (b, s) int64; past: list of (k, v) (b, kv_heads, p, head_dim).

        Returns the last token's logits (b, vocab) and the cache extended to p + s.
        """
        b, s = tokens.shape
        H, KV, D = self.heads, self.kv_heads, self.head_dim
        G = H // KV
        p = past[0][0].shape[2]
        positions = torch.arange(s, dtype=torch.float32) + p
        angles = positions[:, None] * self.inv_freq[None, :]
        cos, sin = torch.cos(angles), torch.sin(angles)
        # Query row i (absolute position p + i) sees keys 0 .. p + i.
        key_pos = torch.arange(s + p)[None, :]
        query_pos = (torch.arange(s) + p)[:, None]
        mask = torch.zeros(s, s + p).masked_fill(key_pos > query_pos, float("-inf"))
        x = self.embed[tokens]
        present = []
        for layer, (past_k, past_v) in zip(self.layers, past):
            h = rmsnorm(x, layer.attn_norm, self.eps)
            q = rotary(matmul(h, layer.wq).view(b, s, H, D), cos, sin)
            k = rotary(matmul(h, layer.wk).view(b, s, KV, D), cos, sin)
            v = matmul(h, layer.wv).view(b, s, KV, D)
            k = torch.cat([past_k, k.transpose(1, 2)], dim=2)
            v = torch.cat([past_v, v.transpose(1, 2)], dim=2)
            present.append((k, v))
            # Query head h = kv * G + g uses KV head kv: group the G query heads of a KV head.
            qg = q.view(b, s, KV, G, D).permute(0, 2, 3, 1, 4).reshape(b, KV, G * s, D)
            kt = k.transpose(2, 3)
            if not torch.jit.is_tracing() and s > 1:
                kt = kt.contiguous()  # torch 1.13's batched matmul by a strided k^T: 6x slower at s = 128
            scores = torch.matmul(qg, kt) * (1.0 / math.sqrt(D))
            scores = scores.view(b, KV, G, s, s + p) + mask
            probs = torch.softmax(scores, dim=-1).view(b, KV, G * s, s + p)
            attn = torch.matmul(probs, v).view(b, KV, G, s, D).permute(0, 3, 1, 2, 4).reshape(b, s, H * D)
            x = x + matmul(attn, layer.wo)
            h2 = rmsnorm(x, layer.mlp_norm, self.eps)
            x = x + matmul(torch.nn.functional.silu(matmul(h2, layer.w_gate)) * matmul(h2, layer.w_up),
                           layer.w_down)
        last = rmsnorm(x[:, -1], self.final_norm, self.eps)
        return matmul(last, self.lm_head), present


def bf16_speed_ratio(hidden=2048, out=5632, reps=10):
    """Time of a bf16 matmul over an f32 one, rows 1 and 128, weights (hidden, out)."""
    g = torch.Generator().manual_seed(0)
    w = torch.randn(hidden, out, generator=g)
    wb = w.to(torch.bfloat16)
    total = {torch.float32: 0.0, torch.bfloat16: 0.0}
    for rows in (1, 128):
        x = torch.randn(rows, hidden, generator=g)
        for dtype, weight in ((torch.float32, w), (torch.bfloat16, wb)):
            matmul(x, weight)
            t = time.perf_counter()
            for _ in range(reps):
                matmul(x, weight)
            total[dtype] += (time.perf_counter() - t) / reps / rows ** 0.5
    return total[torch.bfloat16] / total[torch.float32]


def choose_compute(weights, bf16_mode):
    """(torch dtype of the matmuls, a note for the output)."""
    if weights == "int4":
        return torch.float32, "f32 (int4 dequantised to float32 at load: PyTorch 1.13 has no int4 CPU matmul)"
    if weights == "f32":
        return torch.float32, "f32"
    if bf16_mode == "on":
        return torch.bfloat16, "bf16 matmuls (forced)"
    if bf16_mode == "off":
        return torch.float32, "f32 (bf16 widened to float32 at load, forced)"
    ratio = bf16_speed_ratio()
    if ratio <= 1.0:
        return torch.bfloat16, f"bf16 matmuls (bf16/f32 matmul time {ratio:.2f})"
    return torch.float32, f"f32 (bf16 widened to float32 at load: bf16/f32 matmul time {ratio:.2f})"


def timed(fn, reps):
    fn()  # warm-up
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return times


def bench_prefill(model, n, reps):
    tokens = torch.randint(0, model.cfg["vocab"], (1, n), generator=torch.Generator().manual_seed(n))
    past = model.empty_cache(1)
    times = timed(lambda: model(tokens, past), reps)
    return {"case": "prefill", "batch": 1, "n": n, "tokens_per_s": n / float(np.median(times)),
            "best_tokens_per_s": n / min(times), "seconds": times}


def bench_decode(model, batch, context, steps, reps):
    start = model.random_cache(batch, context)
    first = torch.randint(0, model.cfg["vocab"], (batch, 1), generator=torch.Generator().manual_seed(1))

    def run():
        past, tokens = start, first
        for _ in range(steps):
            logits, past = model(tokens, past)
            tokens = logits.argmax(-1, keepdim=True)
    times = timed(run, reps)
    return {"case": "decode", "batch": batch, "context": context, "steps": steps,
            "tokens_per_s": batch * steps / float(np.median(times)),
            "best_tokens_per_s": batch * steps / min(times), "seconds": times}


def int_list(text):
    return [int(v) for v in text.split(",") if v]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("params")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--prefill", type=int_list, default=[128, 512])
    ap.add_argument("--decode-context", type=int_list, default=[128, 1024])
    ap.add_argument("--decode-batch", type=int_list, default=[1, 4])
    ap.add_argument("--steps", type=int, default=8, help="decode steps timed per repetition")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--bf16", choices=("auto", "on", "off"), default="auto")
    ap.add_argument("--check", action="store_true", help="print the last-token logits of --tokens")
    ap.add_argument("--tokens", type=int_list, default=[1, 2, 3, 4, 5])
    ap.add_argument("--out", help="bench: append JSON lines here; check: .npy or .json of the logits")
    args = ap.parse_args(argv)

    torch.set_num_threads(args.threads)
    pf = ParamFile(args.params)
    weights = pf.config["weights"]
    compute, note = choose_compute(weights, args.bf16)
    t = time.perf_counter()
    model = Llama(pf, compute).eval()
    load_s = time.perf_counter() - t

    if args.check:
        with torch.inference_mode():
            logits, _ = model(torch.tensor([args.tokens], dtype=torch.int64), model.empty_cache(1))
        logits = logits[0].float().numpy()
        if args.out and args.out.endswith(".npy"):
            np.save(args.out, logits)
        elif args.out:
            with open(args.out, "w") as f:
                json.dump({"tokens": args.tokens, "logits": logits.tolist()}, f)
        print(json.dumps({"peer": "pytorch", "weights": weights, "compute": note, "tokens": args.tokens,
                          "logits": logits.tolist()}))
        return

    common = {"peer": "pytorch", "weights": weights, "compute": note, "threads": args.threads,
              "torch": torch.__version__, "load_s": round(load_s, 2)}
    cases = [("prefill", n) for n in args.prefill]
    cases += [("decode", b, c) for c in args.decode_context for b in args.decode_batch]
    with torch.inference_mode():
        for case in cases:
            if case[0] == "prefill":
                r = bench_prefill(model, case[1], args.reps)
            else:
                r = bench_decode(model, case[1], case[2], args.steps, args.reps)
            r["seconds"] = [round(s, 4) for s in r["seconds"]]
            line = json.dumps({**common, **r, "load": os.getloadavg()[0]})
            print(line, flush=True)
            if args.out:
                with open(args.out, "a") as f:
                    f.write(line + "\n")


if __name__ == "__main__":
    main()
