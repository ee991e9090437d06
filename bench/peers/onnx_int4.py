"""Gives an exported graph ONNX Runtime's own int4 matmuls: every MatMul by an int4 weight of the
parameter file becomes a com.microsoft MatMulNBits (ORT's CPU int4 kernel, 4 bits, block_size =
group_size, zero point 8 by default) reading the file's nibbles and scales, in place of the
float32 matrix the exporter wrote (which is removed, with its external data file).

Layouts: the file has q4 (K/2, N) with the even k in the low nibble and scales (K/group, N);
MatMulNBits wants B (N, K/block, block/2) uint8, each column's K values packed low nibble first,
and scales (N * K/block,) column-major: both are transposes of the file's.
accuracy_level 0 dequantises and multiplies in float32; 4 quantises the activations to int8 per
block (faster, as onnxruntime-genai's CPU int4 models do).
"""

import os

import numpy as np
import onnx
from onnx import helper, numpy_helper
from onnx.external_data_helper import set_external_data

from llama_params import matrix_shapes

DATA_FILE = "int4_weights.data"


def use_matmul_nbits(model_dir, pf, accuracy_level=4):
    cfg = pf.config
    if cfg["weights"] != "int4":
        raise ValueError(f"{pf.path}: weights is {cfg['weights']!r}, MatMulNBits needs int4")
    block = cfg["group_size"]
    if block < 16 or block & (block - 1):
        raise ValueError(f"{pf.path}: group_size {block}, MatMulNBits needs a power of two >= 16")
    path = os.path.join(model_dir, "model.onnx")
    model = onnx.load(path, load_external_data=False)
    graph = model.graph
    shapes = {"model." + name: (name, k, n) for name, k, n in matrix_shapes(cfg)}

    kept = []
    for init in graph.initializer:
        if init.name not in shapes:
            kept.append(init)
            continue
        for entry in init.external_data:
            if entry.key == "location" and os.path.exists(os.path.join(model_dir, entry.value)):
                os.remove(os.path.join(model_dir, entry.value))
    del graph.initializer[:]
    graph.initializer.extend(kept)

    replaced = 0
    with open(os.path.join(model_dir, DATA_FILE), "wb") as data:
        def add_initializer(array, name):
            tensor = numpy_helper.from_array(np.ascontiguousarray(array), name)
            offset = data.tell()
            data.write(tensor.raw_data)
            set_external_data(tensor, DATA_FILE, offset=offset, length=len(tensor.raw_data))
            tensor.ClearField("raw_data")
            graph.initializer.append(tensor)

        for index, node in enumerate(graph.node):
            if node.op_type != "MatMul" or node.input[1] not in shapes:
                continue
            name, k, n = shapes[node.input[1]]
            q4 = pf.raw(name + ".q4")            # (k/2, n)
            scales = pf.raw(name + ".scales")    # (k/block, n)
            b = q4.T.reshape(n, k // block, block // 2)
            add_initializer(b, name + ".q4")
            add_initializer(scales.T.reshape(-1), name + ".scales")
            graph.node[index].CopyFrom(helper.make_node(
                "MatMulNBits", [node.input[0], name + ".q4", name + ".scales"], list(node.output),
                name=node.name or f"{name}.matmul", domain="com.microsoft", K=k, N=n, bits=4,
                block_size=block, accuracy_level=accuracy_level))
            replaced += 1
    if replaced != len(shapes):
        raise ValueError(f"{path}: replaced {replaced} MatMuls, expected {len(shapes)} (one per int4 matrix)")
    if not any(o.domain == "com.microsoft" for o in model.opset_import):
        model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    onnx.save(model, path)
