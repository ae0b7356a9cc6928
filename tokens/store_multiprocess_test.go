package tokens

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// Environment of a re-executed test binary acting as a token writer process.
const (
	childDirEnv    = "GYMTRACE_TOKENS_CHILD_DIR"
	childWriterEnv = "GYMTRACE_TOKENS_CHILD_WRITER"
	childCountEnv  = "GYMTRACE_TOKENS_CHILD_COUNT"
)

// TestMain is the package's only TestMain: it turns the binary into a writer process when started by
// startTokenWriters, and otherwise runs the tests under goleak.
func TestMain(m *testing.M) {
	if dir := os.Getenv(childDirEnv); dir != "" {
		if err := runChildWriter(dir); err != nil {
			fmt.Fprintln(os.Stderr, "child token writer:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

// childEntry is writer w's n-th call of rollout mp: its prompt extends the writer's previous one.
func childEntry(writer, seq int) TokenEntry {
	e := baseEntry("mp", fmt.Sprintf("w%d-%04d", writer, seq))
	e.PromptTokenIDs = []int64{int64(writer), int64(seq)}
	e.CreatedAt = float64(seq) + 0.5
	return e
}

// runChildWriter does what the proxy does per call: the intent, then the entry.
func runChildWriter(dir string) error {
	writer, err1 := strconv.Atoi(os.Getenv(childWriterEnv))
	count, err2 := strconv.Atoi(os.Getenv(childCountEnv))
	if err := errors.Join(err1, err2); err != nil {
		return err
	}
	s, err := OpenStore(dir)
	if err != nil {
		return err
	}
	for seq := range count {
		e := childEntry(writer, seq)
		if err := s.BeginCall(e.RolloutID, e.ModelCallID); err != nil {
			return err
		}
		if err := s.Append(e); err != nil {
			return err
		}
	}
	return nil
}

// TestMultiProcessAppends (issue 15 part 5): 4 processes × 250 intents and appends on one rollout
// give 1000 intact lines, each call exactly once and in its writer's order, an index that covers
// them all (version 1000, then 1001 at the freeze) and no dangling intent.
func TestMultiProcessAppends(t *testing.T) {
	const writers, count = 4, 250
	dir := t.TempDir()
	cmds := make([]*exec.Cmd, writers)
	outs := make([]*strings.Builder, writers)
	for w := range writers {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		outs[w] = &strings.Builder{}
		cmd.Stdout, cmd.Stderr = outs[w], outs[w]
		cmd.Env = append(os.Environ(), childDirEnv+"="+dir, childWriterEnv+"="+strconv.Itoa(w), childCountEnv+"="+strconv.Itoa(count))
		require.NoError(t, cmd.Start())
		cmds[w] = cmd
	}
	for w, cmd := range cmds {
		require.NoError(t, cmd.Wait(), "writer %d output: %s", w, outs[w].String())
	}
	checkConcurrentAppends(t, dir, writers, count)
}

// TestConcurrentAppends: the same from goroutines of one process (run it with -race).
func TestConcurrentAppends(t *testing.T) {
	const writers, count = 8, 40
	dir := t.TempDir()
	s, err := OpenStore(dir)
	require.NoError(t, err)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for seq := range count {
				e := childEntry(w, seq)
				assert.NoError(t, s.BeginCall(e.RolloutID, e.ModelCallID))
				assert.NoError(t, s.Append(e))
			}
		})
	}
	wg.Wait()
	checkConcurrentAppends(t, dir, writers, count)
}

func checkConcurrentAppends(t *testing.T, dir string, writers, count int) {
	t.Helper()
	s, err := OpenStore(dir)
	require.NoError(t, err)
	entries, err := s.ReadEntries("mp")
	require.NoError(t, err)
	require.Len(t, entries, writers*count)
	seen := map[string]bool{}
	last := map[int64]int64{}
	for _, e := range entries {
		require.False(t, seen[e.ModelCallID], "%s twice", e.ModelCallID)
		seen[e.ModelCallID] = true
		w, seq := e.PromptTokenIDs[0], e.PromptTokenIDs[1]
		if prev, ok := last[w]; ok {
			require.Greater(t, seq, prev, "one writer's entries stay in its order")
		}
		last[w] = seq
	}
	st, err := s.readState("mp")
	require.NoError(t, err)
	digests, _ := st.get(stateEntryDigests)
	assert.Equal(t, writers*count, digests.Len())
	fi, err := os.Stat(s.path("mp", EntriesFileSuffix))
	require.NoError(t, err)
	size, _ := st.get(stateIndexedSize)
	assert.Equal(t, strconv.FormatInt(fi.Size(), 10), size.String())

	snap, err := s.Freeze("mp")
	require.NoError(t, err)
	assert.False(t, snap.Incomplete, "every intent has its entry")
	assert.Equal(t, int64(writers*count+1), snap.Version)
	assert.Len(t, snap.Entries, writers*count)
	des, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, de := range des {
		assert.False(t, strings.HasPrefix(de.Name(), stateTempPrefix), "temporary state file %s left behind", de.Name())
	}
}
