//go:build !unix

package onnx

import "os"

// mkfifo: without FIFOs, a folder stands in for the file that is not regular.
func mkfifo(path string) error { return os.Mkdir(path, 0o755) }
