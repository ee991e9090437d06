"""The relax-llama parameter file (safetensors) for the peer benchmarks: read and write.

Format (written by `relax-llama weights`): a standard safetensors file (8-byte little-endian
header length, a JSON header, the data). `__metadata__` holds strings: format="relax-llama",
the integer sizes as decimal strings, rope_theta and norm_epsilon as number strings, and
weights = "f32" | "bf16" | "int4". Matrices are stored (in, out), y = x @ W. For int4 a matrix
is two tensors "<name>.q4" U8 (in/2, out) and "<name>.scales" F32 (in/group_size, out), with
W[k, j] = (((q[k//2, j] >> (4*(k%2))) & 15) - 8) * scales[k//group_size, j].

Only json and numpy: no safetensors package. bf16 is kept as uint16 bit patterns here; the
readers turn it into torch.bfloat16 or float32.
"""

import json
import mmap
import struct

import numpy as np

INT_FIELDS = ("hidden", "layers", "heads", "kv_heads", "head_dim", "intermediate", "vocab",
              "max_batch", "max_context", "group_size")
FLOAT_FIELDS = ("rope_theta", "norm_epsilon")
WEIGHT_FORMATS = ("f32", "bf16", "int4")
DTYPES = {"F32": np.float32, "BF16": np.uint16, "U8": np.uint8, "I64": np.int64}
DTYPE_NAMES = {np.dtype(np.float32): "F32", np.dtype(np.uint8): "U8"}

TINYLLAMA = dict(hidden=2048, layers=22, heads=32, kv_heads=4, head_dim=64, intermediate=5632,
                 vocab=32000, max_batch=4, max_context=2048, group_size=32, rope_theta=10000.0,
                 norm_epsilon=1e-5)
SMALL = dict(hidden=64, layers=2, heads=4, kv_heads=2, head_dim=16, intermediate=96, vocab=101,
             max_batch=4, max_context=256, group_size=16, rope_theta=10000.0, norm_epsilon=1e-5)


def matrix_shapes(cfg):
    """(name, in, out) of every matrix, in file order."""
    q = cfg["heads"] * cfg["head_dim"]
    kv = cfg["kv_heads"] * cfg["head_dim"]
    h, inter = cfg["hidden"], cfg["intermediate"]
    out = []
    for l in range(cfg["layers"]):
        p = f"layers.{l}."
        out += [(p + "wq", h, q), (p + "wk", h, kv), (p + "wv", h, kv), (p + "wo", q, h),
                (p + "w_gate", h, inter), (p + "w_up", h, inter), (p + "w_down", inter, h)]
    out.append(("lm_head", h, cfg["vocab"]))
    return out


def norm_names(cfg):
    names = []
    for l in range(cfg["layers"]):
        names += [f"layers.{l}.attn_norm", f"layers.{l}.mlp_norm"]
    return names + ["final_norm"]


class ParamFile:
    """A memory-mapped parameter file: .config (dict) and .raw(name) (numpy view of the data)."""

    def __init__(self, path):
        self.path = path
        self._file = open(path, "rb")
        self._map = mmap.mmap(self._file.fileno(), 0, access=mmap.ACCESS_READ)
        (n,) = struct.unpack("<Q", self._map[:8])
        header = json.loads(self._map[8:8 + n].decode("utf-8"))
        self._data_start = 8 + n
        meta = header.pop("__metadata__", {})
        if meta.get("format") != "relax-llama":
            raise ValueError(f"{path}: metadata format is {meta.get('format')!r}, expected 'relax-llama'")
        cfg = {}
        for k in INT_FIELDS:
            cfg[k] = int(meta[k])
        for k in FLOAT_FIELDS:
            cfg[k] = float(meta[k])
        cfg["weights"] = meta["weights"]
        if cfg["weights"] not in WEIGHT_FORMATS:
            raise ValueError(f"{path}: weights is {cfg['weights']!r}, expected one of {WEIGHT_FORMATS}")
        self.config = cfg
        self.tensors = header

    def raw(self, name):
        """The tensor `name` as a read-only numpy array over the mapping (BF16 as uint16)."""
        if name not in self.tensors:
            raise KeyError(f"{self.path}: no tensor '{name}'")
        t = self.tensors[name]
        dtype = DTYPES[t["dtype"]]
        begin, end = t["data_offsets"]
        count = int(np.prod(t["shape"], dtype=np.int64))
        if end - begin != count * np.dtype(dtype).itemsize:
            raise ValueError(f"{self.path}: tensor '{name}' has {end - begin} bytes, expected "
                             f"{count * np.dtype(dtype).itemsize} for {t['dtype']} {t['shape']}")
        arr = np.frombuffer(self._map, dtype=dtype, count=count, offset=self._data_start + begin)
        return arr.reshape(t["shape"])

    def dtype(self, name):
        return self.tensors[name]["dtype"]


