package jaegertest

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// Environment variables read by [FromEnv] and printed by scripts/jaeger.sh start.
const (
	// EnvQueryURL is the query API base URL, e.g. http://127.0.0.1:16686.
	EnvQueryURL = "JAEGER_QUERY_URL"
	// EnvOTLPHTTP is the OTLP/HTTP receiver base URL, e.g. http://127.0.0.1:4318 (traces go to /v1/traces).
	EnvOTLPHTTP = "JAEGER_OTLP_HTTP"
	// EnvOTLPGRPC is the OTLP/gRPC receiver host:port, e.g. 127.0.0.1:4317.
	EnvOTLPGRPC = "JAEGER_OTLP_GRPC"
	// EnvPID is the process id of the Jaeger the other variables describe.
	EnvPID = "JAEGER_PID"
	// EnvRequire, when "1", makes [FromEnv] fail instead of starting its own Jaeger. CI sets it.
	EnvRequire = "GYMTRACE_REQUIRE_JAEGER"
)

// Jaeger is a running Jaeger reachable on the loopback interface.
type Jaeger struct {
	// QueryURL is the query API and UI base URL without a trailing slash, e.g. http://127.0.0.1:16686.
	QueryURL string
	// OTLPHTTPEndpoint is the OTLP/HTTP receiver base URL without a trailing slash, e.g.
	// http://127.0.0.1:4318; otlptracehttp.WithEndpointURL takes it with "/v1/traces" appended.
	OTLPHTTPEndpoint string
	// OTLPGRPCEndpoint is the OTLP/gRPC receiver as host:port, e.g. 127.0.0.1:4317 (plaintext:
	// otlptracegrpc.WithEndpoint plus WithInsecure). Empty when the environment did not name one.
	OTLPGRPCEndpoint string
	// PID is the Jaeger process id, 0 when unknown.
	PID int
}

// FromEnv returns the Jaeger named by JAEGER_QUERY_URL and JAEGER_OTLP_HTTP (plus the optional
// JAEGER_OTLP_GRPC and JAEGER_PID). When both are unset it fails the test if GYMTRACE_REQUIRE_JAEGER=1
// and otherwise starts a private instance with [Start], stopped when t ends (each such call starts
// its own, about a second with a cached binary). It fails the test when
// only one of the two is set, when a value does not parse, or when a host is not a loopback address.
func FromEnv(t testing.TB) Jaeger {
	t.Helper()
	j, ok, err := resolveEnv(os.Getenv)
	if err != nil {
		t.Fatalf("jaegertest: %v", err)
	}
	if ok {
		return j
	}
	if os.Getenv(EnvRequire) == "1" {
		t.Fatalf("jaegertest: %s=1 but %s and %s are unset: run `scripts/jaeger.sh start` and export what it prints",
			EnvRequire, EnvQueryURL, EnvOTLPHTTP)
	}
	return Start(t)
}

// resolveEnv reads the Jaeger environment through getenv. ok is false when neither required
// variable is set.
func resolveEnv(getenv func(string) string) (j Jaeger, ok bool, err error) {
	query, otlpHTTP := getenv(EnvQueryURL), getenv(EnvOTLPHTTP)
	if query == "" && otlpHTTP == "" {
		return Jaeger{}, false, nil
	}
	if query == "" || otlpHTTP == "" {
		return Jaeger{}, false, fmt.Errorf("env: %s=%q and %s=%q: set both or neither", EnvQueryURL, query, EnvOTLPHTTP, otlpHTTP)
	}
	if j.QueryURL, err = loopbackURL(EnvQueryURL, query); err != nil {
		return Jaeger{}, false, err
	}
	if j.OTLPHTTPEndpoint, err = loopbackURL(EnvOTLPHTTP, otlpHTTP); err != nil {
		return Jaeger{}, false, err
	}
	if g := getenv(EnvOTLPGRPC); g != "" {
		if err := loopbackHostPort(EnvOTLPGRPC, g); err != nil {
			return Jaeger{}, false, err
		}
		j.OTLPGRPCEndpoint = g
	}
	if p := getenv(EnvPID); p != "" {
		if j.PID, err = strconv.Atoi(p); err != nil || j.PID <= 0 {
			return Jaeger{}, false, fmt.Errorf("env: %s=%q: want a positive process id", EnvPID, p)
		}
	}
	return j, true, nil
}

// loopbackURL checks that raw is an http URL on a loopback host and returns it without a trailing slash.
func loopbackURL(name, raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("env: %s=%q: %w", name, raw, err)
	}
	if u.Scheme != "http" || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		return "", fmt.Errorf("env: %s=%q: want http://host:port with no path", name, raw)
	}
	if err := loopbackHostPort(name, u.Host); err != nil {
		return "", err
	}
	return strings.TrimSuffix(raw, "/"), nil
}

// loopbackHostPort checks that hostport is host:port with a loopback host (tests talk only to 127.0.0.1).
func loopbackHostPort(name, hostport string) error {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		return fmt.Errorf("env: %s=%q: %w", name, hostport, err)
	}
	if n, err := strconv.Atoi(port); err != nil || n <= 0 || n > 65535 {
		return fmt.Errorf("env: %s=%q: port %q is not in 1..65535", name, hostport, port)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("env: %s=%q: host %q is not a loopback address", name, hostport, host)
	}
	return nil
}

// Start builds Jaeger if the cache has no binary (several minutes the first time on a machine),
// starts a private instance on free 127.0.0.1 ports with scripts/jaeger.sh start and registers a
// cleanup that stops it. Start takes about a second with a cached binary. It ignores the
// JAEGER_*_PORT variables so it never clashes with a shared instance. It fails the test when the
// script fails; the Jaeger log is then in the failure message.
func Start(t testing.TB) Jaeger {
	t.Helper()
	script := scriptPath(t)
	stateDir := t.TempDir() // removed after the stop cleanup below, which runs first
	env := []string{"JAEGER_STATE_DIR=" + stateDir}
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, "JAEGER_") {
			continue
		}
		env = append(env, kv)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command("bash", script, "start")
	cmd.Env, cmd.Stdout, cmd.Stderr = env, &stdout, &stderr
	t.Cleanup(func() {
		stop := exec.Command("bash", script, "stop")
		stop.Env = env
		if out, err := stop.CombinedOutput(); err != nil {
			t.Errorf("jaegertest: stop: %v: %s", err, out)
		}
		if t.Failed() {
			if b, err := os.ReadFile(filepath.Join(stateDir, "jaeger.log")); err == nil {
				t.Logf("jaegertest: jaeger log:\n%s", tail(b, 4096))
			}
		}
	})
	if err := cmd.Run(); err != nil {
		t.Fatalf("jaegertest: %s start: %v\n%s", script, err, stderr.String())
	}
	vars := map[string]string{}
	sc := bufio.NewScanner(&stdout)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			vars[k] = v
		}
	}
	j, ok, err := resolveEnv(func(k string) string { return vars[k] })
	if err != nil || !ok {
		t.Fatalf("jaegertest: %s start printed no usable environment (%v):\n%s\n%s", script, err, stdout.String(), stderr.String())
	}
	return j
}

// scriptPath returns scripts/jaeger.sh of the repository that holds this source file.
func scriptPath(t testing.TB) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("jaegertest: cannot locate source file")
	}
	p := filepath.Join(filepath.Dir(file), "..", "..", "..", "scripts", "jaeger.sh")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("jaegertest: %v", err)
	}
	return p
}

// tail returns the last n bytes of b.
func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
