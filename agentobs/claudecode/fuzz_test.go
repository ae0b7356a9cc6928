package claudecode

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"testing/fstest"
	"time"

	"github.com/gymtrace/gymtrace/agentobs"
	"github.com/gymtrace/gymtrace/ojson"
)

// FuzzExtract feeds arbitrary bytes as a session transcript and as a subagent transcript: the
// reader never panics, never fails, and always yields a valid bundle whose JSON is strict.
func FuzzExtract(f *testing.F) {
	for _, p := range []string{
		"91_nested_tree/claude/projects/-work/session-root.jsonl",
		"91_nested_tree/claude/projects/-work/session-root/subagents/agent-child.jsonl",
		"92_compaction_markers/claude/projects/-work/session.jsonl",
		"94_malformed_and_incomplete/claude/projects/-work/root.jsonl",
		"95_cyclic_parents/claude/projects/-work/root.jsonl",
		"e2e_compaction_link/claude/projects/-work/root.jsonl",
	} {
		data, err := os.ReadFile(filepath.Join("testdata", p))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, []byte(`{"sessionId":"s","agentId":"a1","type":"assistant","message":{"id":"m","role":"assistant","content":"x"}}`))
	}
	f.Add([]byte("\xff\xfe\r\r\n{\"sessionId\":\"\x00\"}"), []byte(`{"sessionId":"s","toolUseResult":{"agentId":"s"},"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":""}]}}`))
	detail := regexp.MustCompile(`^[a-z]\.jsonl:[0-9]+$`)
	f.Fuzz(func(t *testing.T, session, subagent []byte) {
		const root = "/claude"
		fsys := memFS{root: root, m: fstest.MapFS{
			"projects/w/s.jsonl":               {Data: session},
			"projects/w/s/subagents/a.jsonl":   {Data: subagent},
			"skills/ignored.jsonl":             {Data: subagent},
			"projects/w/s/subagents/notes.txt": {Data: session},
		}}
		opts := Options{ModelServerName: "policy", RootStatus: agentobs.InvocationStatusCompleted, Location: time.UTC,
			CompactionAttempts: []CompactionAttempt{{InvocationID: "s", Outcome: agentobs.CompactionOutcomeFailed}}}
		b, err := newExtractor(fsys, opts).extract(root)
		if err != nil {
			t.Fatalf("extract: %v", err)
		}
		if err := b.Validate(); err != nil {
			t.Fatalf("invalid bundle: %v", err)
		}
		out, err := b.MarshalJSON()
		if err != nil {
			t.Fatalf("MarshalJSON: %v", err)
		}
		if _, err := ojson.Parse(out); err != nil {
			t.Fatalf("bundle JSON is not strict JSON: %v", err)
		}
		for _, g := range b.Gaps {
			if (g.Code == GapMalformedTranscriptLine || g.Code == GapInvalidTranscriptRecord) && (g.Detail == nil || !detail.MatchString(*g.Detail)) {
				t.Fatalf("gap %s detail %v is not <file>:<line>", g.Code, g.Detail)
			}
		}
		if _, err := JoinCalls(b, nil); err != nil {
			t.Fatalf("JoinCalls: %v", err)
		}
	})
}
