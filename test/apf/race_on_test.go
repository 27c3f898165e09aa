//go:build race

package apf

// raceEnabled: the race detector multiplies the CPU cost of everything
// 5 to 10 times, so client-side latencies under a flood measure the
// machine, not admission control.
const raceEnabled = true
