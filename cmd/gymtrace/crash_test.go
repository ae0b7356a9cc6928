package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/internal/testkit/fakemodel"
	"github.com/gymtrace/gymtrace/internal/testkit/syncbuf"
	"github.com/gymtrace/gymtrace/ojson"
)

// Issue 7 part 2: a proxy killed with SIGKILL under load loses no record a client saw the end of, and
// the next proxy on the same directory repairs a torn tail (SPEC §0 D7).

// killableProxy is a `gymtrace proxy` process the test may SIGKILL.
type killableProxy struct {
	url    string
	cmd    *exec.Cmd
	stderr *syncbuf.Buffer
	exited chan struct{} // closed once the process was reaped
	err    error         // Wait's result, set before exited is closed
}

// startKillableProxy runs the binary's proxy on a free 127.0.0.1 port and waits for its ready line.
// At cleanup a still running process is killed and reaped. args are further proxy flags.
func startKillableProxy(t *testing.T, bin, upstream, dir string, args ...string) *killableProxy {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"proxy", "--upstream", upstream, "--capture-dir", dir, "--listen", "127.0.0.1:0"}, args...)...)
	p := &killableProxy{cmd: cmd, stderr: &syncbuf.Buffer{}, exited: make(chan struct{})}
	cmd.Stderr = p.stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	ready := make(chan string, 1)
	go func() {
		br := bufio.NewReader(out)
		line, _ := br.ReadString('\n')
		ready <- line
		_, _ = io.Copy(io.Discard, br)
		p.err = cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		select {
		case <-p.exited:
		case <-time.After(20 * time.Second):
			t.Errorf("proxy %d not reaped", cmd.Process.Pid)
		}
	})
	select {
	case line := <-ready:
		require.True(t, strings.HasPrefix(line, "listening on http://127.0.0.1:"), "ready line %q; stderr: %s", line, p.stderr)
		p.url = strings.TrimSpace(strings.TrimPrefix(line, "listening on "))
	case <-time.After(20 * time.Second):
		t.Fatalf("proxy not ready; stderr: %s", p.stderr)
	}
	return p
}

// crashRequests are the calls of the load, one per dialect, streamed and not.
// postAcked posts body to the proxy at url under rollout's prefix + path; ok says the call was
// acknowledged (answered 200 and read to its end), id is its X-Gymtrace-Model-Call-Id.
func postAcked(client *http.Client, url, rollout, path, body string) (id string, ok bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/ng-rollout/"+rollout+path, strings.NewReader(body))
	if err != nil {
		return "", false
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", false
	}
	defer resp.Body.Close()
	if _, err := io.ReadAll(resp.Body); err != nil || resp.StatusCode != http.StatusOK {
		return "", false
	}
	return resp.Header.Get("X-Gymtrace-Model-Call-Id"), true
}

var crashRequests = []struct{ path, body string }{
	{"/v1/responses", `{"model":"gpt-4.1-mini","stream":true,"input":"crash test"}`},
	{"/v1/responses", `{"model":"gpt-4.1-mini","input":"crash test"}`},
	{"/v1/chat/completions", `{"model":"gpt-4.1-mini","stream":true,"messages":[{"role":"user","content":"crash test"}]}`},
	{"/v1/chat/completions", `{"model":"gpt-4.1-mini","messages":[{"role":"user","content":"crash test"}]}`},
	{"/v1/messages", `{"model":"claude-haiku-4-5","max_tokens":256,"stream":true,"messages":[{"role":"user","content":"crash test"}]}`},
	{"/v1/messages", `{"model":"claude-haiku-4-5","max_tokens":256,"messages":[{"role":"user","content":"crash test"}]}`},
}

// acked is a call whose client read the whole response: the end of the call was observed.
type acked struct{ rollout, id string }

// readRollout reads a capture file with the tolerant reader and returns the model_call_ids of its
// intact records and the capture indices of its damaged lines.
func readRollout(t *testing.T, s *capture.Store, rollout string) (ids map[string]int, damaged []int, total int) {
	t.Helper()
	path, err := s.CapturePath(rollout)
	require.NoError(t, err)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	ids = map[string]int{}
	index := 0
	for _, line := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		v, err := ojson.Parse([]byte(line))
		if err != nil || v.Kind() != ojson.KindObject {
			damaged = append(damaged, index)
		} else {
			id, _ := v.Get("model_call_id")
			s, _ := id.AsString()
			ids[s] = index
		}
		index++
	}
	lines, invalid, err := s.ReadAvailable(rollout)
	require.NoError(t, err)
	require.Equal(t, len(damaged), invalid, "our count agrees with the tolerant reader")
	require.Len(t, lines, len(ids))
	return ids, damaged, index
}

