#!/usr/bin/node
// Runs an ONNX model with ONNX Runtime (the onnxruntime-node npm package, CPU, graph
// optimisation level all, one thread) on inputs read from .npy files, and writes its outputs as
// .npy files: the independent reference of the importer's tests.
//
// Usage: node ort_run.js MODEL OUT_DIR INPUT.npy...   inputs in the graph's input order;
//        outputs written as OUT_DIR/0.npy, 1.npy, ... in the graph's output order.
// NODE_PATH must hold onnxruntime-node (bench/llama_peers.sh installs it under build/peers).
'use strict';
const path = require('path');
const ort = require('onnxruntime-node');

const {readNpy, writeNpy} = require(path.join(__dirname, 'npy.js'));

async function main() {
  const [model, outDir, ...inputs] = process.argv.slice(2);
  const session = await ort.InferenceSession.create(model, {graphOptimizationLevel: 'all', intraOpNumThreads: 1,
                                                            interOpNumThreads: 1});
  const feeds = {};
  session.inputNames.forEach((name, i) => { feeds[name] = readNpy(ort, inputs[i]); });
  const results = await session.run(feeds);
  session.outputNames.forEach((name, i) => writeNpy(path.join(outDir, `${i}.npy`), results[name]));
}

main().catch((e) => { console.error(`ort_run.js: ${e.message}`); process.exit(1); });
