#!/usr/bin/node
// Runs an ONNX model with ONNX Runtime (the onnxruntime-node npm package, CPU, graph
// optimisation level all, one thread) on inputs read from .npy files, and writes its outputs as
// .npy files: the independent reference of the importer's tests.
//
// Usage: node ort_run.js MODEL OUT_DIR INPUT.npy...   inputs in the graph's input order;
//        outputs written as OUT_DIR/0.npy, 1.npy, ... in the graph's output order.
// NODE_PATH must hold onnxruntime-node (bench/llama_peers.sh installs it under build/peers).
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

const kTypes = {'<f4': ['float32', Float32Array], '<f8': ['float64', Float64Array],
                '<i8': ['int64', BigInt64Array], '<i4': ['int32', Int32Array], '|b1': ['bool', Uint8Array],
                '|u1': ['uint8', Uint8Array], '|i1': ['int8', Int8Array]};

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

function writeNpy(file, tensor) {
  const descr = Object.keys(kTypes).find((k) => kTypes[k][0] === tensor.type);
  const shape = tensor.dims.length === 1 ? `(${tensor.dims[0]},)` : `(${tensor.dims.join(', ')})`;
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shape}, }`;
  while ((10 + header.length + 1) % 64 !== 0) header += ' ';
  header += '\n';
  const head = Buffer.alloc(10);
  head.write('\x93NUMPY', 0, 'latin1');
  head[6] = 1;
  head[7] = 0;
  head.writeUInt16LE(header.length, 8);
  const data = tensor.type === 'bool' ? Buffer.from(tensor.data.map((v) => (v ? 1 : 0)))
                                      : Buffer.from(tensor.data.buffer, tensor.data.byteOffset, tensor.data.byteLength);
  fs.writeFileSync(file, Buffer.concat([head, Buffer.from(header, 'latin1'), data]));
}

async function main() {
  const [model, outDir, ...inputs] = process.argv.slice(2);
  const session = await ort.InferenceSession.create(model, {graphOptimizationLevel: 'all', intraOpNumThreads: 1,
                                                            interOpNumThreads: 1});
  const feeds = {};
  session.inputNames.forEach((name, i) => { feeds[name] = readNpy(inputs[i]); });
  const results = await session.run(feeds);
  session.outputNames.forEach((name, i) => writeNpy(path.join(outDir, `${i}.npy`), results[name]));
}

main().catch((e) => { console.error(`ort_run.js: ${e.message}`); process.exit(1); });
