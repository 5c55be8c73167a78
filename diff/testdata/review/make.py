# Makes the review's ONNX models against source.safetensors (run with /usr/bin/python3: numpy, onnx).
# source.safetensors: fc1.weight = A, fc2.weight = A transposed (4x4, F32), as torch Linear layers.
# shared-wrong.onnx: one initializer, A transposed, read by both MatMuls (x·Aᵀ twice): fc2 computes
#   x·Aᵀ where the source computes x·fc2.weightᵀ = x·A: another model, which shares no values rightly.
# shared-right.onnx: fc1 reads Aᵀ, fc2 reads A (both MatMul): the source exported faithfully.
import json, struct
import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

A = np.arange(16, dtype=np.float32).reshape(4, 4) / 16 + 0.5

def safetensors(path, tensors):
    header, data = {}, b""
    for name, arr in tensors.items():
        b = arr.astype("<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(arr.shape), "data_offsets": [len(data), len(data) + len(b)]}
        data += b
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    open(path, "wb").write(struct.pack("<Q", len(h)) + h + data)

def model(path, inits, nodes):
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
                          [numpy_helper.from_array(v, k) for k, v in inits.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(m)
    onnx.save(m, path)

safetensors("source.safetensors", {"fc1.weight": A, "fc2.weight": A.T.copy()})
model("shared-wrong.onnx", {"onnx::MatMul_1": A.T.copy()},
      [helper.make_node("MatMul", ["x", "onnx::MatMul_1"], ["h"], name="MatMul_0"),
       helper.make_node("MatMul", ["h", "onnx::MatMul_1"], ["y"], name="MatMul_1")])
model("shared-right.onnx", {"onnx::MatMul_1": A.T.copy(), "onnx::MatMul_2": A.copy()},
      [helper.make_node("MatMul", ["x", "onnx::MatMul_1"], ["h"], name="MatMul_0"),
       helper.make_node("MatMul", ["h", "onnx::MatMul_2"], ["y"], name="MatMul_1")])

# source-tied.safetensors: fc1.weight = fc2.weight = A (two Linear layers of equal values).
# mixed-readers.onnx: one initializer, A as it is, read by a MatMul (x·A: fc1 should compute x·Aᵀ) and
#   by a Gemm with transB (x·Aᵀ: right for fc2): another model than the source.
# mixed-readers-right.onnx: the faithful export: Aᵀ for the MatMul, A for the Gemm.
safetensors("source-tied.safetensors", {"fc1.weight": A, "fc2.weight": A.copy()})
model("mixed-readers.onnx", {"w": A.copy()},
      [helper.make_node("MatMul", ["x", "w"], ["h"], name="MatMul_0"),
       helper.make_node("Gemm", ["h", "w"], ["y"], name="Gemm_1", transB=1)])
model("mixed-readers-right.onnx", {"onnx::MatMul_1": A.T.copy(), "w": A.copy()},
      [helper.make_node("MatMul", ["x", "onnx::MatMul_1"], ["h"], name="MatMul_0"),
       helper.make_node("Gemm", ["h", "w"], ["y"], name="Gemm_1", transB=1)])
# mixed-readers-gemm-first.onnx: mixed-readers.onnx with the Gemm first in the graph.
model("mixed-readers-gemm-first.onnx", {"w": A.copy()},
      [helper.make_node("Gemm", ["x", "w"], ["h"], name="Gemm_0", transB=1),
       helper.make_node("MatMul", ["h", "w"], ["y"], name="MatMul_1")])
