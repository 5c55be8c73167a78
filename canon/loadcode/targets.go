package loadcode

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/stdiff/stdiff/canon/finding"
)

// targetRE finds a Hydra _target_ key and its value in JSON, YAML or Python-like text.
var targetRE = regexp.MustCompile(`_target_['"]?\s*[:=]\s*['"]?([A-Za-z_][A-Za-z0-9_.]*)`)

// unsafeModules are modules whose functions run code, commands or reach the interpreter: a _target_
// in one of them is an error whatever the function.
var unsafeModules = map[string]bool{"builtins": true, "__builtin__": true, "os": true, "posix": true, "nt": true,
	"subprocess": true, "sys": true, "shutil": true, "importlib": true, "runpy": true, "pty": true, "socket": true,
	"pickle": true, "_pickle": true, "dill": true, "marshal": true, "code": true, "codeop": true, "ctypes": true,
	"webbrowser": true, "pdb": true, "timeit": true, "multiprocessing": true, "asyncio": true, "operator": true,
	"functools": true, "types": true, "commands": true, "popen2": true, "platform": true, "pathlib": true, "io": true,
	"tempfile": true, "urllib": true, "requests": true, "http": true, "ftplib": true, "smtplib": true, "telnetlib": true}

// unsafeNames are callables that run code whatever module they are reached through.
var unsafeNames = map[string]bool{"eval": true, "exec": true, "compile": true, "__import__": true, "getattr": true,
	"setattr": true, "open": true, "system": true, "popen": true, "execfile": true, "input": true, "breakpoint": true,
	"globals": true, "locals": true, "vars": true, "spawn": true, "call": true, "check_output": true, "run": true,
	"Popen": true, "import_module": true, "load": true, "loads": true}

// targetsInText returns a finding for every Hydra _target_ in text (a config file, a metadata value
// holding a serialised config), where naming it and off its offset (-1 when unknown).
func targetsInText(where, text string, off int64) []finding.Finding {
	if !strings.Contains(text, "_target_") {
		return nil
	}
	var fs []finding.Finding
	seen := map[string]bool{}
	for _, m := range targetRE.FindAllStringSubmatch(text, -1) {
		target := m[1]
		if seen[target] {
			continue
		}
		seen[target] = true
		fs = append(fs, targetFinding(where, target, off))
	}
	return fs
}

// yamlTargets returns the _target_ findings of a Hydra YAML config.
func yamlTargets(name, text string) []finding.Finding { return targetsInText(name, text, -1) }

func targetFinding(where, target string, off int64) finding.Finding {
	if unsafeTarget(target) {
		return finding.Finding{Code: CodeHydraTargetUnsafe, Severity: finding.SevError, Offset: off,
			Message: fmt.Sprintf("%s: Hydra _target_ %s runs code or commands when the config is instantiated", where, target),
			Hint:    "do not load this model with a library that instantiates its config (NeMo, Hydra's instantiate)"}
	}
	return finding.Finding{Code: CodeHydraTarget, Severity: finding.SevWarning, Offset: off,
		Message: fmt.Sprintf("%s: Hydra _target_ %s is imported and called when the config is instantiated", where, target),
		Hint:    "check that the target is the library's own class before loading the model"}
}

// unsafeTarget reports whether a dotted target names a module or callable that runs code.
func unsafeTarget(target string) bool {
	parts := strings.Split(target, ".")
	if unsafeModules[parts[0]] {
		return true
	}
	return unsafeNames[parts[len(parts)-1]] && (len(parts) == 1 || unsafeModules[parts[len(parts)-2]] || parts[len(parts)-2] == "builtins")
}
