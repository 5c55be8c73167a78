//go:build race

package main

// raceEnabled is true when the tests run under the race detector, whose instrumentation changes what
// allocates: allocation measurements mean nothing there.
const raceEnabled = true