// TestProxyCmdKill9UnderLoad: SIGKILL while 32 clients keep calls in flight. Every call whose end a
// client saw is intact in the file (SPEC §0 "Durability contract"); the only damage a kill may leave
// is one torn last line. A proxy restarted on the same directory repairs a torn tail before its
// first append (D7), and what it created has the default modes (0700 directory, 0600 files).
func TestProxyCmdKill9UnderLoad(t *testing.T) {
	bin := buildGymtrace(t)
	fm := fakemodel.New(fakemodel.WithChunkDelay(time.Millisecond))
	up := httptest.NewServer(fm)
	defer up.Close()
	dir := filepath.Join(t.TempDir(), "caps")
	p := startKillableProxy(t, bin, up.URL, dir)

	const clients, rollouts, ackTarget = 32, 4, 150
	var mu sync.Mutex
	var acks []acked
	enough := make(chan struct{})
	stop := make(chan struct{})
	var wg sync.WaitGroup
	transport := &http.Transport{MaxIdleConnsPerHost: clients, DisableCompression: true}
	defer transport.CloseIdleConnections()
	client := &http.Client{Transport: transport}
	for c := range clients {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(7, uint64(c)))
			for {
				select {
				case <-stop:
					return
				default:
				}
				rq := crashRequests[rng.IntN(len(crashRequests))]
				rollout := fmt.Sprintf("kill-%d", rng.IntN(rollouts))
				id, ok := postAcked(client, p.url, rollout, rq.path, rq.body)
				if !ok {
					continue // the proxy is gone: not acknowledged
				}
				mu.Lock()
				acks = append(acks, acked{rollout, id})
				if len(acks) == ackTarget {
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
		t.Fatalf("only %d calls acknowledged before the deadline; stderr: %s", len(acks), p.stderr)
	}
	require.NoError(t, p.cmd.Process.Kill()) // SIGKILL with calls in flight
	<-p.exited
	require.Error(t, p.err)
	assert.Contains(t, p.err.Error(), "killed")
	close(stop)
	wg.Wait()

	store, err := capture.NewStore(dir)
	require.NoError(t, err)
	mu.Lock()
	defer mu.Unlock()
	byRollout := map[string]map[string]int{}
	for r := range rollouts {
		rollout := fmt.Sprintf("kill-%d", r)
		ids, damaged, total := readRollout(t, store, rollout)
		byRollout[rollout] = ids
		switch len(damaged) {
		case 0:
		case 1:
			assert.Equal(t, total-1, damaged[0], "%s: only the last line may be torn by the kill", rollout)
		default:
			t.Errorf("%s: damaged lines %v", rollout, damaged)
		}
	}
	for _, a := range acks {
		require.Len(t, a.id, 32)
		_, ok := byRollout[a.rollout][a.id]
		assert.True(t, ok, "acknowledged call %s of %s is intact in the file", a.id, a.rollout)
	}
	t.Logf("%d calls acknowledged before/at the kill, all intact", len(acks))

	// D7 end to end: a writer killed inside a write leaves a line without its newline. One kill
	// cannot be aimed inside one write, so the fragment such a kill leaves is appended here.
	path, err := store.CapturePath("kill-0")
	require.NoError(t, err)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"model_call_id":"torn-by-a-crash","dialect":"ch`)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	_, damagedBefore, _ := readRollout(t, store, "kill-0")

	p2 := startKillableProxy(t, bin, up.URL, dir)
	resp, err := client.Post(p2.url+"/ng-rollout/kill-0/v1/chat/completions", "application/json", strings.NewReader(crashRequests[2].body))
	require.NoError(t, err)
	_, err = io.ReadAll(resp.Body)
	require.NoError(t, err)
	resp.Body.Close()
	newID := resp.Header.Get("X-Gymtrace-Model-Call-Id")
	ids, damaged, total := readRollout(t, store, "kill-0")
	assert.Equal(t, total-1, ids[newID], "the new record is intact and last")
	assert.Len(t, damaged, len(damagedBefore), "the torn line stays one unreadable line, the new record is not glued to it")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Contains(t, string(data), `"dialect":"ch`+"\n"+`{"model_call_id":"`+newID+`"`, "a newline was written before the new record")
	assert.True(t, strings.HasSuffix(string(data), "}\n"))

	fi, err := os.Stat(dir)
	require.NoError(t, err)
	assert.Equal(t, fs.FileMode(0o700), fi.Mode().Perm(), "default directory mode")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		fi, err := e.Info()
		require.NoError(t, err)
		assert.Equal(t, fs.FileMode(0o600), fi.Mode().Perm(), "default file mode of %s", e.Name())
	}
}
