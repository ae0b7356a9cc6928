package bench

import (
	"fmt"
	"os"
	"slices"
	"time"
)

// fsyncSamples is how many write+fsync rounds the probe times, back to back and after an idle gap
// each (about 0.6 s in all on a disk with 0.2 ms fsyncs). With 50, the p50 that the concurrency-1
// verdict line adds to its limit moved from 0.16 to 0.32 ms between runs of one session on one
// disk, more than the 0.15 ms the verdict allows.
const fsyncSamples = 400

// fsyncIdleGap is the pause before each of the probe's idle rounds: about the time between two
// calls of one worker at concurrency 1, during which the disk and (in a virtual machine) the
// virtual CPUs go idle. An fsync issued after such a gap pays the device's (or the hypervisor's)
// wake-up, which back-to-back fsyncs do not; a call at concurrency 1 always pays it.
const fsyncIdleGap = time.Millisecond

// FsyncStats is the fsync latency measured in a directory: the physical floor of a durable capture
// append on that disk, as back-to-back fsyncs see it and as an fsync after an idle gap does.
type FsyncStats struct {
	// Dir is the directory the probe file was written in (the capture directories' parent).
	Dir string `json:"dir"`
	// Samples is the number of fsyncs timed back to back, and again after an idle gap each.
	Samples int `json:"samples"`
	// P50MS, P99MS and MeanMS are the back-to-back fsync latencies in milliseconds.
	P50MS  float64 `json:"p50_ms"`
	P99MS  float64 `json:"p99_ms"`
	MeanMS float64 `json:"mean_ms"`
	// IdleGapMS is the pause before each idle round, in milliseconds ([fsyncIdleGap]).
	IdleGapMS float64 `json:"idle_gap_ms"`
	// IdleP50MS, IdleP99MS and IdleMeanMS are the latencies in milliseconds of the same
	// write+fsync issued after an idle gap of IdleGapMS each: what one call at concurrency 1 pays.
	IdleP50MS  float64 `json:"idle_p50_ms"`
	IdleP99MS  float64 `json:"idle_p99_ms"`
	IdleMeanMS float64 `json:"idle_mean_ms"`
}

// measureFsync appends a 1 KiB line to a new file in dir n times back to back, timing each fsync
// that follows the write (as a capture append does), then n times more with an idle gap before
// each write, and removes the file.
func measureFsync(dir string, n int) (FsyncStats, error) {
	f, err := os.CreateTemp(dir, "fsync-probe-*")
	if err != nil {
		return FsyncStats{}, fmt.Errorf("bench: fsync probe: %w", err)
	}
	defer func() { _ = os.Remove(f.Name()) }()
	defer func() { _ = f.Close() }()
	line := make([]byte, 1024)
	for i := range line {
		line[i] = 'x'
	}
	line[len(line)-1] = '\n'
	st := FsyncStats{Dir: dir, Samples: n, IdleGapMS: ms(fsyncIdleGap)}
	round := func(gap time.Duration) (p50, p99, mean float64, err error) {
		lat := make([]time.Duration, 0, n)
		var sum time.Duration
		for range n {
			time.Sleep(gap)
			if _, err := f.Write(line); err != nil {
				return 0, 0, 0, fmt.Errorf("bench: fsync probe: %w", err)
			}
			t := time.Now()
			if err := f.Sync(); err != nil {
				return 0, 0, 0, fmt.Errorf("bench: fsync probe: %w", err)
			}
			d := time.Since(t)
			lat = append(lat, d)
			sum += d
		}
		slices.Sort(lat)
		return ms(percentile(lat, 0.50)), ms(percentile(lat, 0.99)), ms(sum / time.Duration(max(n, 1))), nil
	}
	if st.P50MS, st.P99MS, st.MeanMS, err = round(0); err != nil {
		return FsyncStats{}, err
	}
	if st.IdleP50MS, st.IdleP99MS, st.IdleMeanMS, err = round(fsyncIdleGap); err != nil {
		return FsyncStats{}, err
	}
	return st, nil
}
