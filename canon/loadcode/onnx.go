package loadcode

import (
	"fmt"
	"sort"
	"strings"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/finding"
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

// onnxOps returns findings for the operators of m's graph outside the standard domains.
func onnxOps(m *canon.Model) []finding.Finding {
	custom := map[string][]string{}
	var fs []finding.Finding
	named := map[string]bool{}
	for _, pf := range m.ONNX.PythonFuncs {
		named[pf.Op] = true
		fs = append(fs, finding.Finding{Code: CodeONNXPythonOp, Severity: finding.SevError, Offset: -1,
			Message: fmt.Sprintf("operator %s runs the Python function %q when the model runs", pf.Op, pf.Func),
			Hint:    "do not run this model outside a sandbox: the Python function comes from whoever registers the operator"})
	}
	for _, oc := range m.ONNX.Ops {
		domain, op := splitOp(m, oc.Op)
		if named[oc.Op] {
			continue
		}
		if pythonOps[op] || domain == "ai.onnx.contrib" && strings.HasPrefix(op, "Py") {
			fs = append(fs, finding.Finding{Code: CodeONNXPythonOp, Severity: finding.SevError, Offset: -1,
				Message: fmt.Sprintf("operator %s (%d nodes) runs a Python function when the model runs", oc.Op, oc.Count),
				Hint:    "do not run this model outside a sandbox: the Python function comes from whoever registers the operator"})
			continue
		}
		if !standardDomains[domain] {
			custom[domain] = append(custom[domain], op)
		}
	}
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
func splitOp(m *canon.Model, op string) (string, string) {
	best := ""
	for _, o := range m.ONNX.Opsets {
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
