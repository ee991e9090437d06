#!/usr/bin/env python3
"""The language-model table of docs/performance.md from one run of each side.

Reads llama_bench's Google Benchmark JSON (--benchmark_format=json --benchmark_out=FILE) and
llama_peers.sh's JSON lines, and prints one Markdown row per weight format and case: relax's
tokens/s, each peer's (the median of its repetitions), relax / the best peer, and for decode
rows the fraction of the DRAM read rate (the best BM_DramRead row of the same llama_bench run)
that relax's weight bytes per step reach. Targets (issue 31): relax / best peer >= 1.1, decode
>= 0.85 of the DRAM read.

Usage: bench/llama_table.py RELAX.json PEERS.jsonl
"""
import json
import re
import sys


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        relax = json.load(f)
    peers = {}
    with open(sys.argv[2]) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            row = json.loads(line)
            size = row.get("n") if row["case"] == "prefill" else row.get("context")
            key = (row["weights"], row["case"], row.get("batch", 1), size)
            peers.setdefault(key, {})[row["peer"]] = row["tokens_per_s"]

    dram = max((b["GB/s"] for b in relax["benchmarks"] if b["name"].startswith("BM_DramRead")), default=0)
    rows = []
    for b in relax["benchmarks"]:
        m = re.match(r"BM_Decode/(\w+)/b:(\d+)/ctx:(\d+)", b["name"])
        if m:
            rows.append(((m.group(1), "decode", int(m.group(2)), int(m.group(3))), b))
            continue
        m = re.match(r"BM_Prefill/(\w+)/n:(\d+)", b["name"])
        if m:
            rows.append(((m.group(1), "prefill", 1, int(m.group(2))), b))

    print(f"DRAM read (best BM_DramRead row): {dram:.1f} GB/s")
    print()
    print("| weights | case | relax | PyTorch | ONNX Runtime | relax / best peer | decode: of DRAM read |")
    print("|---|---|---|---|---|---|---|")
    for (w, case, batch, size), b in rows:
        ours = b["tokens/s"]
        theirs = peers.get((w, case, batch, size), {})
        torch = theirs.get("pytorch")
        ort = theirs.get("onnxruntime")
        best = max([v for v in (torch, ort) if v], default=None)
        ratio = f"{ours / best:.2f}" if best else "—"
        if best and ours / best < 1.1:
            ratio += " (miss)"
        label = f"decode b={batch} ctx {size}" if case == "decode" else f"prefill n={size}"
        roof = "—"
        if case == "decode" and dram > 0:
            fraction = b["GB/s"] / dram
            roof = f"{fraction:.2f}" + (" (miss)" if fraction < 0.85 else "")
        fmt = lambda v: f"{v:.1f}" if v else "—"
        print(f"| {w} | {label} | {ours:.1f} | {fmt(torch)} | {fmt(ort)} | {ratio} | {roof} |")


if __name__ == "__main__":
    main()
