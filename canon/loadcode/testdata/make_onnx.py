# Writes the ONNX fixtures of TestONNXCodeAttributes with Debian's python3-onnx (1.12):
#   /usr/bin/python3 make_onnx.py   (in this folder)
# ortpyop.onnx: ONNX Runtime's PyOp as its exp/generate_sample.py writes one (module, class_name, compute).
# epcontext.onnx: EPContext nodes (ONNX Runtime's com.microsoft domain): a context in a file beside the
#   model, one embedded, one naming a file outside the folder.
# localfunc.onnx: a model-local function of a custom domain (as torch.onnx's dynamo exporter writes
#   pkg.onnxscript.torch_lib functions), whose body uses one standard and one custom operator.
import onnx
from onnx import helper, TensorProto

x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])


def save(nodes, opsets, name, functions=()):
    g = helper.make_graph(nodes, "g", [x], [y])
    m = helper.make_model(g, producer_name="stdiff-fixture", opset_imports=[helper.make_opsetid(d, v) for d, v in opsets],
                          functions=list(functions))
    m.ir_version = 8
    onnx.save(m, name)


save([helper.make_node("PyOp", ["x"], ["y"], name="pyop1", domain="pyopfloat", module="mymodule",
                       class_name="CustomFnWrapperModule", compute="compute", input_types=[1], output_types=[1])],
     [("", 13), ("pyopfloat", 1)], "ortpyop.onnx")

save([helper.make_node("EPContext", ["x"], ["a"], name="qnn_ctx", domain="com.microsoft", embed_mode=0,
                       ep_cache_context="model_ctx.bin", source="QNNExecutionProvider", main_context=1),
      helper.make_node("EPContext", ["a"], ["b"], name="trt_ctx", domain="com.microsoft", embed_mode=1,
                       ep_cache_context=b"\x00engine" * 8, source="TensorrtExecutionProvider"),
      helper.make_node("EPContext", ["b"], ["y"], domain="com.microsoft", embed_mode=0,
                       ep_cache_context="../../elsewhere/ctx.bin")],
     [("", 13), ("com.microsoft", 1)], "epcontext.onnx")

gelu = helper.make_function("pkg.onnxscript.torch_lib", "aten_gelu", ["X"], ["Y"],
                            [helper.make_node("Tanh", ["X"], ["T"]),
                             helper.make_node("SecretOp", ["T"], ["Y"], domain="my.company")],
                            [helper.make_opsetid("", 13), helper.make_opsetid("my.company", 1)])
save([helper.make_node("aten_gelu", ["x"], ["y"], domain="pkg.onnxscript.torch_lib")],
     [("", 13), ("pkg.onnxscript.torch_lib", 1), ("my.company", 1)], "localfunc.onnx", [gelu])

# torch-functions.onnx: what Debian's python3-torch 1.13 exports with export_modules_as_functions=True:
# each module a model-local function of a domain named by its Python module (__main__,
# torch.nn.modules.linear, …), no custom code. Written only where torch is installed.
try:
    import torch
except ImportError:
    torch = None
if torch is not None:
    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.l, self.a = torch.nn.Linear(4, 4), torch.nn.GELU()

        def forward(self, x):
            return self.a(self.l(x))

    torch.manual_seed(0)
    torch.onnx.export(M(), torch.randn(1, 4), "torch-functions.onnx", opset_version=15, export_modules_as_functions=True)
