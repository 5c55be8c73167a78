//go:build !race

package safetensors

// raceEnabled is true when the tests run under the race detector.
const raceEnabled = false
