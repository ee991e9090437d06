#!/usr/bin/node
// ONNX Runtime's median milliseconds per call of a model on inputs read from .npy files (CPU, graph
// optimisation level all, the given intra-op threads): the peer of bench/onnx_bench.cc, which
// writes the inputs it times relax with. Prints the median alone.
//
// Usage: node ort_model_bench.js MODEL REPS THREADS INPUT.npy...   inputs in the graph's order
'use strict';
const path = require('path');
const ort = require('onnxruntime-node');

const {readNpy} = require(path.join(__dirname, '..', '..', 'tests', 'frontend', 'npy.js'));

async function main() {
  const [model, repsText, threadsText, ...inputs] = process.argv.slice(2);
  const reps = Number(repsText);
  const session = await ort.InferenceSession.create(model, {graphOptimizationLevel: 'all',
    intraOpNumThreads: Number(threadsText), interOpNumThreads: 1});
  const feeds = {};
  session.inputNames.forEach((name, i) => { feeds[name] = readNpy(ort, inputs[i]); });
  const times = [];
  for (let r = 0; r < reps + 2; r++) {
    const s = process.hrtime.bigint();
    await session.run(feeds);
    const t = Number(process.hrtime.bigint() - s) / 1e6;
    if (r >= 2) times.push(t);
  }
  times.sort((a, b) => a - b);
  console.log(times[Math.floor(times.length / 2)]);
}

main().catch((e) => { console.error(`ort_model_bench.js: ${e.message}`); process.exit(1); });
