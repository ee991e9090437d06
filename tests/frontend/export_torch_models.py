#!/usr/bin/python3
"""Exports four transformer-shaped models, written here in plain torch, to ONNX.

The importer's tests run real-looking exports without downloading real checkpoints: the models
below have the architectures (and, in the `base` configuration, the widths and depths) of
BERT-base, GPT-2 small and Whisper-tiny, with random weights drawn from fixed seeds, and are
exported by torch.onnx.export (opset 17, constant folding, symbolic batch/sequence axes), so the
graphs hold what such exports hold: Shape -> Gather -> Unsqueeze -> Concat -> Reshape chains for
the attention heads, Range for the positions, dynamic Slices of position tables and of the
causal-mask buffer, LayerNormalization, the erf and tanh forms of GELU, a past key/value cache.

    /usr/bin/python3 tests/frontend/export_torch_models.py OUT_DIR [--config small|base|tiny]
                                                                   [--references] [--models LIST]

writes OUT_DIR/bert.onnx, gpt2.onnx, whisper_encoder.onnx and whisper_decoder.onnx:

  bert.onnx             input_ids, attention_mask, token_type_ids (batch, sequence) int64
                        -> last_hidden_state (batch, sequence, hidden)
  gpt2.onnx             input_ids (batch, sequence) int64,
                        attention_mask (batch, past_sequence + sequence) int64,
                        past_key_i, past_value_i (batch, heads, past_sequence, head_dim) per layer
                        -> logits (batch, sequence, vocab),
                           present_key_i, present_value_i (batch, heads, past_sequence + sequence,
                           head_dim) per layer
  whisper_encoder.onnx  input_features (batch, 80, frames) -> last_hidden_state (batch, time, d),
                        time = (frames - 1) // 2 + 1
  whisper_decoder.onnx  input_ids (batch, tokens) int64, encoder_hidden_states (batch, time, d)
                        -> logits (batch, tokens, vocab)

Configurations: `base` has the real sizes; `small` (the default) the real widths and
vocabularies with 2 layers (Whisper keeps its 4 + 4); `tiny` hidden 64, 4 heads, FFN 256,
2 layers, vocabulary 256 (not 512, to keep the committed set under 3 MB), 128 positions (Whisper:
256 encoder positions with the 80 mel bins, 64 decoder positions), files of 0.5-0.8 MB.

What torch puts in the files, kept as is since real exports have it too: the tied output
embedding of GPT-2 and of the Whisper decoder is stored twice (the embedding table for Gather, and
its transpose, folded, for the logits MatMul), and the Whisper encoder's output declares its last
axis with the made-up dim_param `LayerNormalizationlast_hidden_state_dim_2` (torch's shape
inference loses it at the dynamic Slice of the position table) rather than d.

With --references the script also writes, for each model and three input sizes, random inputs
`<model>.<k>.in<i>.npy` (k the size index, i the graph input index) and the outputs ONNX Runtime
computes from them, `<model>.<k>.out<j>.npy`, by running tests/frontend/ort_run.js (node with
onnxruntime-node under build/peers/node_modules, or NODE_PATH), and prints how far each is from
what the torch model computes. The tiny set made this way is
committed in tests/frontend/data/torch_tiny/, so the tests compare the importer with ONNX Runtime
offline; the larger configurations are made on demand (they are hundreds of MB).

Needs torch (Debian's python3-torch, for /usr/bin/python3), numpy, and for --references node.
"""

import argparse
import math
import os
import subprocess
import sys
import tempfile
import warnings

import numpy as np
import torch
from torch import nn
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OPSET = 17

