# numpy_oracle.py DIR NAME...: numpy.load(allow_pickle=False)'s answer on each file DIR/NAME, one line
# each: "NAME accept KEY=DTYPE:SHAPE:SHA256..." (the values' little-endian bytes, in row-major order)
# or "NAME reject ERRORTYPE". The first line is "numpy VERSION".
import hashlib, sys
import numpy as np

print("numpy", np.__version__)
d = sys.argv[1]
for name in sys.argv[2:]:
    try:
        out = []
        z = np.load(d + "/" + name, allow_pickle=False)
        if isinstance(z, np.lib.npyio.NpzFile):
            arrays = [(k, z[k]) for k in dict.fromkeys(z.files)]
            z.close()
        else:
            arrays = [("array", z)]
        for k, a in arrays:
            le = np.ascontiguousarray(a.astype(a.dtype.newbyteorder("<")))
            shape = "x".join(str(s) for s in a.shape)
            out.append("%s=%s:%s:%s" % (k, le.dtype.str[1:], shape, hashlib.sha256(le.tobytes()).hexdigest()[:16]))
        print(name, "accept", *out)
    except Exception as e:  # MemoryError, ValueError, …: numpy refuses the file
        print(name, "reject", type(e).__name__)
