package main

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOutputsThatAreNotRegularFiles: attach --output and report --html replace their output with a
// rename, so a symbolic link (e.g. /dev/stdout), a FIFO or a directory there is refused (exit 2)
// and left exactly as it was.
func TestOutputsThatAreNotRegularFiles(t *testing.T) {
	capDir := t.TempDir()
	in := filepath.Join(t.TempDir(), "rollouts.jsonl")
	require.NoError(t, os.WriteFile(in, []byte(`{"_ng_rollout_id":"r1"}`+"\n"), 0o600))
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	require.NoError(t, os.WriteFile(target, []byte("keep"), 0o600))
	link := filepath.Join(dir, "link")
	require.NoError(t, os.Symlink(target, link))
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	sub := filepath.Join(dir, "sub")
	require.NoError(t, os.Mkdir(sub, 0o700))

	tests := []struct {
		name string
		args []string
		path string
		want string
	}{
		{name: "attach to a symlink", path: link, want: "is a symbolic link",
			args: []string{"attach", "--capture-dir", capDir, "--input", in, "--output", link}},
		{name: "attach to a fifo", path: fifo, want: "is a named pipe",
			args: []string{"attach", "--capture-dir", capDir, "--input", in, "--output", fifo}},
		{name: "report html to a symlink", path: link, want: "is a symbolic link",
			args: []string{"report", "--capture-dir", capDir, "--html", link}},
		{name: "report html to a directory", path: sub, want: "is a directory",
			args: []string{"report", "--capture-dir", capDir, "--html", sub}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before, err := os.Lstat(tt.path)
			require.NoError(t, err)
			res := runGymtrace(t, tt.args...)
			assert.Equal(t, 2, res.code, "stderr: %s", res.stderr)
			assert.ErrorContains(t, res.err, tt.want)
			after, err := os.Lstat(tt.path)
			require.NoError(t, err)
			assert.Equal(t, before.Mode(), after.Mode(), "left as it was")
			got, err := os.ReadFile(target)
			require.NoError(t, err)
			assert.Equal(t, "keep", string(got))
		})
	}
}