CONFIGS = {
    'base': {
        'bert': dict(hidden=768, heads=12, ffn=3072, layers=12, vocab=30522, positions=512,
                     types=2),
        'gpt2': dict(hidden=768, heads=12, layers=12, vocab=50257, positions=1024),
        'whisper': dict(d=384, heads=6, ffn=1536, enc_layers=4, dec_layers=4, vocab=51865,
                        mels=80, enc_positions=1500, dec_positions=448),
    },
    'small': {
        'bert': dict(hidden=768, heads=12, ffn=3072, layers=2, vocab=30522, positions=512,
                     types=2),
        'gpt2': dict(hidden=768, heads=12, layers=2, vocab=50257, positions=1024),
        'whisper': dict(d=384, heads=6, ffn=1536, enc_layers=4, dec_layers=4, vocab=51865,
                        mels=80, enc_positions=1500, dec_positions=448),
    },
    'tiny': {
        'bert': dict(hidden=64, heads=4, ffn=256, layers=2, vocab=256, positions=128, types=2),
        'gpt2': dict(hidden=64, heads=4, layers=2, vocab=256, positions=128),
        'whisper': dict(d=64, heads=4, ffn=256, enc_layers=2, dec_layers=2, vocab=256, mels=80,
                        enc_positions=256, dec_positions=64),
    },
}


def init_weights(module, std=0.02):
    """Small normal weights and biases; LayerNorm scales near 1 and shifts near 0."""
    for m in module.modules():
        if isinstance(m, (nn.Linear, nn.Conv1d, nn.Embedding)):
            nn.init.normal_(m.weight, 0.0, std)
            if getattr(m, 'bias', None) is not None:
                nn.init.normal_(m.bias, 0.0, std)
        elif isinstance(m, nn.LayerNorm):
            nn.init.normal_(m.weight, 1.0, 0.1)
            nn.init.normal_(m.bias, 0.0, 0.05)
    for name, p in module.named_parameters(recurse=False):
        nn.init.normal_(p, 0.0, std)
    return module


def split_heads(x, heads, head_dim):
    """(batch, seq, heads * head_dim) -> (batch, heads, seq, head_dim); batch and seq are read
    from the tensor at run time, so the export holds Shape -> Gather -> Unsqueeze -> Concat ->
    Reshape."""
    return x.view(x.size(0), x.size(1), heads, head_dim).permute(0, 2, 1, 3)


def merge_heads(x, hidden):
    """(batch, heads, seq, head_dim) -> (batch, seq, hidden)."""
    x = x.permute(0, 2, 1, 3).contiguous()
    return x.view(x.size(0), x.size(1), hidden)


