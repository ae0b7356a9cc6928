package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/capture/capturetest"
	"github.com/gymtrace/gymtrace/internal/testkit/fakemodel"
)

// TestProxyCmdJournalKill9: `gymtrace proxy --durability journal` killed with SIGKILL at a random
// point under load from 16 clients, five times over one capture directory. After each kill a
// reading command (`gymtrace calls`, even runs) or the next proxy's start (odd runs) recovers the
// dead journal (SPEC §0 D17): every call a client saw end is in its file, and no model_call_id is
// there twice.
func TestProxyCmdJournalKill9(t *testing.T) {
	bin := buildGymtrace(t)
	fm := fakemodel.New(fakemodel.WithChunkDelay(time.Millisecond))
	up := httptest.NewServer(fm)
	defer up.Close()
	dir := filepath.Join(t.TempDir(), "caps")
	const clients, rollouts, runs = 16, 8, 5
	transport := &http.Transport{MaxIdleConnsPerHost: clients, DisableCompression: true}
	defer transport.CloseIdleConnections()
	client := &http.Client{Transport: transport}
	var acks []acked
	for run := range runs {
		p := startKillableProxy(t, bin, up.URL, dir, "--durability", "journal")
		target := 20 + rand.IntN(100)
		var mu sync.Mutex
		n := 0
		enough := make(chan struct{})
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for c := range clients {
			wg.Go(func() {
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					rq := crashRequests[(c+i)%len(crashRequests)]
					rollout := fmt.Sprintf("jk-%d", (c+i)%rollouts)
					id, ok := postAcked(client, p.url, rollout, rq.path, rq.body)
					if !ok {
						continue // the proxy is gone: not acknowledged
					}
					mu.Lock()
					acks = append(acks, acked{rollout, id})
					if n++; n == target {
						close(enough)
					}
					mu.Unlock()
				}
			})
		}
		select {
		case <-enough:
		case <-time.After(2 * time.Minute):
			close(stop)
			wg.Wait()
			t.Fatalf("run %d: only %d calls acknowledged before the deadline; stderr: %s", run, n, p.stderr)
		}
		require.NoError(t, p.cmd.Process.Kill())
		<-p.exited
		close(stop)
		wg.Wait()
		transport.CloseIdleConnections()

		if run%2 == 0 {
			for r := range rollouts {
				out, err := exec.Command(bin, "calls", "--capture-dir", dir, "--json", fmt.Sprintf("jk-%d", r)).CombinedOutput()
				require.NoError(t, err, "run %d: calls: %s", run, out)
			}
			des, err := os.ReadDir(filepath.Join(dir, capture.JournalDirName))
			require.NoError(t, err)
			for _, de := range des {
				assert.False(t, de.IsDir(), "run %d: the reading command recovered the dead journal %s", run, de.Name())
			}
		} else {
			p2 := startKillableProxy(t, bin, up.URL, dir, "--durability", "journal")
			require.NoError(t, p2.cmd.Process.Signal(os.Interrupt))
			<-p2.exited
			require.NoError(t, p2.err, "run %d: a proxy that recovered and stopped cleanly; stderr: %s", run, p2.stderr)
		}
		checkJournalAcks(t, dir, rollouts, acks)
	}
	t.Logf("%d calls acknowledged over %d kills, each once in its file", len(acks), runs)
}

// checkJournalAcks asserts that every acknowledged call is in its rollout file and that no
// model_call_id occurs twice.
func checkJournalAcks(t *testing.T, dir string, rollouts int, acks []acked) {
	t.Helper()
	store, err := capture.NewStore(dir)
	require.NoError(t, err)
	seen := map[string]int{}
	for r := range rollouts {
		rollout := fmt.Sprintf("jk-%d", r)
		recs, _, err := store.ReadAvailableModelCallRecords(rollout)
		require.NoError(t, err)
		for _, rec := range recs {
			require.NotNil(t, rec.ModelCallID)
			seen[rollout+"/"+*rec.ModelCallID]++
		}
	}
	for k, n := range seen {
		require.Equal(t, 1, n, "record %s", k)
	}
	for _, a := range acks {
		require.Len(t, a.id, 32)
		assert.Equal(t, 1, seen[a.rollout+"/"+a.id], "acknowledged call %s of %s", a.id, a.rollout)
	}
}

// TestReadersRecoverDamagedJournal: a reading command recovers a crashed writer's journal whose
// middle frame was damaged (a user trial: one flipped byte lost every later record, silently):
// the intact records are appended, the damage is reported on stderr naming the kept segment, and
// an entry of the journal directory that no store made is reported and left alone.
func TestReadersRecoverDamagedJournal(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, capture.JournalDirName)
	line := func(v int) string {
		return fmt.Sprintf(`{"model_call_id":"%032x","v":%d}`+"\n", v, v)
	}
	owner := capturetest.WriteDeadJournal(t, dir, "r1"+capture.CaptureFileSuffix, line(1), line(2), line(3))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "backup"), 0o700))
	segPath := filepath.Join(owner, "00000000000000000001.seg")
	seg, err := os.ReadFile(segPath)
	require.NoError(t, err)
	seg[bytes.Index(seg, []byte(line(2)))+5] ^= 1
	require.NoError(t, os.WriteFile(segPath, seg, 0o600))

	r := runGymtrace(t, "calls", "--capture-dir", dir, "--json", "r1")
	require.NoError(t, r.err, r.stderr)
	assert.Contains(t, r.stderr, "gymtrace calls: recovered 2 records from 1 crashed journal into "+dir)
	assert.Contains(t, r.stderr, "gymtrace calls: warning: capture journal: kept "+owner+"-00000000000000000001.damaged")
	assert.Contains(t, r.stderr, "gymtrace calls: warning: capture journal: left "+filepath.Join(root, "backup")+" alone")
	b, err := os.ReadFile(filepath.Join(dir, "r1"+capture.CaptureFileSuffix))
	require.NoError(t, err)
	assert.Equal(t, line(1)+line(3), string(b))
	assert.DirExists(t, filepath.Join(root, "backup"))
	assert.NoDirExists(t, owner)
}
