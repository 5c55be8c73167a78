"""Writes ONNX models with the onnx package (Debian's python3-onnx), for canon/onnx's tests.

Usage: python3 write_models.py DIR. Writes DIR/<name>.onnx (and external data files) and
DIR/expect.json: per model, per tensor name, the dtype (onnx's enum), dims and the hex of its bytes in
row-major little-endian order (numpy's tobytes of onnx.numpy_helper.to_array).
"""
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
expect = {}


def record(model_name, tensors):
    expect[model_name] = {
        name: {"dtype": int(t.data_type), "dims": list(t.dims),
               "hex": np.ascontiguousarray(numpy_helper.to_array(t)).astype(
                   numpy_helper.to_array(t).dtype.newbyteorder("<")).tobytes().hex()}
        for name, t in tensors.items()
    }


def graph_model(initializers, nodes, inputs=None, outputs=None, **kw):
    inputs = inputs or [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])]
    outputs = outputs or [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4])]
    g = helper.make_graph(nodes, "g", inputs, outputs, initializer=initializers)
    m = helper.make_model(g, producer_name="stdiff-test", opset_imports=[helper.make_opsetid("", 13)], **kw)
    return m


rng = np.random.default_rng(7)

# 1. raw_data initializers of several types, a Constant node, metadata
w = numpy_helper.from_array(rng.standard_normal((4, 4)).astype(np.float32), "w")
b16 = numpy_helper.from_array(rng.standard_normal((3,)).astype(np.float16), "b16")
i64 = numpy_helper.from_array(np.array([[1, -2, 3]], dtype=np.int64), "i64")
u8 = numpy_helper.from_array(np.arange(5, dtype=np.uint8), "u8")
dbl = numpy_helper.from_array(np.array([1.5, -2.25], dtype=np.float64), "dbl")
const = helper.make_tensor("c", TensorProto.FLOAT, [2], [0.5, -1.0])
nodes = [helper.make_node("Constant", [], ["c_out"], value=const),
         helper.make_node("MatMul", ["x", "w"], ["y"])]
m = graph_model([w, b16, i64, u8, dbl], nodes)
helper.set_model_props(m, {"author": "test", "license": "MIT"})
onnx.save(m, os.path.join(out, "raw.onnx"))
record("raw.onnx", {"w": w, "b16": b16, "i64": i64, "u8": u8, "dbl": dbl, "c_out": const})

# 2. typed fields: float_data, int32_data (int8, bool, float16 bits, int32), int64_data, double_data, uint64_data
tf = helper.make_tensor("tf", TensorProto.FLOAT, [2, 2], [1.0, 2.0, -3.5, 4.25])
ti8 = helper.make_tensor("ti8", TensorProto.INT8, [4], [-1, 2, -128, 127])
tbool = helper.make_tensor("tbool", TensorProto.BOOL, [3], [True, False, True])
ti32 = helper.make_tensor("ti32", TensorProto.INT32, [3], [-7, 0, 2147483647])
tf16 = helper.make_tensor("tf16", TensorProto.FLOAT16, [2], np.array([1.5, -2.0], dtype=np.float16))
ti64 = helper.make_tensor("ti64", TensorProto.INT64, [2], [-(2**40), 5])
tdbl = helper.make_tensor("tdbl", TensorProto.DOUBLE, [2], [3.25, -0.5])
tu64 = helper.make_tensor("tu64", TensorProto.UINT64, [2], [2**63 + 5, 1])
tu32 = helper.make_tensor("tu32", TensorProto.UINT32, [2], [4000000000, 2])
typed = [tf, ti8, tbool, ti32, tf16, ti64, tdbl, tu64, tu32]
m = graph_model(typed, [helper.make_node("Identity", ["x"], ["y"])])
onnx.save(m, os.path.join(out, "typed.onnx"))
record("typed.onnx", {t.name: t for t in typed})

# 3. external data: every tensor of at least 64 bytes in one file beside the model
big = numpy_helper.from_array(rng.standard_normal((16, 8)).astype(np.float32), "big")
small = numpy_helper.from_array(np.array([1.0, 2.0], dtype=np.float32), "small")
big2 = numpy_helper.from_array(rng.standard_normal((32,)).astype(np.float64), "big2")
m = graph_model([big, small, big2], [helper.make_node("Identity", ["x"], ["y"])])
onnx.save_model(m, os.path.join(out, "external.onnx"), save_as_external_data=True, all_tensors_to_one_file=True,
                location="external.onnx.data", size_threshold=64)
record("external.onnx", {"big": big, "small": small, "big2": big2})

# 4. a subgraph: an If whose branches hold initializers; a sparse initializer
then_w = numpy_helper.from_array(np.full((2,), 3.0, dtype=np.float32), "tw")
else_w = numpy_helper.from_array(np.full((2,), -3.0, dtype=np.float32), "ew")
then_g = helper.make_graph([helper.make_node("Identity", ["tw"], ["o"])], "then", [],
                           [helper.make_tensor_value_info("o", TensorProto.FLOAT, [2])], initializer=[then_w])
else_g = helper.make_graph([helper.make_node("Identity", ["ew"], ["o"])], "else", [],
                           [helper.make_tensor_value_info("o", TensorProto.FLOAT, [2])], initializer=[else_w])
if_node = helper.make_node("If", ["cond"], ["y"], name="branch", then_branch=then_g, else_branch=else_g)
sp_values = numpy_helper.from_array(np.array([5.0, 6.0], dtype=np.float32), "sp")
sp_indices = numpy_helper.from_array(np.array([1, 3], dtype=np.int64), "sp_indices")
sparse = helper.make_sparse_tensor(sp_values, sp_indices, [4])
g = helper.make_graph([if_node], "g", [helper.make_tensor_value_info("cond", TensorProto.BOOL, [])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])], sparse_initializer=[sparse])
m = helper.make_model(g, producer_name="stdiff-test", opset_imports=[helper.make_opsetid("", 13)])
onnx.save(m, os.path.join(out, "subgraph.onnx"))
record("subgraph.onnx", {"branch/then_branch/tw": then_w, "branch/else_branch/ew": else_w, "sp": sp_values, "sp.indices": sp_indices})

with open(os.path.join(out, "expect.json"), "w") as f:
    json.dump(expect, f, indent=1, sort_keys=True)
