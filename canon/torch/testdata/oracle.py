# Writes benign and hostile PyTorch files into the folder given as argv[1] with torch.save, then
# prints one line per file: its name and whether torch.load(weights_only=True) accepts it
# ("accept") or refuses it ("reject"). Bare pickles are judged by PyTorch's weights-only unpickler
# itself, NumPy files by numpy.load(allow_pickle=False). The hostile payloads would create the file PWNED in that folder; no loader here runs them.
import collections
import io
import os
import pickle
import subprocess
import sys
import zipfile

import torch
import torch._weights_only_unpickler as wou

out = sys.argv[1]
pwned = os.path.join(out, "PWNED")


class System:
    def __reduce__(self):
        return (os.system, ("touch " + pwned,))


class Eval:
    def __reduce__(self):
        return (eval, ("open(%r, 'w')" % pwned,))


class Popen:
    def __reduce__(self):
        return (subprocess.Popen, (["touch", pwned],))


class Exec:
    def __reduce__(self):
        return (exec, ("open(%r, 'w')" % pwned,))


class Import:
    def __reduce__(self):
        return (__import__, ("os",))


class Custom:
    pass


def sd():
    d = collections.OrderedDict()
    d["w"] = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    d["b"] = torch.zeros(3, dtype=torch.float16)
    d["tied"] = d["w"]
    return d


files = {
    "benign-zip.pt": (sd(), {}),
    "benign-legacy.pt": (sd(), {"_use_new_zipfile_serialization": False}),
    "module-zip.pt": (torch.nn.Linear(2, 3).state_dict(), {}),
    "parameter-zip.pt": ({"p": torch.nn.Parameter(torch.ones(2))}, {}),
    "checkpoint-zip.pt": ({"state_dict": sd(), "epoch": 3, "global_step": 100, "name": "run"}, {}),
    "float-zip.pt": ({"lr": 0.5}, {}),
    "checkpoint-legacy.pt": ({"state_dict": sd(), "epoch": 3}, {"_use_new_zipfile_serialization": False}),
    "dtypes-zip.pt": ({k: torch.ones(2, dtype=d) for k, d in [("bf16", torch.bfloat16), ("i64", torch.int64),
                                                          ("u8", torch.uint8), ("bool", torch.bool)]}, {}),
    "system-zip.pt": ({"w": torch.ones(1), "x": System()}, {}),
    "system-legacy.pt": ({"x": System()}, {"_use_new_zipfile_serialization": False}),
    "eval-zip.pt": ({"x": Eval()}, {}),
    "exec-zip.pt": ([Exec()], {}),
    "popen-zip.pt": ({"x": Popen()}, {}),
    "import-legacy.pt": ({"x": Import()}, {"_use_new_zipfile_serialization": False}),
    "custom-zip.pt": ({"x": Custom()}, {}),
    "protocol4-zip.pt": (sd(), {"pickle_protocol": 4}),
}
for name, (obj, kw) in files.items():
    torch.save(obj, os.path.join(out, name), **kw)

# a hostile pickle beside data.pkl: torch.load reads only data.pkl
with zipfile.ZipFile(os.path.join(out, "benign-zip.pt")) as src, \
        zipfile.ZipFile(os.path.join(out, "second-pickle-zip.pt"), "w") as dst:
    for item in src.infolist():
        dst.writestr(item, src.read(item.filename))
    dst.writestr("benign-zip/extra.pkl", pickle.dumps(System(), protocol=2))

# a wrong CRC for data.pkl in the central directory (PyTorch does not check CRCs)
with open(os.path.join(out, "benign-zip.pt"), "rb") as f:
    b = bytearray(f.read())
i = b.find(b"PK\x01\x02")
b[i + 16:i + 20] = b"\x01\x02\x03\x04"
with open(os.path.join(out, "bad-crc-zip.pt"), "wb") as f:
    f.write(b)

bare = {
    "benign-bare.pkl": pickle.dumps({"a": 1, "b": [1, 2], "c": "x"}, protocol=2),
    "system-bare.pkl": pickle.dumps(System(), protocol=2),
    "system-bare-p0.pkl": pickle.dumps(System(), protocol=0),
    "system-bare-p4.pkl": pickle.dumps(System(), protocol=4),
}
for name, b in bare.items():
    with open(os.path.join(out, name), "wb") as f:
        f.write(b)

import numpy as np

arrays = {
    "benign.npy": lambda p: np.save(p, np.arange(6, dtype=np.float32).reshape(2, 3)),
    "fortran.npy": lambda p: np.save(p, np.asfortranarray(np.ones((2, 3), dtype=">i2"))),
    "benign.npz": lambda p: np.savez(p, x=np.ones(3), y=np.zeros((2, 2), dtype=np.int16)),
    "compressed.npz": lambda p: np.savez_compressed(p, x=np.ones(3)),
    "object.npy": lambda p: np.save(p, np.array([System(), None], dtype=object), allow_pickle=True),
    "object.npz": lambda p: np.savez(p, x=np.ones(2), o=np.array([System()], dtype=object)),
}
for name, save in arrays.items():
    with open(os.path.join(out, name), "wb") as f:
        save(f)

print("torch", torch.__version__)
for name in sorted(list(files) + ["second-pickle-zip.pt", "bad-crc-zip.pt"] + list(bare) + list(arrays)):
    path = os.path.join(out, name)
    try:
        if name.endswith(".npy") or name.endswith(".npz"):
            a = np.load(path, allow_pickle=False)
            if name.endswith(".npz"):
                [a[k] for k in a.files]
        elif name.endswith(".pkl"):
            with open(path, "rb") as f:
                wou.load(f)
        else:
            torch.load(path, weights_only=True)
        print(name, "accept")
    except Exception as e:
        print(name, "reject", type(e).__name__)
if os.path.exists(pwned):
    print("PWNED exists")
