package loadcode

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/stdiff/stdiff/canon/finding"
	"github.com/stdiff/stdiff/canon/onnx"
)

// standardDomains are the ONNX standard domains and the contrib domains of known runtimes (ONNX
// Runtime, its training and experimental domains, OpenVINO, TensorRT, Intel Neural Compressor, the
// quantisation domains), whose operators the runtime ships.
var standardDomains = map[string]bool{"": true, "ai.onnx": true, "ai.onnx.ml": true, "ai.onnx.training": true,
	"ai.onnx.preview.training": true, "com.microsoft": true, "com.microsoft.nchwc": true, "com.microsoft.mlfeaturizers": true,
	"com.microsoft.experimental": true, "com.microsoft.dml": true, "ai.onnx.contrib": false, "org.openvinotoolkit": true,
	"com.ms.internal.nhwc": true, "trt.plugins": true, "com.intel.ai": true, "ai.onnxruntime.training": true}

// pythonOps are operator types that run a Python function.
var pythonOps = map[string]bool{"PythonOp": true, "PythonOpGrad": true, "PyOp": true, "PyFunc": true}

// onnxOps returns findings for the operators of m's graph and of its functions outside the standard
// domains (those of the model's own functions excepted: their nodes are in the model), and for the
// precompiled contexts of its EPContext nodes. metadata_props and string attributes of other names
// are not searched: no runtime loads code or a library a model's metadata names (ONNX Runtime takes
// custom operator libraries from the caller's session options only), and external data is Check's.
func onnxOps(of *onnx.File) []finding.Finding {
	custom := map[string][]string{}
	var fs []finding.Finding
	named := map[string]bool{}
	for _, pf := range of.PythonFuncs {
		named[pf.Op] = true
		fs = append(fs, finding.Finding{Code: CodeONNXPythonOp, Severity: finding.SevError, Offset: -1,
			Message: fmt.Sprintf("operator %s runs the Python function %q when the model runs", pf.Op, pf.Func),
			Hint:    "do not run this model outside a sandbox: the Python function comes from whoever registers the operator"})
	}
	local := map[string]bool{}
	for _, f := range of.Functions {
		local[f] = true
	}
	seen := map[string]bool{}
	for _, oc := range append(slices.Clone(of.Ops), of.FunctionOps...) {
		if named[oc.Op] || seen[oc.Op] {
			continue
		}
		seen[oc.Op] = true
		domain, op := splitOp(of, oc.Op)
		if pythonOps[op] || domain == "ai.onnx.contrib" && strings.HasPrefix(op, "Py") {
			fs = append(fs, finding.Finding{Code: CodeONNXPythonOp, Severity: finding.SevError, Offset: -1,
				Message: fmt.Sprintf("operator %s (%d nodes) runs a Python function when the model runs", oc.Op, oc.Count),
				Hint:    "do not run this model outside a sandbox: the Python function comes from whoever registers the operator"})
			continue
		}
		if !standardDomains[domain] && !local[oc.Op] {
			custom[domain] = append(custom[domain], op)
		}
	}
	fs = append(fs, epContexts(of)...)
	domains := make([]string, 0, len(custom))
	for d := range custom {
		domains = append(domains, d)
	}
	sort.Strings(domains)
	for _, d := range domains {
		fs = append(fs, finding.Finding{Code: CodeONNXCustomDomain, Severity: finding.SevWarning, Offset: -1,
			Message: fmt.Sprintf("operators of the custom domain %s: %s", d, strings.Join(custom[d], ", ")),
			Hint:    "the runtime needs custom operator code to run this model; know where that code comes from"})
	}
	return fs
}

// splitOp splits a domain-qualified operator ("com.microsoft.FusedMatMul") into its domain and type,
// using the model's declared opset domains (a domain may hold dots).
func splitOp(of *onnx.File, op string) (string, string) {
	best := ""
	for _, o := range of.Opsets {
		if o.Domain != "" && strings.HasPrefix(op, o.Domain+".") && len(o.Domain) > len(best) {
			best = o.Domain
		}
	}
	if best != "" {
		return best, op[len(best)+1:]
	}
	if i := strings.LastIndex(op, "."); i >= 0 {
		return op[:i], op[i+1:]
	}
	return "", op
}

// epContexts returns a finding for each EPContext node: a graph compiled ahead of time for one
// execution provider, which the provider loads in place of ONNX nodes (embedded in the node, or from
// the file it names, which must lie in the model's folder as external data must).
func epContexts(of *onnx.File) []finding.Finding {
	var fs []finding.Finding
	for _, e := range of.EPContexts {
		node := e.Node
		if node == "" {
			node = "an EPContext node"
		} else {
			node = "EPContext node " + strconv.Quote(node)
		}
		source := e.Source
		if source == "" {
			source = "an execution provider"
		}
		switch {
		case e.File == "":
			fs = append(fs, finding.Finding{Code: CodeONNXEPContext, Severity: finding.SevWarning, Offset: -1,
				Message: fmt.Sprintf("%s carries a precompiled context of %d bytes for %s, loaded in place of ONNX nodes", node, e.Bytes, source),
				Hint:    "the precompiled context cannot be checked as ONNX nodes can: know who compiled it"})
		default:
			if _, err := onnx.ExternalPath(".", &onnx.External{Location: e.File}); err != nil {
				fs = append(fs, finding.Finding{Code: CodeONNXEPContextOutside, Severity: finding.SevError, Offset: -1,
					Message: fmt.Sprintf("%s loads a precompiled context for %s from %q, outside the model's folder", node, source, e.File),
					Hint:    "a model names files beside it, never elsewhere: do not load it where that path could be reached"})
				continue
			}
			fs = append(fs, finding.Finding{Code: CodeONNXEPContext, Severity: finding.SevWarning, Offset: -1,
				Message: fmt.Sprintf("%s loads a precompiled context for %s from the file %q, in place of ONNX nodes", node, source, e.File),
				Hint:    "the precompiled context cannot be checked as ONNX nodes can: know who compiled it"})
		}
	}
	return fs
}
