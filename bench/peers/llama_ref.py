"""A plain-numpy reference forward of the relax-llama model, for small shapes only.

Written apart from the PyTorch model on purpose: it runs the whole token sequence at once (no
KV cache), unpacks int4 one row k at a time straight from the formula, rotates each position
with the half-rotation formula written out, and loops over query heads with the KV head
h // (heads / kv_heads). float64 throughout, so its own rounding does not hide differences.
"""

import numpy as np

from llama_params import bf16_bits_to_f32


def load_matrix(pf, name):
    """A weight (f32, bf16 or int4 per the file) or the embedding table, as float64."""
    cfg = pf.config
    if cfg["weights"] == "int4" and name != "embed":
        q = pf.raw(name + ".q4")
        s = pf.raw(name + ".scales")
        rows = q.shape[0] * 2
        w = np.empty((rows, q.shape[1]), dtype=np.float64)
        for k in range(rows):
            nibble = (q[k // 2].astype(np.int64) >> (4 * (k % 2))) & 15
            w[k] = (nibble - 8) * s[k // cfg["group_size"]].astype(np.float64)
        return w
    raw = pf.raw(name)
    if pf.dtype(name) == "BF16":
        return bf16_bits_to_f32(raw).astype(np.float64)
    return raw.astype(np.float64)


def rmsnorm(x, w, eps):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * w


def rotate(x, p, theta):
    """x: (heads, head_dim) at position p."""
    d = x.shape[-1]
    half = d // 2
    out = np.empty_like(x)
    for i in range(half):
        angle = p * theta ** (-2.0 * i / d)
        c, s = np.cos(angle), np.sin(angle)
        out[:, i] = x[:, i] * c - x[:, i + half] * s
        out[:, i + half] = x[:, i + half] * c + x[:, i] * s
    return out


def forward(pf, tokens):
    """Logits (len(tokens), vocab) of one sequence, every position (causal)."""
    cfg = pf.config
    eps, theta = cfg["norm_epsilon"], cfg["rope_theta"]
    H, KV, D = cfg["heads"], cfg["kv_heads"], cfg["head_dim"]
    group = H // KV
    emb = load_matrix(pf, "embed")
    x = emb[np.asarray(tokens)]
    n = len(tokens)
    for l in range(cfg["layers"]):
        p = f"layers.{l}."
        h = rmsnorm(x, pf.raw(p + "attn_norm"), eps)
        q = (h @ load_matrix(pf, p + "wq")).reshape(n, H, D)
        k = (h @ load_matrix(pf, p + "wk")).reshape(n, KV, D)
        v = (h @ load_matrix(pf, p + "wv")).reshape(n, KV, D)
        q = np.stack([rotate(q[t], t, theta) for t in range(n)])
        k = np.stack([rotate(k[t], t, theta) for t in range(n)])
        attn = np.zeros((n, H, D))
        for head in range(H):
            kvh = head // group
            for t in range(n):
                scores = k[: t + 1, kvh] @ q[t, head] / np.sqrt(D)
                w = np.exp(scores - scores.max())
                w /= w.sum()
                attn[t, head] = w @ v[: t + 1, kvh]
        x = x + attn.reshape(n, H * D) @ load_matrix(pf, p + "wo")
        h2 = rmsnorm(x, pf.raw(p + "mlp_norm"), eps)
        gate = h2 @ load_matrix(pf, p + "w_gate")
        up = h2 @ load_matrix(pf, p + "w_up")
        x = x + (gate / (1.0 + np.exp(-gate)) * up) @ load_matrix(pf, p + "w_down")
    return rmsnorm(x, pf.raw("final_norm"), eps) @ load_matrix(pf, "lm_head")
