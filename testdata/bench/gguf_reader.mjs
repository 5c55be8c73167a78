// Reads a GGUF file's header with @huggingface/gguf (the Hub's own reader) and prints what it found:
// the number of metadata keys and tensors, and where the data starts.
// Usage: node gguf_reader.mjs FOLDER FILE, FOLDER being where `npm install @huggingface/gguf` was run.
import { createRequire } from "node:module";
import * as path from "node:path";

const [folder, file] = process.argv.slice(2);
const require = createRequire(path.resolve(folder) + "/");
const { gguf } = require("@huggingface/gguf");
const r = await gguf(path.resolve(file), { allowLocalFile: true });
console.log(Object.keys(r.metadata).length, r.tensorInfos.length, String(r.tensorDataOffset));
