#!/usr/bin/env bash
# ONNX header speed: stdiff inspect and check of a 1 GiB model whose weights are external data, against
# onnx.load (Debian's python3-onnx, which loads the external data too, as onnx.load does by default)
# and onnx.load(load_external_data=False), interleaved in one run, medians and ratios.
# Usage: testdata/bench/onnx.sh [RUNS] [MiB]    (from the repository root)
set -euo pipefail
runs=${1:-7}
mib=${2:-1024}
py=/usr/bin/python3
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/stdiff" ./cmd/stdiff
"$py" - "$tmp" "$mib" <<'PY'
import os, sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
out, mib = sys.argv[1], int(sys.argv[2])
rows = mib * 1024 * 1024 // 4 // 4096
inits = [numpy_helper.from_array(np.random.default_rng(i).standard_normal((rows // 8, 4096), dtype=np.float32), f"w{i}") for i in range(8)]
g = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "g",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])], [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])], initializer=inits)
m = helper.make_model(g, producer_name="bench")
onnx.save_model(m, os.path.join(out, "model.onnx"), save_as_external_data=True, all_tensors_to_one_file=True, location="model.onnx.data")
PY
ls -l "$tmp/model.onnx" "$tmp/model.onnx.data" | awk '{print $9 ":", $5, "bytes"}'
python3 testdata/bench/interleave.py "$runs" \
  "inspect=$tmp/stdiff inspect $tmp/model.onnx" \
  "check=$tmp/stdiff check $tmp/model.onnx" \
  "onnx.load=$py -c 'import onnx, sys; onnx.load(sys.argv[1])' $tmp/model.onnx" \
  "onnx.load(no data)=$py -c 'import onnx, sys; onnx.load(sys.argv[1], load_external_data=False)' $tmp/model.onnx"