def bf16_bits_to_f32(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


def f32_to_bf16_bits(x):
    """Round to nearest even, as the library's own bf16 conversion."""
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    rounded = u + np.uint32(0x7FFF) + ((u >> 16) & np.uint32(1))
    return (rounded >> 16).astype(np.uint16)


def dequantize_int4(q4, scales, group_size):
    """W (in, out) float32 from the packed nibbles and group scales (vectorised)."""
    rows2, out = q4.shape
    low = (q4 & 15).astype(np.int8) - 8
    high = (q4 >> 4).astype(np.int8) - 8
    w = np.empty((rows2 * 2, out), dtype=np.float32)
    w[0::2] = low
    w[1::2] = high
    w *= np.repeat(scales, group_size, axis=0)
    return w


def quantize_int4(w, group_size):
    """Symmetric per-group quantisation of W (in, out): (q4 uint8 (in/2, out), scales f32)."""
    k, n = w.shape
    g = w.reshape(k // group_size, group_size, n)
    scales = np.abs(g).max(axis=1) / 7.0
    scales[scales == 0] = 1.0
    q = np.clip(np.rint(g / scales[:, None, :]), -8, 7).astype(np.int8) + 8
    q = q.reshape(k, n).astype(np.uint8)
    q4 = (q[0::2] | (q[1::2] << 4)).astype(np.uint8)
    return q4, scales.astype(np.float32)


def write_random(path, cfg, weights, seed=0, scale=None):
    """Writes a parameter file of random weights in the relax-llama format.

    Weights are N(0, scale^2) with scale = 1/sqrt(in) by default (activations stay O(1) through
    the layers), norms 1 + N(0, 0.1^2). Tensors are generated and written one at a time, so a
    TinyLlama-size file needs about one matrix of memory.
    """
    if weights not in WEIGHT_FORMATS:
        raise ValueError(f"weights is {weights!r}, expected one of {WEIGHT_FORMATS}")
    rng = np.random.default_rng(seed)
    h = cfg["hidden"]
    entries = []  # (name, dtype name, shape, producer)

    def matrix_entries(name, rows, cols):
        def make():
            return (rng.standard_normal((rows, cols), dtype=np.float32) *
                    np.float32(scale or 1.0 / np.sqrt(rows)))
        if weights == "f32":
            return [(name, "F32", (rows, cols), make)]
        if weights == "bf16":
            return [(name, "BF16", (rows, cols), lambda: f32_to_bf16_bits(make()))]
        cache = {}

        def q(part):
            def get():
                if not cache:
                    cache["q4"], cache["scales"] = quantize_int4(make(), cfg["group_size"])
                return cache.pop(part)
            return get
        return [(name + ".q4", "U8", (rows // 2, cols), q("q4")),
                (name + ".scales", "F32", (rows // cfg["group_size"], cols), q("scales"))]

    def norm(name):
        return (name, "F32", (h,), lambda: (1.0 + 0.1 * rng.standard_normal(h)).astype(np.float32))

    emb_dtype = "BF16" if weights == "bf16" else "F32"

    def embed():
        e = rng.standard_normal((cfg["vocab"], h), dtype=np.float32)
        return f32_to_bf16_bits(e) if weights == "bf16" else e
    entries.append(("embed", emb_dtype, (cfg["vocab"], h), embed))
    shapes = {n: (i, o) for n, i, o in matrix_shapes(cfg)}
    for l in range(cfg["layers"]):
        p = f"layers.{l}."
        entries.append(norm(p + "attn_norm"))
        for m in ("wq", "wk", "wv", "wo"):
            entries += matrix_entries(p + m, *shapes[p + m])
        entries.append(norm(p + "mlp_norm"))
        for m in ("w_gate", "w_up", "w_down"):
            entries += matrix_entries(p + m, *shapes[p + m])
    entries.append(norm("final_norm"))
    entries += matrix_entries("lm_head", *shapes["lm_head"])

    itemsize = {"F32": 4, "BF16": 2, "U8": 1}
    header = {"__metadata__": {"format": "relax-llama", "weights": weights}}
    for k in INT_FIELDS:
        header["__metadata__"][k] = str(int(cfg[k]))
    for k in FLOAT_FIELDS:
        header["__metadata__"][k] = repr(float(cfg[k]))
    offset = 0
    for name, dt, shape, _ in entries:
        nbytes = int(np.prod(shape)) * itemsize[dt]
        header[name] = {"dtype": dt, "shape": list(shape), "data_offsets": [offset, offset + nbytes]}
        offset += nbytes
    text = json.dumps(header).encode("utf-8")
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for name, dt, shape, make in entries:
            arr = np.ascontiguousarray(make())
            if arr.shape != tuple(shape) or arr.dtype.itemsize != itemsize[dt]:
                raise AssertionError(f"{name}: produced {arr.dtype} {arr.shape}, expected {dt} {shape}")
            f.write(arr.tobytes())
