package claudecode

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkExtract reads a 2,000-event session transcript (tool calls with results, thinking and
// text blocks), the size of a long Claude Code run.
func BenchmarkExtract(b *testing.B) {
	dir := b.TempDir()
	var lines []string
	for i := 0; i < 500; i++ {
		ts := time.Unix(1784714400+int64(i), 0).UTC().Format("2006-01-02T15:04:05.000Z")
		lines = append(lines,
			fmt.Sprintf(`{"parentUuid":null,"isSidechain":false,"sessionId":"s","type":"assistant","uuid":"a%d","timestamp":"%s","message":{"id":"msg-%d","role":"assistant","content":[{"type":"thinking","thinking":"plan %d","signature":"sig"}]}}`, i, ts, i, i),
			fmt.Sprintf(`{"parentUuid":"a%d","isSidechain":false,"sessionId":"s","type":"assistant","uuid":"b%d","timestamp":"%s","message":{"id":"msg-%d","role":"assistant","content":[{"type":"tool_use","id":"t%d","name":"Bash","input":{"command":"ls -la","description":"list"}}]}}`, i, i, ts, i, i),
			fmt.Sprintf(`{"parentUuid":"b%d","isSidechain":false,"sessionId":"s","type":"user","uuid":"c%d","timestamp":"%s","message":{"role":"user","content":[{"tool_use_id":"t%d","type":"tool_result","content":"total 0\nfile.txt","is_error":false}]},"toolUseResult":{"stdout":"total 0","stderr":"","interrupted":false}}`, i, i, ts, i),
			fmt.Sprintf(`{"parentUuid":"c%d","isSidechain":false,"sessionId":"s","type":"assistant","uuid":"d%d","timestamp":"%s","message":{"id":"msg-%d","role":"assistant","content":[{"type":"text","text":"done with step %d"}]}}`, i, i, ts, i, i))
	}
	writeTranscript(b, dir, filepath.Join("-work", "s.jsonl"), lines...)
	opts := Options{ModelServerName: "policy", Location: time.UTC}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Extract(dir, opts); err != nil {
			b.Fatal(err)
		}
	}
}
