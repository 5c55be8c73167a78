# Writes benign and hostile PyTorch files into the folder given as argv[1] with torch.save (and
# crafted by hand: case-variant and duplicate zip names, tar, protocol 0 pickles, storage records of
# the wrong size, TorchScript), then prints one line per file: its name, a tab, whether
# torch.load(weights_only=True) accepts it ("accept") or refuses it ("reject"), a tab, and what it
# read (which data.pkl, the first value of w) or the exception's type. Bare pickles are judged by
# PyTorch's weights-only unpickler itself, NumPy files by numpy.load(allow_pickle=False). The
# hostile payloads would create the file PWNED in that folder; no loader here runs them.
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

crafted = []


def write(name, data):
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)
    crafted.append(name)


def zip_of(name, entries):
    """A zip archive of (name, bytes) pairs in this order, stored; duplicates kept."""
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with zipfile.ZipFile(os.path.join(out, name), "w") as z:
            for n, b in entries:
                z.writestr(zipfile.ZipInfo(n), b)
    crafted.append(name)


def which(entry):
    return pickle.dumps({"which": entry}, protocol=2)


version = [("archive/version", b"3\n"), ("archive/byteorder", b"little")]
# names equal but for case: which one miniz's search finds depends on its heap sort
zip_of("case-lower-upper-zip.pt", [("archive/data.pkl", which("archive/data.pkl")), ("archive/DATA.PKL", which("archive/DATA.PKL"))] + version)
zip_of("case-upper-lower-zip.pt", [("archive/DATA.PKL", which("archive/DATA.PKL")), ("archive/data.pkl", which("archive/data.pkl"))] + version)
zip_of("case-three-zip.pt", version + [("archive/Data.pkl", which("archive/Data.pkl")), ("archive/data.pkl", which("archive/data.pkl")), ("archive/DATA.PKL", which("archive/DATA.PKL"))])
zip_of("case-evil-upper-zip.pt", [("archive/data.pkl", which("archive/data.pkl")), ("archive/DATA.PKL", pickle.dumps(System(), protocol=2))] + version)
zip_of("only-upper-zip.pt", [("archive/DATA.PKL", which("archive/DATA.PKL"))] + version)
zip_of("only-upper-evil-zip.pt", [("archive/DATA.PKL", pickle.dumps(System(), protocol=2))] + version)
zip_of("dup-exact-zip.pt", [("archive/data.pkl", which("first")), ("archive/data.pkl", which("second"))] + version)
zip_of("no-version-zip.pt", [("archive/data.pkl", which("archive/data.pkl")), ("archive/byteorder", b"little")])
zip_of("upper-version-zip.pt", [("archive/data.pkl", which("archive/data.pkl")), ("archive/VERSION", b"3\n")])
zip_of("bad-version-zip.pt", [("archive/data.pkl", which("archive/data.pkl")), ("archive/version", b"x3\n")])
zip_of("code-dir-zip.pt", [("archive/data.pkl", which("archive/data.pkl")), ("archive/code/x.py", b"x")] + version)

# a state dict {"w": 2 floats on storage 0}, then variants: SETITEM on the tensor, records of other sizes
def w_pickle(setitem=False):
    t = (b"ctorch._utils\n_rebuild_tensor_v2\n((X\x07\x00\x00\x00storagectorch\nFloatStorage\nX\x01\x00\x00\x000"
         b"X\x03\x00\x00\x00cpuK\x02tQK\x00K\x02\x85K\x01\x85\x89ccollections\nOrderedDict\n)RtR")
    if setitem:
        t += b"K\x00K\x07s"  # w[0] = 7
    return b"\x80\x02}X\x01\x00\x00\x00w" + t + b"s."


two = b"\x00\x00\x80\x3f\x00\x00\x00\x40"  # 1.0, 2.0
zip_of("w-zip.pt", [("archive/data.pkl", w_pickle()), ("archive/data/0", two)] + version)
zip_of("setitem-tensor-zip.pt", [("archive/data.pkl", w_pickle(True)), ("archive/data/0", two)] + version)
zip_of("size-larger-zip.pt", [("archive/data.pkl", w_pickle()), ("archive/data/0", two + b"\x00" * 4)] + version)
zip_of("size-smaller-zip.pt", [("archive/data.pkl", w_pickle()), ("archive/data/0", two[:4])] + version)
zip_of("case-storage-zip.pt", [("archive/data.pkl", w_pickle()), ("archive/data/0", two), ("archive/DATA/0", b"\x00\x00\x40\x40\x00\x00\x80\x40")] + version)

# tar: torch tries it before the legacy pickle format and refuses it under weights_only
import tarfile
with tarfile.open(os.path.join(out, "tar-pickle-first.pt"), "w", format=tarfile.USTAR_FORMAT, encoding="latin-1") as tf:
    for n, b in [("\x80\x02}.", b""), ("pickle", pickle.dumps(System(), protocol=2))]:
        ti = tarfile.TarInfo(n)
        ti.size = len(b)
        tf.addfile(ti, io.BytesIO(b))
crafted.append("tar-pickle-first.pt")
write("zeros.pt", b"\x00" * 1024)

# pickles that do not start with PROTO, and legacy files whose first pickle is not the magic number
write("p0-system.pt", pickle.dumps(System(), protocol=0))
write("p1-system.pt", pickle.dumps(System(), protocol=1))
write("v-stack-global.pt", b"Vos\nVsystem\n\x93(Vtouch " + pwned.encode() + b"\ntR.")
write("n-first.pt", b"N." + pickle.dumps(1001, protocol=2) + pickle.dumps(System(), protocol=2))
write("i7-first.pt", b"I7\n." + pickle.dumps(System(), protocol=2))
write("long-p0.pt", pickle.dumps(["a" * 1000 + str(i) for i in range(70)] + [System()], protocol=0))
write("exceptions-set.pkl", b"\x80\x02cexceptions\nset\n)R.")
write("builtin-set.pkl", b"\x80\x02c__builtin__\nset\n)R.")

# TorchScript: torch >= 2.6 refuses it under weights_only (CVE-2025-32434)
torch.jit.save(torch.jit.script(torch.nn.Linear(2, 2)), os.path.join(out, "torchscript.pt"))
crafted.append("torchscript.pt")


def detail(obj):
    if isinstance(obj, dict) and "which" in obj:
        return "which=" + obj["which"]
    if isinstance(obj, dict) and isinstance(obj.get("w"), torch.Tensor):
        return "w0=" + repr(float(obj["w"].flatten()[0]))
    return ""


print("torch", torch.__version__)
for name in sorted(list(files) + ["second-pickle-zip.pt", "bad-crc-zip.pt"] + list(bare) + list(arrays) + crafted):
    path = os.path.join(out, name)
    try:
        if name.endswith(".npy") or name.endswith(".npz"):
            a = np.load(path, allow_pickle=False)
            if name.endswith(".npz"):
                [a[k] for k in a.files]
        elif name.endswith(".pkl"):
            with open(path, "rb") as f:
                obj = wou.load(f)
        else:
            obj = torch.load(path, weights_only=True)
        print(name, "accept", detail(obj) if "obj" in dir() else "", sep="\t")
    except Exception as e:
        print(name, "reject", type(e).__name__, sep="\t")
    obj = None
if os.path.exists(pwned):
    print("PWNED exists")
