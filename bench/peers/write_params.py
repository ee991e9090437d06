#!/usr/bin/python3
"""Writes a relax-llama parameter file of random weights (until `relax-llama weights` is on main).

Usage: write_params.py OUT.safetensors --weights f32|bf16|int4 [--shape tinyllama|small]
                       [--set key=value ...] [--seed 0]
The TinyLlama shape in f32 is 4.4 GB: write it under /tmp.
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from llama_params import SMALL, TINYLLAMA, write_random  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--weights", choices=("f32", "bf16", "int4"), default="f32")
    ap.add_argument("--shape", choices=("tinyllama", "small"), default="tinyllama")
    ap.add_argument("--set", action="append", default=[], help="override a size, e.g. layers=2")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    cfg = dict(TINYLLAMA if args.shape == "tinyllama" else SMALL)
    for item in args.set:
        key, value = item.split("=", 1)
        if key not in cfg:
            sys.exit(f"unknown size '{key}', expected one of {sorted(cfg)}")
        cfg[key] = type(cfg[key])(value)
    write_random(args.out, cfg, args.weights, seed=args.seed)
    print(args.out)


if __name__ == "__main__":
    main()