def gelu_tanh(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


# ---------------------------------------------------------------------------------------------
# BERT: post-LN encoder.

class BertLayer(nn.Module):
    def __init__(self, hidden, heads, ffn):
        super().__init__()
        self.heads = heads
        self.head_dim = hidden // heads
        self.query = nn.Linear(hidden, hidden)
        self.key = nn.Linear(hidden, hidden)
        self.value = nn.Linear(hidden, hidden)
        self.attn_out = nn.Linear(hidden, hidden)
        self.attn_norm = nn.LayerNorm(hidden, eps=1e-12)
        self.intermediate = nn.Linear(hidden, ffn)
        self.output = nn.Linear(ffn, hidden)
        self.out_norm = nn.LayerNorm(hidden, eps=1e-12)

    def forward(self, x, ext_mask):
        q = split_heads(self.query(x), self.heads, self.head_dim)
        k = split_heads(self.key(x), self.heads, self.head_dim)
        v = split_heads(self.value(x), self.heads, self.head_dim)
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        probs = torch.softmax(scores + ext_mask, dim=-1)
        context = merge_heads(torch.matmul(probs, v), self.heads * self.head_dim)
        x = self.attn_norm(self.attn_out(context) + x)
        h = F.gelu(self.intermediate(x))
        return self.out_norm(self.output(h) + x)


class Bert(nn.Module):
    def __init__(self, hidden, heads, ffn, layers, vocab, positions, types):
        super().__init__()
        self.word = nn.Embedding(vocab, hidden)
        self.position = nn.Embedding(positions, hidden)
        self.token_type = nn.Embedding(types, hidden)
        self.norm = nn.LayerNorm(hidden, eps=1e-12)
        self.layers = nn.ModuleList([BertLayer(hidden, heads, ffn) for _ in range(layers)])

    def forward(self, input_ids, attention_mask, token_type_ids):
        positions = torch.arange(input_ids.size(1), dtype=torch.long, device=input_ids.device)
        x = self.word(input_ids) + self.position(positions)[None] + self.token_type(token_type_ids)
        x = self.norm(x)
        ext_mask = (1.0 - attention_mask[:, None, None, :].float()) * -10000.0
        for layer in self.layers:
            x = layer(x, ext_mask)
        return x


# ---------------------------------------------------------------------------------------------
# GPT-2: pre-LN decoder with a key/value cache.

class Gpt2Block(nn.Module):
    def __init__(self, hidden, heads, positions):
        super().__init__()
        self.heads = heads
        self.head_dim = hidden // heads
        self.ln_1 = nn.LayerNorm(hidden, eps=1e-5)
        self.c_attn = nn.Linear(hidden, 3 * hidden)
        self.c_proj = nn.Linear(hidden, hidden)
        self.ln_2 = nn.LayerNorm(hidden, eps=1e-5)
        self.c_fc = nn.Linear(hidden, 4 * hidden)
        self.mlp_proj = nn.Linear(4 * hidden, hidden)
        causal = torch.tril(torch.ones(positions, positions, dtype=torch.bool))
        self.register_buffer('bias', causal, persistent=False)

    def forward(self, x, mask_term, past_key, past_value):
        hidden = self.heads * self.head_dim
        q, k, v = self.c_attn(self.ln_1(x)).split(hidden, dim=2)
        q = split_heads(q, self.heads, self.head_dim)
        k = torch.cat([past_key, split_heads(k, self.heads, self.head_dim)], dim=2)
        v = torch.cat([past_value, split_heads(v, self.heads, self.head_dim)], dim=2)
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        seq = q.size(2)
        total = k.size(2)
        past_len = total - seq
        causal = self.bias[past_len:past_len + seq, :past_len + seq]
        scores = torch.where(causal, scores, torch.tensor(torch.finfo(scores.dtype).min))
        probs = torch.softmax(scores + mask_term, dim=-1)
        a = self.c_proj(merge_heads(torch.matmul(probs, v), hidden))
        x = x + a
        x = x + self.mlp_proj(gelu_tanh(self.c_fc(self.ln_2(x))))
        return x, k, v


class Gpt2(nn.Module):
    def __init__(self, hidden, heads, layers, vocab, positions):
        super().__init__()
        self.wte = nn.Embedding(vocab, hidden)
        self.wpe = nn.Embedding(positions, hidden)
        self.blocks = nn.ModuleList([Gpt2Block(hidden, heads, positions) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(hidden, eps=1e-5)

    def forward(self, input_ids, attention_mask, *past):
        seq = input_ids.size(1)
        past_len = past[0].size(2)
        positions = torch.arange(past_len, past_len + seq, dtype=torch.long,
                                 device=input_ids.device)
        x = self.wte(input_ids) + self.wpe(positions)[None]
        mask_term = (1.0 - attention_mask[:, None, None, :].float()) * -10000.0
        presents = []
        for i, block in enumerate(self.blocks):
            x, k, v = block(x, mask_term, past[2 * i], past[2 * i + 1])
            presents += [k, v]
        x = self.ln_f(x)
        logits = x @ self.wte.weight.t()
        return (logits, *presents)


# ---------------------------------------------------------------------------------------------
# Whisper: pre-LN encoder (convolutional front end) and decoder (causal self-attention,
# cross-attention).

class WhisperAttention(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.head_dim = d // heads
        self.scale = self.head_dim ** -0.5
        self.q_proj = nn.Linear(d, d)
        self.k_proj = nn.Linear(d, d, bias=False)
        self.v_proj = nn.Linear(d, d)
        self.out_proj = nn.Linear(d, d)

    def forward(self, x, source=None, mask=None):
        source = x if source is None else source
        q = split_heads(self.q_proj(x) * self.scale, self.heads, self.head_dim)
        k = split_heads(self.k_proj(source), self.heads, self.head_dim)
        v = split_heads(self.v_proj(source), self.heads, self.head_dim)
        scores = torch.matmul(q, k.transpose(-1, -2))
        if mask is not None:
            scores = scores + mask
        probs = torch.softmax(scores, dim=-1)
        return self.out_proj(merge_heads(torch.matmul(probs, v), self.heads * self.head_dim))


class WhisperLayer(nn.Module):
    def __init__(self, d, heads, ffn, cross):
        super().__init__()
        self.self_attn_norm = nn.LayerNorm(d)
        self.self_attn = WhisperAttention(d, heads)
        self.cross_attn_norm = nn.LayerNorm(d) if cross else None
        self.cross_attn = WhisperAttention(d, heads) if cross else None
        self.mlp_norm = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, ffn)
        self.fc2 = nn.Linear(ffn, d)

    def forward(self, x, mask=None, encoder_states=None):
        x = x + self.self_attn(self.self_attn_norm(x), mask=mask)
        if self.cross_attn is not None:
            x = x + self.cross_attn(self.cross_attn_norm(x), source=encoder_states)
        return x + self.fc2(F.gelu(self.fc1(self.mlp_norm(x))))


class WhisperEncoder(nn.Module):
    def __init__(self, d, heads, ffn, enc_layers, mels, enc_positions, **_):
        super().__init__()
        self.conv1 = nn.Conv1d(mels, d, kernel_size=3, padding=1)
        self.conv2 = nn.Conv1d(d, d, kernel_size=3, stride=2, padding=1)
        self.pos = nn.Parameter(torch.empty(enc_positions, d))
        self.layers = nn.ModuleList([WhisperLayer(d, heads, ffn, False) for _ in range(enc_layers)])
        self.norm = nn.LayerNorm(d)

    def forward(self, input_features):
        x = F.gelu(self.conv1(input_features))
        x = F.gelu(self.conv2(x))
        x = x.permute(0, 2, 1)
        x = x + self.pos[: x.shape[1]]
        for layer in self.layers:
            x = layer(x)
        return self.norm(x)


class WhisperDecoder(nn.Module):
    def __init__(self, d, heads, ffn, dec_layers, vocab, dec_positions, **_):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.empty(dec_positions, d))
        self.layers = nn.ModuleList([WhisperLayer(d, heads, ffn, True) for _ in range(dec_layers)])
        self.norm = nn.LayerNorm(d)

    def forward(self, input_ids, encoder_hidden_states):
        tokens = input_ids.shape[1]
        x = self.embed(input_ids) + self.pos[:tokens]
        mask = torch.full((tokens, tokens), float('-inf'), device=x.device).triu(1)
        for layer in self.layers:
            x = layer(x, mask=mask, encoder_states=encoder_hidden_states)
        x = self.norm(x)
        return x @ self.embed.weight.t()


# ---------------------------------------------------------------------------------------------
# Export.

def build(name, config):
    """The model `name` of `config`, its example inputs, input and output names, dynamic axes."""
    c = CONFIGS[config]
    seed = {'bert': 1, 'gpt2': 2, 'whisper_encoder': 3, 'whisper_decoder': 4}[name]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(100 + seed)
    if name == 'bert':
        b = c['bert']
        model = Bert(**b)
        batch, seq = 2, 8
        ids = torch.randint(0, b['vocab'], (batch, seq), generator=g)
        mask = torch.ones(batch, seq, dtype=torch.long)
        mask[1, 5:] = 0
        types = torch.randint(0, b['types'], (batch, seq), generator=g)
        args = (ids, mask, types)
        inputs = ['input_ids', 'attention_mask', 'token_type_ids']
        outputs = ['last_hidden_state']
        axes = {n: {0: 'batch', 1: 'sequence'} for n in inputs + outputs}
    elif name == 'gpt2':
        p = c['gpt2']
        model = Gpt2(**p)
        batch, seq, past = 2, 3, 4
        head_dim = p['hidden'] // p['heads']
        ids = torch.randint(0, p['vocab'], (batch, seq), generator=g)
        mask = torch.ones(batch, past + seq, dtype=torch.long)
        pasts = [torch.randn(batch, p['heads'], past, head_dim, generator=g)
                 for _ in range(2 * p['layers'])]
        args = (ids, mask, *pasts)
        names = [f'{kv}_{i}' for i in range(p['layers']) for kv in ('key', 'value')]
        inputs = ['input_ids', 'attention_mask'] + ['past_' + n for n in names]
        outputs = ['logits'] + ['present_' + n for n in names]
        axes = {'input_ids': {0: 'batch', 1: 'sequence'},
                'attention_mask': {0: 'batch', 1: 'past_sequence + sequence'},
                'logits': {0: 'batch', 1: 'sequence'}}
        for n in names:
            axes['past_' + n] = {0: 'batch', 2: 'past_sequence'}
            axes['present_' + n] = {0: 'batch', 2: 'past_sequence + sequence'}
    elif name == 'whisper_encoder':
        w = c['whisper']
        model = WhisperEncoder(**w)
        features = torch.randn(2, w['mels'], 20, generator=g)
        args = (features,)
        inputs = ['input_features']
        outputs = ['last_hidden_state']
        axes = {'input_features': {0: 'batch', 2: 'frames'},
                'last_hidden_state': {0: 'batch', 1: 'time'}}
    elif name == 'whisper_decoder':
        w = c['whisper']
        model = WhisperDecoder(**w)
        ids = torch.randint(0, w['vocab'], (2, 5), generator=g)
        states = torch.randn(2, 10, w['d'], generator=g)
        args = (ids, states)
        inputs = ['input_ids', 'encoder_hidden_states']
        outputs = ['logits']
        axes = {'input_ids': {0: 'batch', 1: 'tokens'},
                'encoder_hidden_states': {0: 'batch', 1: 'time'},
                'logits': {0: 'batch', 1: 'tokens'}}
    else:
        raise ValueError(name)
    init_weights(model)
    return model.eval(), args, inputs, outputs, axes


MODELS = ['bert', 'gpt2', 'whisper_encoder', 'whisper_decoder']


def export(name, config, out_dir):
    """Writes OUT_DIR/<name>.onnx; returns its path and the torch model."""
    model, args, inputs, outputs, axes = build(name, config)
    path = os.path.join(out_dir, name + '.onnx')
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter('ignore')
        torch.onnx.export(model, args, path, input_names=inputs, output_names=outputs,
                          dynamic_axes=axes, opset_version=OPSET, do_constant_folding=True)
    print(f'{path} ({os.path.getsize(path)} bytes)', flush=True)
    return path, model


# ---------------------------------------------------------------------------------------------
# Reference inputs and ONNX Runtime outputs.

SIZES = {
    'bert': [(1, 7), (2, 16), (3, 33)],                 # (batch, sequence)
    'gpt2': [(1, 5, 0), (2, 1, 9), (1, 3, 17)],         # (batch, sequence, past)
    'whisper_encoder': [(1, 16), (2, 30), (1, 61)],     # (batch, frames)
    'whisper_decoder': [(1, 4, 8), (2, 9, 15), (1, 1, 31)],  # (batch, tokens, time)
}


def reference_inputs(name, config, k):
    """The random inputs of `name` at size index k, in graph input order."""
    c = CONFIGS[config]
    rng = np.random.default_rng(1000 * (MODELS.index(name) + 1) + k)
    if name == 'bert':
        b = c['bert']
        batch, seq = SIZES[name][k]
        ids = rng.integers(0, b['vocab'], (batch, seq), dtype=np.int64)
        mask = np.ones((batch, seq), np.int64)
        if seq > 2:
            mask[batch - 1, seq - seq // 3:] = 0  # trailing padding in the last row
        types = np.zeros((batch, seq), np.int64)
        types[:, seq // 2:] = 1
        return [ids, mask, types]
    if name == 'gpt2':
        p = c['gpt2']
        batch, seq, past = SIZES[name][k]
        head_dim = p['hidden'] // p['heads']
        ids = rng.integers(0, p['vocab'], (batch, seq), dtype=np.int64)
        mask = np.ones((batch, past + seq), np.int64)
        if batch > 1 and past > 2:
            mask[1, :2] = 0  # left padding in the second row
        pasts = [rng.standard_normal((batch, p['heads'], past, head_dim)).astype(np.float32)
                 for _ in range(2 * p['layers'])]
        return [ids, mask] + pasts
    if name == 'whisper_encoder':
        w = c['whisper']
        batch, frames = SIZES[name][k]
        return [rng.standard_normal((batch, w['mels'], frames)).astype(np.float32)]
    if name == 'whisper_decoder':
        w = c['whisper']
        batch, tokens, time = SIZES[name][k]
        ids = rng.integers(0, w['vocab'], (batch, tokens), dtype=np.int64)
        states = rng.standard_normal((batch, time, w['d'])).astype(np.float32)
        return [ids, states]
    raise ValueError(name)


def ort_run(model_path, input_paths, out_dir):
    """Runs tests/frontend/ort_run.js; returns the output files in graph output order."""
    env = dict(os.environ)
    env.setdefault('NODE_PATH', os.path.join(ROOT, 'build', 'peers', 'node_modules'))
    runner = os.path.join(ROOT, 'tests', 'frontend', 'ort_run.js')
    subprocess.run(['node', runner, model_path, out_dir] + input_paths, env=env, check=True)
    files = []
    while os.path.exists(os.path.join(out_dir, f'{len(files)}.npy')):
        files.append(os.path.join(out_dir, f'{len(files)}.npy'))
    return files


def write_references(name, config, out_dir, model_path, model):
    for k in range(len(SIZES[name])):
        inputs = reference_inputs(name, config, k)
        input_paths = []
        for i, array in enumerate(inputs):
            path = os.path.join(out_dir, f'{name}.{k}.in{i}.npy')
            np.save(path, array)
            input_paths.append(path)
        with torch.no_grad():
            expected = model(*[torch.from_numpy(a) for a in inputs])
        expected = expected if isinstance(expected, tuple) else (expected,)
        with tempfile.TemporaryDirectory() as tmp:
            produced = [np.load(f) for f in ort_run(model_path, input_paths, tmp)]
        if len(produced) != len(expected):
            sys.exit(f'export_torch_models.py: {model_path}: ONNX Runtime gave {len(produced)} '
                     f'outputs, torch {len(expected)}')
        for j, (array, want) in enumerate(zip(produced, expected)):
            path = os.path.join(out_dir, f'{name}.{k}.out{j}.npy')
            np.save(path, array)
            error = float(np.max(np.abs(array - want.numpy()))) if array.size else 0.0
            print(f'{path} {tuple(array.shape)} max |ORT - torch| = {error:.3g}', flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('out_dir')
    parser.add_argument('--config', choices=sorted(CONFIGS), default='small')
    parser.add_argument('--references', action='store_true',
                        help='also write random inputs and ONNX Runtime outputs at three sizes')
    parser.add_argument('--models', default=','.join(MODELS),
                        help='comma-separated subset of ' + ','.join(MODELS))
    args = parser.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    torch.set_num_threads(1)
    for name in args.models.split(','):
        if name not in MODELS:
            sys.exit(f'export_torch_models.py: unknown model {name}')
        path, model = export(name, args.config, args.out_dir)
        if args.references:
            write_references(name, args.config, args.out_dir, path, model)


if __name__ == '__main__':
    main()
