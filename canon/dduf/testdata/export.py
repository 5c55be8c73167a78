# Writes a DDUF file as huggingface_hub's export_folder_as_dduf does (zipfile, ZIP_STORED, each entry
# opened with force_zip64=True: zip64 extra fields in the local headers), from a pipeline folder.
# python3 export.py FOLDER export-zip64.dduf, FOLDER written by ddufw.WriteFolder(ddufw.Pipeline()).
import zipfile, pathlib, sys
src = pathlib.Path(sys.argv[1]); out = sys.argv[2]
with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as z:
    for p in sorted(src.glob("**/*")):
        if not p.is_file() or p.suffix not in {".json", ".model", ".safetensors", ".txt"}: continue
        rel = p.relative_to(src)
        if len(rel.parts) >= 3: continue
        with z.open(rel.as_posix(), "w", force_zip64=True) as fh:
            fh.write(p.read_bytes())