// TestOutputsOverCaptureFiles performs issue #14 finding 7's attack in each of its forms: attach
// --output and report --html naming a file of the capture directory (absolute, relative, through
// "..", through a symlinked directory, in the --run-id namespace), an existing capture file
// elsewhere, or the command's own input. Each is refused before anything is written (exit 2,
// naming the path and the rule); the capture directory is left byte for byte as it was.
func TestOutputsOverCaptureFiles(t *testing.T) {
	capDir := t.TempDir()
	record := `{"model_call_id":"c1"}` + "\n"
	files := map[string]string{
		"3-1.capture.jsonl": record, "3-1.capture.incomplete": "", "3-1.observations.jsonl": record,
		"run1/4-1.capture.jsonl": record,
	}
	require.NoError(t, os.MkdirAll(filepath.Join(capDir, "run1"), 0o700))
	require.NoError(t, os.Mkdir(filepath.Join(capDir, "sub"), 0o700))
	for name, content := range files {
		require.NoError(t, os.WriteFile(filepath.Join(capDir, name), []byte(content), 0o600))
	}
	elsewhere := t.TempDir()
	in := filepath.Join(elsewhere, "rollouts.jsonl")
	require.NoError(t, os.WriteFile(in, []byte(`{"_ng_rollout_id":"3-1"}`+"\n"), 0o600))
	otherCapture := filepath.Join(elsewhere, "5-5.capture.jsonl")
	require.NoError(t, os.WriteFile(otherCapture, []byte(record), 0o600))
	links := t.TempDir()
	capLink := filepath.Join(links, "cap")
	require.NoError(t, os.Symlink(capDir, capLink))
	subLink := filepath.Join(links, "sub")
	require.NoError(t, os.Symlink(filepath.Join(capDir, "sub"), subLink))
	inLink := filepath.Join(links, "in")
	require.NoError(t, os.Symlink(elsewhere, inLink))
	tokenDir := t.TempDir()

	attach := func(output string, extra ...string) []string {
		return append([]string{"attach", "--capture-dir", capDir, "--input", in, "--output", output}, extra...)
	}
	report := func(html string, extra ...string) []string {
		return append([]string{"report", "--capture-dir", capDir, "--html", html}, extra...)
	}
	const inCapDir, existing, same = "names a file of the capture directory", "is an existing capture, observations or token file", "are the same file"
	tests := []struct {
		name  string
		chdir string
		args  []string
		want  string
	}{
		{name: "attach over a capture file", args: attach(filepath.Join(capDir, "3-1.capture.jsonl")), want: inCapDir},
		{name: "attach over a marker", args: attach(filepath.Join(capDir, "3-1.capture.incomplete")), want: inCapDir},
		{name: "attach over an observations file", args: attach(filepath.Join(capDir, "3-1.observations.jsonl")), want: inCapDir},
		{name: "attach to a new token file name", args: attach(filepath.Join(capDir, "3-1.tokens.jsonl")), want: inCapDir},
		{name: "attach to a new capture file name", args: attach(filepath.Join(capDir, "9-9.capture.jsonl")), want: inCapDir},
		{name: "relative path", chdir: capDir, args: attach("3-1.capture.jsonl"), want: inCapDir},
		{name: "dot-dot", args: attach(filepath.Join(capDir, "sub", "..", "3-1.capture.jsonl")), want: inCapDir},
		{name: "symlinked directory", args: attach(filepath.Join(capLink, "3-1.capture.jsonl")), want: inCapDir},
		{name: "dot-dot after a symlink", args: attach(subLink + "/../9-9.capture.jsonl"), want: inCapDir},
		{name: "run namespace", args: attach(filepath.Join(capDir, "run1", "4-1.capture.jsonl"), "--run-id", "run1"), want: inCapDir},
		{name: "top directory with a run id", args: attach(filepath.Join(capDir, "3-1.capture.jsonl"), "--run-id", "run1"), want: inCapDir},
		{name: "existing capture file elsewhere", args: attach(otherCapture), want: existing},
		{name: "a new token file name in --token-dir", args: attach(filepath.Join(tokenDir, "3-1.tokens.jsonl"), "--token-dir", tokenDir), want: inCapDir},
		{name: "report html to a new token file name in --token-dir", args: report(filepath.Join(tokenDir, "3-1.tokens.state.json"), "--token-dir", tokenDir), want: inCapDir},
		{name: "output is the input through a symlinked directory", args: attach(filepath.Join(inLink, "rollouts.jsonl")), want: same},
		{name: "report html over a capture file", args: report(filepath.Join(capDir, "3-1.capture.jsonl")), want: inCapDir},
		{name: "report html over a capture file elsewhere", args: report(otherCapture), want: existing},
		{name: "report html over its rollouts file", args: report(filepath.Join(inLink, "rollouts.jsonl"), "--rollouts", in), want: same},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.chdir != "" {
				t.Chdir(tt.chdir)
			}
			res := runGymtrace(t, tt.args...)
			assert.Equal(t, 2, res.code, "stderr: %s", res.stderr)
			assert.ErrorContains(t, res.err, tt.want)
			assert.Empty(t, res.stdout, "nothing written")
			for name, content := range files {
				got, err := os.ReadFile(filepath.Join(capDir, name))
				require.NoError(t, err)
				assert.Equal(t, content, string(got), "%s left as it was", name)
			}
			assert.Equal(t, []string{"3-1.capture.incomplete", "3-1.capture.jsonl", "3-1.observations.jsonl", "run1", "sub"}, entryNames(t, capDir))
			assert.Equal(t, []string{"5-5.capture.jsonl", "rollouts.jsonl"}, entryNames(t, elsewhere), "no output or temporary file")
			got, err := os.ReadFile(in)
			require.NoError(t, err)
			assert.Equal(t, `{"_ng_rollout_id":"3-1"}`+"\n", string(got))
		})
	}

	t.Run("a new capture-like name elsewhere is allowed", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "attached.capture.jsonl")
		res := runGymtrace(t, attach(out)...)
		require.Equal(t, 0, res.code, "stderr: %s", res.stderr)
		assert.FileExists(t, out)
	})
}

// entryNames lists the names in dir, sorted.
func entryNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}
