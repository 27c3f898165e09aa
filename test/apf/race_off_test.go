//go:build !race

package apf

const raceEnabled = false
