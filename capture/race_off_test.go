//go:build !race

package capture

// raceDetector reports a -race build (see race_on_test.go).
const raceDetector = false
