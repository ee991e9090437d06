#!/usr/bin/node
// ONNX Runtime's median milliseconds per call of a model on inputs read from .npy files (CPU, graph
// optimisation level all, the given intra-op threads): the peer of bench/onnx_bench.cc, which
// writes the inputs it times relax with. Prints the median alone.
//
// Usage: node ort_model_bench.js MODEL REPS THREADS INPUT.npy...   inputs in the graph's order
'use strict';
const fs = require('fs');
const ort = require('onnxruntime-node');

const kTypes = {'<f4': ['float32', Float32Array], '<i8': ['int64', BigInt64Array], '<i4': ['int32', Int32Array],
                '|b1': ['bool', Uint8Array]};

function readNpy(file) {
  const bytes = fs.readFileSync(file);
  const headerLen = bytes.readUInt16LE(8);
  const header = bytes.subarray(10, 10 + headerLen).toString('latin1');
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(',').map((s) => s.trim()).filter((s) => s).map(Number);
  const [type, Array] = kTypes[descr];
  const data = bytes.subarray(10 + headerLen);
  const copy = new Uint8Array(data.length);
  copy.set(data);
  return new ort.Tensor(type, new Array(copy.buffer), shape);
}

async function main() {
  const [model, repsText, threadsText, ...inputs] = process.argv.slice(2);
  const reps = Number(repsText);
  const session = await ort.InferenceSession.create(model, {graphOptimizationLevel: 'all',
    intraOpNumThreads: Number(threadsText), interOpNumThreads: 1});
  const feeds = {};
  session.inputNames.forEach((name, i) => { feeds[name] = readNpy(inputs[i]); });
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
