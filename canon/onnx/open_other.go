//go:build !unix

package onnx

// openNonblock: elsewhere there are no FIFOs to block on.
const openNonblock = 0
