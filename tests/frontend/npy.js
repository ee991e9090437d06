// .npy files as onnxruntime-node tensors, for the ONNX Runtime scripts (tests/frontend/ort_run.js,
// bench/peers/ort_model_bench.js): version 1.0 headers, little-endian float32/float64/int64/
// int32/int8/uint8/bool, C order.
'use strict';
const fs = require('fs');

const kTypes = {'<f4': ['float32', Float32Array], '<f8': ['float64', Float64Array],
                '<i8': ['int64', BigInt64Array], '<i4': ['int32', Int32Array], '|b1': ['bool', Uint8Array],
                '|u1': ['uint8', Uint8Array], '|i1': ['int8', Int8Array]};

function readNpy(ort, file) {
  const bytes = fs.readFileSync(file);
  const headerLen = bytes.readUInt16LE(8);
  const header = bytes.subarray(10, 10 + headerLen).toString('latin1');
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(',').map((s) => s.trim()).filter((s) => s).map(Number);
  if (!(descr in kTypes)) throw new Error(`${file}: element type ${descr} is not read`);
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

module.exports = {readNpy, writeNpy};
