//go:build race

package lora

// raceEnabled is true when the tests run under the race detector, whose instrumentation (and
// sync.Pool, which drops some of what is put back) changes what allocates.
const raceEnabled = true
