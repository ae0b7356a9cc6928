package capture

import (
	"bytes"
	"os"
	"testing"
)

// This file measures record derivation (SPEC §3.2): a capture line → ModelCallRecord, as `gymtrace
// calls`, `metrics` and `attach` do for every line they read, over the call shapes of
// encode_bench_test.go (perfCases). derive_test.go's BenchmarkBuildModelCallRecord covers one small
// Responses line including its dump; these add realistic sizes per dialect, the derivation alone,
// the dump, and a whole tolerant read. MB/s is over the capture line bytes.

// BenchmarkDeriveRecord measures BuildModelCallRecord alone.
func BenchmarkDeriveRecord(b *testing.B) {
	for _, c := range perfCases() {
		e := c.exchange()
		line := e.AppendJSON(nil)
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(line)))
			for b.Loop() {
				if _, err := BuildModelCallRecord(line, 0); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDeriveRecordDump measures derivation plus the record's JSON dump without payloads (one
// line of `gymtrace calls`), into a reused buffer.
func BenchmarkDeriveRecordDump(b *testing.B) {
	for _, c := range perfCases() {
		e := c.exchange()
		line := e.AppendJSON(nil)
		b.Run(c.name, func(b *testing.B) {
			var buf []byte
			b.ReportAllocs()
			b.SetBytes(int64(len(line)))
			for b.Loop() {
				rec, err := BuildModelCallRecord(line, 0)
				if err != nil {
					b.Fatal(err)
				}
				buf = rec.AppendJSON(buf[:0], false)
			}
		})
	}
}

// BenchmarkDeriveReadAvailable measures the tolerant record reader over a rollout file of 40 calls
// of every shape (200 lines) plus one damaged line; records/s is reported besides MB/s.
func BenchmarkDeriveReadAvailable(b *testing.B) {
	var content bytes.Buffer
	lines := 0
	for range 40 {
		for _, c := range perfCases() {
			e := c.exchange()
			content.Write(e.AppendJSON(nil))
			lines++
		}
	}
	content.WriteString("{damaged\n")
	s, err := NewStore(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	path, err := s.CapturePath("rollout")
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(path, content.Bytes(), 0o600); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(content.Len()))
	for b.Loop() {
		recs, invalid, err := s.ReadAvailableModelCallRecords("rollout")
		if err != nil || len(recs) != lines || invalid != 1 {
			b.Fatal(len(recs), invalid, err)
		}
	}
	b.ReportMetric(float64(b.N*lines)/b.Elapsed().Seconds(), "records/s")
}
