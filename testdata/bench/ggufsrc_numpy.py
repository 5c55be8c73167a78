#!/usr/bin/env python3
"""What `stdiff SOURCE GGUF` computes, as a vectorised numpy script would: read a save_pretrained model
(model.safetensors, or the shards a model.safetensors.index.json names; BF16 or F32) and its Q8_0 GGUF, pair the llama names, undo the q/k permutation, dequantise
Q8_0 and compare each pair (count differing, max |a-b| and where, mean |a-b|, rmse, rel L2, cosine).
Usage: ggufsrc_numpy.py MODEL.safetensors|INDEX.json MODEL.gguf CONFIG.json"""
import json, re, struct, sys
import numpy as np

st_path, gguf_path, cfg_path = sys.argv[1:4]
cfg = json.load(open(cfg_path))

# safetensors: one file, or the shards an index names; each tensor's entry and the bytes after its file's header
if st_path.endswith(".json"):
    import os
    files = sorted(set(json.load(open(st_path))["weight_map"].values()))
    files = [os.path.join(os.path.dirname(st_path), f) for f in files]
else:
    files = [st_path]
header, data = {}, {}
for path in files:
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        h = json.loads(f.read(n))
    mm = np.memmap(path, dtype=np.uint8, mode="r", offset=8 + n)
    for k, v in h.items():
        if k != "__metadata__":
            header[k], data[k] = v, mm

# GGUF: key-value pairs skipped, tensor infos read
g = np.memmap(gguf_path, dtype=np.uint8, mode="r")
buf = open(gguf_path, "rb").read(1 << 20)
pos = 4
version, n_tensors, n_kv = struct.unpack_from("<IQQ", buf, pos); pos += 20
SIZES = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
def skip_value(t, pos):
    if t == 8:
        ln = struct.unpack_from("<Q", buf, pos)[0]; return pos + 8 + ln
    if t == 9:
        et, ln = struct.unpack_from("<IQ", buf, pos); pos += 12
        for _ in range(ln): pos = skip_value(et, pos)
        return pos
    return pos + SIZES[t]
for _ in range(n_kv):
    ln = struct.unpack_from("<Q", buf, pos)[0]; pos += 8 + ln
    t = struct.unpack_from("<I", buf, pos)[0]; pos += 4
    pos = skip_value(t, pos)
infos = {}
for _ in range(n_tensors):
    ln = struct.unpack_from("<Q", buf, pos)[0]; pos += 8
    name = buf[pos:pos + ln].decode(); pos += ln
    nd = struct.unpack_from("<I", buf, pos)[0]; pos += 4
    dims = struct.unpack_from(f"<{nd}Q", buf, pos); pos += 8 * nd
    typ, off = struct.unpack_from("<IQ", buf, pos); pos += 12
    infos[name] = (typ, dims[::-1], off)
data_start = (pos + 31) // 32 * 32

q8 = np.dtype([("d", "<f2"), ("qs", "i1", 32)])
def gguf_values(name):
    typ, shape, off = infos[name]
    count = int(np.prod(shape))
    if typ == 0:
        return np.frombuffer(g, dtype="<f4", count=count, offset=data_start + off).reshape(shape)
    blocks = np.frombuffer(g, dtype=q8, count=count // 32, offset=data_start + off)
    return (blocks["d"].astype(np.float32)[:, None] * blocks["qs"].astype(np.float32)).reshape(shape)

def source_values(name):
    h = header[name]
    a, b = h["data_offsets"]
    if h["dtype"] == "F32":
        return np.frombuffer(data[name], dtype="<f4", count=(b - a) // 4, offset=a).reshape(h["shape"])
    u = np.frombuffer(data[name], dtype="<u2", count=(b - a) // 2, offset=a)
    return (u.astype(np.uint32) << 16).view(np.float32).reshape(h["shape"])

def permute(w, n_head):
    return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)

NAMES = {"model.embed_tokens": "token_embd", "model.norm": "output_norm", "lm_head": "output"}
LAYER = {"input_layernorm": "attn_norm", "self_attn.q_proj": "attn_q", "self_attn.k_proj": "attn_k", "self_attn.v_proj": "attn_v",
         "self_attn.o_proj": "attn_output", "post_attention_layernorm": "ffn_norm", "mlp.gate_proj": "ffn_gate",
         "mlp.up_proj": "ffn_up", "mlp.down_proj": "ffn_down"}
out = {}
for name in header:
    base = name.removesuffix(".weight")
    m = re.fullmatch(r"model\.layers\.(\d+)\.(.+)", base)
    gname = (f"blk.{m.group(1)}.{LAYER[m.group(2)]}" if m else NAMES[base]) + ".weight"
    a = source_values(name)
    if gname.endswith("attn_q.weight"):
        a = permute(a, cfg["num_attention_heads"])
    elif gname.endswith("attn_k.weight"):
        a = permute(a, cfg["num_key_value_heads"])
    b = gguf_values(gname)
    a64, d = a.astype(np.float64), (b.astype(np.float64) - a.astype(np.float64))
    ad = np.abs(d)
    i = int(np.argmax(ad))
    na, nb = np.linalg.norm(a64), np.linalg.norm(b.astype(np.float64))
    out[name] = dict(differing=int(np.count_nonzero(d)), max_abs_diff=float(ad.flat[i]), index=i, mean_abs_diff=float(ad.mean()),
                     rmse=float(np.sqrt(np.mean(d * d))), rel_l2=float(np.linalg.norm(d) / na),
                     cosine=float(np.dot(a64.ravel(), b.astype(np.float64).ravel()) / na / nb))
print(json.dumps({"pairs": len(out), "max_rmse": max(v["rmse"] for v in out.values())}))
