#!/usr/bin/node
// The ONNX Runtime peer of the language-model benchmark: runs the graph written by llama_onnx.py
// with the CPU execution provider of the onnxruntime-node npm package.
//
// Usage: node ort_bench.js MODEL_DIR [--threads 2] [--prefill 128,512] [--decode-context 128,1024]
//                          [--decode-batch 1,4] [--steps 8] [--reps 3] [--out FILE]
//          one JSON line per case on stdout (and appended to FILE), as llama_torch.py
//        node ort_bench.js MODEL_DIR --check --tokens 1,2,3 [--split 2] --out logits.json
//          the last-token logits of the prompt by one prefill, and by a prefill of all but the
//          last SPLIT tokens followed by SPLIT one-token decode steps (the cache path)
// NODE_PATH (or a node_modules above this file's directory) must hold onnxruntime-node; the bench
// script installs it with `npm install --ignore-scripts onnxruntime-node` under build/peers.

'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const ort = require('onnxruntime-node');

function parseArgs(argv) {
  const a = {threads: 2, prefill: [128, 512], decodeContext: [128, 1024], decodeBatch: [1, 4],
             steps: 8, reps: 3, out: null, check: false, tokens: [1, 2, 3, 4, 5], split: 2};
  const list = (s) => s.split(',').filter((v) => v).map(Number);
  const keys = {'--threads': ['threads', Number], '--prefill': ['prefill', list],
                '--decode-context': ['decodeContext', list], '--decode-batch': ['decodeBatch', list],
                '--steps': ['steps', Number], '--reps': ['reps', Number], '--out': ['out', String],
                '--tokens': ['tokens', list], '--split': ['split', Number]};
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--check') { a.check = true; continue; }
    const k = keys[argv[i]];
    if (k) { a[k[0]] = k[1](argv[++i]); continue; }
    if (a.dir === undefined && !argv[i].startsWith('--')) { a.dir = argv[i]; continue; }
    throw new Error(`ort_bench.js: unknown argument '${argv[i]}'`);
  }
  if (a.dir === undefined) throw new Error('ort_bench.js: expected MODEL_DIR (written by llama_onnx.py)');
  return a;
}

// A deterministic generator (xorshift32) for tokens and cache contents.
function rng(seed) {
  let s = seed >>> 0 || 1;
  return () => { s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0; return s / 4294967296; };
}

class Runner {
  constructor(session, meta) { this.session = session; this.meta = meta; }

  tokens(rows) {  // rows: array of arrays of token ids, all of one length
    const data = BigInt64Array.from(rows.flat().map((t) => BigInt(t)));
    return new ort.Tensor('int64', data, [rows.length, rows[0].length]);
  }

  cache(batch, length, seed) {  // random (seed) or zero-length past, per layer k and v
    const {layers, kv_heads: kv, head_dim: d} = this.meta;
    const next = rng(seed);
    const feeds = {};
    for (let l = 0; l < layers; l++) {
      for (const kind of ['k', 'v']) {
        const data = new Float32Array(batch * kv * length * d);
        for (let i = 0; i < data.length; i++) data[i] = 2 * next() - 1;
        feeds[`past_${kind}.${l}`] = new ort.Tensor('float32', data, [batch, kv, length, d]);
      }
    }
    return feeds;
  }

  async step(tokens, past) {  // returns {logits, past: the present cache as next past}
    const out = await this.session.run({tokens, ...past});
    const next = {};
    for (let l = 0; l < this.meta.layers; l++) {
      for (const kind of ['k', 'v']) next[`past_${kind}.${l}`] = out[`present_${kind}.${l}`];
    }
    return {logits: out.logits, past: next};
  }

  argmax(logits) {  // (batch, vocab) -> rows of one token
    const [b, v] = logits.dims;
    const rows = [];
    for (let i = 0; i < b; i++) {
      let best = 0;
      for (let j = 1; j < v; j++) if (logits.data[i * v + j] > logits.data[i * v + best]) best = j;
      rows.push([best]);
    }
    return rows;
  }
}

async function timed(fn, reps) {
  await fn();  // warm-up
  const times = [];
  for (let r = 0; r < reps; r++) {
    const t = process.hrtime.bigint();
    await fn();
    times.push(Number(process.hrtime.bigint() - t) / 1e9);
  }
  return times;
}

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1;
                         return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const meta = JSON.parse(fs.readFileSync(path.join(args.dir, 'model.json'), 'utf8'));
  const options = {executionProviders: ['cpu'], intraOpNumThreads: args.threads, interOpNumThreads: 1,
                   executionMode: 'sequential', graphOptimizationLevel: 'all'};
  let t = process.hrtime.bigint();
  const session = await ort.InferenceSession.create(path.join(args.dir, 'model.onnx'), options);
  const loadS = Number(process.hrtime.bigint() - t) / 1e9;
  const run = new Runner(session, meta);

  if (args.check) {
    const whole = await run.step(run.tokens([args.tokens]), run.cache(1, 0, 1));
    const n = args.tokens.length - args.split;
    let r = await run.step(run.tokens([args.tokens.slice(0, n)]), run.cache(1, 0, 1));
    for (let i = n; i < args.tokens.length; i++) r = await run.step(run.tokens([[args.tokens[i]]]), r.past);
    const result = {peer: 'onnxruntime', weights: meta.weights, tokens: args.tokens, split: args.split,
                    logits: Array.from(whole.logits.data), logits_decoded: Array.from(r.logits.data)};
    if (args.out) fs.writeFileSync(args.out, JSON.stringify(result));
    console.log(JSON.stringify({...result, logits: result.logits.slice(0, 8), logits_decoded: undefined}));
    return;
  }

  const common = {peer: 'onnxruntime', weights: meta.weights, compute: meta.compute, threads: args.threads,
                  onnxruntime: ort.env.versions.common, load_s: Math.round(loadS * 100) / 100};
  const emit = (r) => {
    const line = JSON.stringify({...common, ...r, seconds: r.seconds.map((s) => Math.round(s * 1e4) / 1e4),
                                 load: os.loadavg()[0]});
    console.log(line);
    if (args.out) fs.appendFileSync(args.out, line + '\n');
  };
  for (const n of args.prefill) {
    const next = rng(n);
    const tokens = run.tokens([Array.from({length: n}, () => Math.floor(next() * meta.vocab))]);
    const past = run.cache(1, 0, 1);
    const times = await timed(() => run.step(tokens, past), args.reps);
    emit({case: 'prefill', batch: 1, n, tokens_per_s: n / median(times), best_tokens_per_s: n / Math.min(...times),
          seconds: times});
  }
  for (const c of args.decodeContext) {
    for (const b of args.decodeBatch) {
      const start = run.cache(b, c, 7);
      const next = rng(11);
      const first = run.tokens(Array.from({length: b}, () => [Math.floor(next() * meta.vocab)]));
      const times = await timed(async () => {
        let tokens = first;
        let past = start;
        for (let s = 0; s < args.steps; s++) {
          const r = await run.step(tokens, past);
          tokens = run.tokens(run.argmax(r.logits));
          past = r.past;
        }
      }, args.reps);
      emit({case: 'decode', batch: b, context: c, steps: args.steps, tokens_per_s: b * args.steps / median(times),
            best_tokens_per_s: b * args.steps / Math.min(...times), seconds: times});
    }
  }
}

main().catch((e) => { console.error(e.stack || String(e)); process.exit(1); });
