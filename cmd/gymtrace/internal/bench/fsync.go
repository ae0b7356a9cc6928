package bench

import (
	"fmt"
	"os"
	"slices"
	"time"
)

// fsyncSamples is how many write+fsync rounds the probe times.
const fsyncSamples = 50

// FsyncStats is the fsync latency measured in a directory: the physical floor of a durable capture
// append on that disk.
type FsyncStats struct {
	// Dir is the directory the probe file was written in (the capture directories' parent).
	Dir string `json:"dir"`
	// Samples is the number of fsyncs timed.
	Samples int `json:"samples"`
	// P50MS, P99MS and MeanMS are the fsync latencies in milliseconds.
	P50MS  float64 `json:"p50_ms"`
	P99MS  float64 `json:"p99_ms"`
	MeanMS float64 `json:"mean_ms"`
}

// measureFsync appends a 1 KiB line to a new file in dir n times, timing each fsync that follows
// the write (as a capture append does), and removes the file.
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
	lat := make([]time.Duration, 0, n)
	var sum time.Duration
	for range n {
		if _, err := f.Write(line); err != nil {
			return FsyncStats{}, fmt.Errorf("bench: fsync probe: %w", err)
		}
		t := time.Now()
		if err := f.Sync(); err != nil {
			return FsyncStats{}, fmt.Errorf("bench: fsync probe: %w", err)
		}
		d := time.Since(t)
		lat = append(lat, d)
		sum += d
	}
	slices.Sort(lat)
	return FsyncStats{
		Dir: dir, Samples: n,
		P50MS:  ms(percentile(lat, 0.50)),
		P99MS:  ms(percentile(lat, 0.99)),
		MeanMS: ms(sum / time.Duration(max(n, 1))),
	}, nil
}
