//go:build race

package capture

// raceDetector reports a -race build, whose instrumentation makes reading a large line many times
// slower: the bound tests that measure allocation per byte read smaller lines there.
const raceDetector = true
