//go:build race

package safetensors

// raceEnabled is true when the tests run under the race detector, whose instrumentation changes what
// allocates.
const raceEnabled = true
