//go:build unix

package onnx

import "syscall"

// openNonblock makes opening a FIFO return at once (rather than wait for a writer), so that its
// fstat can refuse it.
const openNonblock = syscall.O_NONBLOCK
