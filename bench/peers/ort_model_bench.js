#!/usr/bin/node
// ONNX Runtime's median milliseconds per call of a model on one random float32 input of the given
// shape (CPU, graph optimisation level all, the given intra-op threads): the peer of
// bench/onnx_bench.cc. Prints the median alone.
//
// Usage: node ort_model_bench.js MODEL SHAPE(AxBxC...) REPS THREADS
'use strict';
const ort = require('onnxruntime-node');

async function main() {
  const [model, shapeText, repsText, threadsText] = process.argv.slice(2);
  const shape = shapeText.split('x').map(Number);
  const reps = Number(repsText);
  const session = await ort.InferenceSession.create(model, {graphOptimizationLevel: 'all',
    intraOpNumThreads: Number(threadsText), interOpNumThreads: 1});
  const n = shape.reduce((a, b) => a * b, 1);
  let seed = 1;
  const data = new Float32Array(n).map(() => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 1073741824 - 1; });
  const feeds = {[session.inputNames[0]]: new ort.Tensor('float32', data, shape)};
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
