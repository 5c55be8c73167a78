// Records huggingface.js's checkDDUF verdict (@huggingface/dduf, from npm) on each testdata/*.dduf
// into checkdduf.json, which dduf_test.go's TestReferenceVerdicts reads (the test needs no node).
// Run from canon/dduf/testdata: NODE_PATH=/tmp/ddufnode/node_modules node checkdduf.mjs
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
const require = createRequire(process.env.NODE_PATH + "/");
const { checkDDUF } = require("@huggingface/dduf");
const out = {};
for (const f of readdirSync(".").filter((f) => f.endsWith(".dduf")).sort()) {
	const blob = new Blob([readFileSync(f)]);
	try {
		for await (const _ of checkDDUF(blob)) {
		}
		out[f.replace(/\.dduf$/, "")] = { valid: true, error: "" };
	} catch (e) {
		out[f.replace(/\.dduf$/, "")] = { valid: false, error: String(e.message) };
	}
}
writeFileSync("checkdduf.json", JSON.stringify(out, null, 2) + "\n");
