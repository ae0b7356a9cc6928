package jaegertest

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// listener is one listening TCP socket or bound UDP socket of a process.
type listener struct {
	proto string // tcp, tcp6, udp, udp6
	addr  net.IP
	port  int
}

func (l listener) String() string {
	return fmt.Sprintf("%s %s", l.proto, net.JoinHostPort(l.addr.String(), strconv.Itoa(l.port)))
}

// listeners returns the sockets pid listens on, read from /proc (Linux).
func listeners(t *testing.T, pid int) []listener {
	t.Helper()
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	require.NoError(t, err)
	inodes := map[string]bool{}
	for _, fd := range fds {
		link, err := os.Readlink(filepath.Join(fmt.Sprintf("/proc/%d/fd", pid), fd.Name()))
		if err == nil && strings.HasPrefix(link, "socket:[") {
			inodes[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] = true
		}
	}
	var out []listener
	for _, proto := range []string{"tcp", "tcp6", "udp", "udp6"} {
		f, err := os.Open(filepath.Join("/proc", strconv.Itoa(pid), "net", proto))
		require.NoError(t, err)
		sc := bufio.NewScanner(f)
		sc.Scan() // header
		for sc.Scan() {
			// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
			fields := strings.Fields(sc.Text())
			if len(fields) < 10 || !inodes[fields[9]] || (strings.HasPrefix(proto, "tcp") && fields[3] != "0A") {
				continue
			}
			l, err := parseProcAddr(proto, fields[1])
			require.NoError(t, err)
			out = append(out, l)
		}
		require.NoError(t, sc.Err())
		require.NoError(t, f.Close())
	}
	return out
}

// parseProcAddr decodes /proc/net's "HEXADDR:HEXPORT"; the address is stored as 32-bit words in host
// (little-endian) byte order.
func parseProcAddr(proto, s string) (listener, error) {
	h, p, ok := strings.Cut(s, ":")
	if !ok {
		return listener{}, fmt.Errorf("proc addr %q: no colon", s)
	}
	raw, err := hex.DecodeString(h)
	if err != nil || (len(raw) != 4 && len(raw) != 16) {
		return listener{}, fmt.Errorf("proc addr %q: bad address", s)
	}
	for i := 0; i < len(raw); i += 4 {
		raw[i], raw[i+1], raw[i+2], raw[i+3] = raw[i+3], raw[i+2], raw[i+1], raw[i]
	}
	port, err := strconv.ParseUint(p, 16, 16)
	if err != nil {
		return listener{}, fmt.Errorf("proc addr %q: bad port: %w", s, err)
	}
	return listener{proto: proto, addr: net.IP(raw), port: int(port)}, nil
}

func TestParseProcAddr(t *testing.T) {
	tests := []struct {
		name, in, wantAddr string
		wantPort           int
		wantErr            string
	}{
		{name: "ipv4 loopback", in: "0100007F:10EB", wantAddr: "127.0.0.1", wantPort: 4331},
		{name: "ipv4 any", in: "00000000:1F90", wantAddr: "0.0.0.0", wantPort: 8080},
		{name: "ipv6 any", in: "00000000000000000000000000000000:10E1", wantAddr: "::", wantPort: 4321},
		{name: "ipv6 loopback", in: "00000000000000000000000001000000:0035", wantAddr: "::1", wantPort: 53},
		{name: "v4-mapped loopback", in: "0000000000000000FFFF00000100007F:0050", wantAddr: "127.0.0.1", wantPort: 80},
		{name: "no port", in: "0100007F", wantErr: "no colon"},
		{name: "odd length", in: "0100007:0050", wantErr: "bad address"},
		{name: "bad port", in: "0100007F:XYZ", wantErr: "bad port"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := parseProcAddr("tcp", tt.in)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantAddr, l.addr.String())
			assert.Equal(t, tt.wantPort, l.port)
		})
	}
}

// portOf returns the port of a URL or host:port.
func portOf(t *testing.T, s string) int {
	t.Helper()
	if u, err := url.Parse(s); err == nil && u.Host != "" {
		s = u.Host
	}
	_, p, err := net.SplitHostPort(s)
	require.NoError(t, err)
	n, err := strconv.Atoi(p)
	require.NoError(t, err)
	return n
}

// assertLoopbackOnly checks that every socket Jaeger listens on is bound to 127.0.0.1 (never
// 0.0.0.0, [::] or another interface) and that the query, OTLP/HTTP and OTLP/gRPC ports are among them.
func assertLoopbackOnly(t *testing.T, j Jaeger) {
	t.Helper()
	require.NotZero(t, j.PID, "%s is unset: cannot inspect the Jaeger process", EnvPID)
	ls := listeners(t, j.PID)
	ports := map[int]bool{}
	for _, l := range ls {
		assert.True(t, l.addr.Equal(net.IPv4(127, 0, 0, 1)), "jaeger pid %d listens on %s", j.PID, l)
		ports[l.port] = true
	}
	for _, want := range []string{j.QueryURL, j.OTLPHTTPEndpoint, j.OTLPGRPCEndpoint} {
		assert.True(t, ports[portOf(t, want)], "no listener for %s among %v", want, ls)
	}
	t.Logf("jaeger pid %d listeners: %v", j.PID, ls)
}

// TestListenersLoopbackOnly inspects the Jaeger in use: it must listen on 127.0.0.1 only.
func TestListenersLoopbackOnly(t *testing.T) {
	assertLoopbackOnly(t, FromEnv(t))
}
