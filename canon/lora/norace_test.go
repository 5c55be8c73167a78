//go:build !race

package lora

// raceEnabled is true when the tests run under the race detector.
const raceEnabled = false
