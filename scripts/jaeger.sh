#!/usr/bin/env bash
# Builds, starts and stops the real Jaeger (v1.76.0, the v2 OpenTelemetry-Collector-based binary) for
# gymtrace's tests and CI. Every port Jaeger opens is bound to 127.0.0.1 by an explicit config.
#
# Usage:
#   scripts/jaeger.sh build   prints the path of the jaeger binary; builds it from tools/jaeger when the
#                             cache has none for the current tools/jaeger/go.mod + go.sum + Go version
#   scripts/jaeger.sh start   builds if needed, writes the config, starts Jaeger in the background, waits
#                             until the query API answers, checks that it listens on 127.0.0.1 only and
#                             prints KEY=VALUE lines (also written to $JAEGER_STATE_DIR/env):
#                               JAEGER_QUERY_URL JAEGER_QUERY_GRPC JAEGER_OTLP_HTTP JAEGER_OTLP_GRPC
#                               JAEGER_HEALTH_URL JAEGER_PID JAEGER_STATE_DIR JAEGER_LOG
#   scripts/jaeger.sh stop    stops the Jaeger whose pid file is in $JAEGER_STATE_DIR
#   scripts/jaeger.sh listeners [PID]
#                             prints the TCP/UDP sockets PID (default: the started one) listens on and
#                             fails when one is not bound to 127.0.0.1
#
# Environment (all optional):
#   GYMTRACE_CACHE_DIR      build cache root (default $HOME/.cache/gymtrace); binaries go to
#                           $GYMTRACE_CACHE_DIR/jaeger/<key>/jaeger, key = sha256(go.mod, go.sum, go version)
#   JAEGER_STATE_DIR        config, log, pid and env files (default ${TMPDIR:-/tmp}/gymtrace-jaeger)
#   JAEGER_OTLP_GRPC_PORT   OTLP/gRPC receiver port        } each defaults to a free port chosen here
#   JAEGER_OTLP_HTTP_PORT   OTLP/HTTP receiver port        } (20000-32767, below the ephemeral range);
#   JAEGER_QUERY_HTTP_PORT  query API + UI port            } set them to e.g. 4317 4318 16686 16685 13133
#   JAEGER_QUERY_GRPC_PORT  query gRPC API port            } for the usual ones
#   JAEGER_HEALTH_PORT      healthcheckv2 HTTP port        }
#   JAEGER_START_TIMEOUT    seconds to wait for the query API (default 60)
#   JAEGER_LOG_LEVEL        collector log level (default info)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
tooldir="$root/tools/jaeger"
cache_root="${GYMTRACE_CACHE_DIR:-$HOME/.cache/gymtrace}"
state_dir="${JAEGER_STATE_DIR:-${TMPDIR:-/tmp}/gymtrace-jaeger}"

log() { echo "jaeger.sh: $*" >&2; }
die() { log "$*"; exit 1; }

# cache_key hashes everything that decides the binary: the tool module's go.mod and go.sum and the Go
# toolchain that compiles it.
cache_key() {
	{ cat "$tooldir/go.mod" "$tooldir/go.sum"; go version; } | sha256sum | cut -c1-16
}

cmd_build() {
	command -v go >/dev/null || die "go not found in PATH"
	local dir bin
	dir="$cache_root/jaeger/$(cache_key)"
	bin="$dir/jaeger"
	mkdir -p "$dir"
	# One build at a time per key: parallel test packages may all ask for the binary.
	exec 9>"$dir/.lock"
	flock 9
	if [ ! -x "$bin" ]; then
		local version start
		version=$(cd "$tooldir" && GOWORK=off GOFLAGS= go list -mod=readonly -m -f '{{.Version}}' github.com/jaegertracing/jaeger)
		log "building jaeger $version into $bin (cold builds take several minutes)"
		start=$(date +%s)
		(cd "$tooldir" && GOWORK=off GOFLAGS= go build -mod=readonly -trimpath -buildvcs=false \
			-ldflags "-s -w -X github.com/jaegertracing/jaeger/internal/version.latestVersion=$version" \
			-o "$bin.tmp" github.com/jaegertracing/jaeger/cmd/jaeger)
		mv -f "$bin.tmp" "$bin"
		log "built in $(($(date +%s) - start))s"
	fi
	exec 9>&-
	echo "$bin"
}

# listening_ports prints the local ports of every listening TCP socket on the machine.
listening_ports() {
	if command -v ss >/dev/null; then
		ss -Hltn | awk '{n = split($4, a, ":"); print a[n]}'
	else
		local f sl local rem st rest
		for f in /proc/net/tcp /proc/net/tcp6; do
			while read -r sl local rem st rest; do
				[ "$st" = 0A ] && echo $((16#${local##*:}))
			done < <(tail -n +2 "$f")
		done
	fi
}

# pick_ports sets the unset *_PORT variables to distinct ports nobody listens on.
pick_ports() {
	local used chosen="" var p
	used=" $(listening_ports | tr '\n' ' ') "
	for var in JAEGER_OTLP_GRPC_PORT JAEGER_OTLP_HTTP_PORT JAEGER_QUERY_HTTP_PORT JAEGER_QUERY_GRPC_PORT JAEGER_HEALTH_PORT; do
		if [ -n "${!var:-}" ]; then
			case "$used" in *" ${!var} "*) die "start: $var=${!var}: port already in use" ;; esac
			chosen="$chosen ${!var} "
			continue
		fi
		while :; do
			p=$((20000 + RANDOM % 12768))
			case "$used$chosen" in *" $p "*) continue ;; esac
			break
		done
		printf -v "$var" '%s' "$p"
		chosen="$chosen $p "
	done
}

write_config() {
	cat >"$state_dir/config.yaml" <<EOF
# Written by scripts/jaeger.sh: in-memory Jaeger with every listener on 127.0.0.1.
service:
  extensions: [jaeger_storage, jaeger_query, healthcheckv2]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [jaeger_storage_exporter]
  telemetry:
    resource:
      service.name: jaeger
    metrics:
      # No self-metrics: no Prometheus endpoint is opened (the default would be :8888).
      level: none
    logs:
      level: ${JAEGER_LOG_LEVEL:-info}

extensions:
  jaeger_storage:
    backends:
      memstore:
        memory:
          max_traces: 100000
  jaeger_query:
    # Jaeger v2 turns query self-tracing on by default and exports it over OTLP to 127.0.0.1:4317,
    # which is some other test's collector or nothing (then shutdown waits 10s on the export).
    enable_tracing: false
    storage:
      traces: memstore
    http:
      endpoint: 127.0.0.1:$JAEGER_QUERY_HTTP_PORT
    grpc:
      endpoint: 127.0.0.1:$JAEGER_QUERY_GRPC_PORT
  healthcheckv2:
    use_v2: true
    http:
      endpoint: 127.0.0.1:$JAEGER_HEALTH_PORT

receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:$JAEGER_OTLP_GRPC_PORT
      http:
        endpoint: 127.0.0.1:$JAEGER_OTLP_HTTP_PORT

processors:
  batch:
    # Spans reach storage within 100ms so tests do not wait on the default 200ms timer.
    timeout: 100ms

exporters:
  jaeger_storage_exporter:
    trace_storage: memstore
EOF
}

# http_ok succeeds when GET $1 answers 200.
http_ok() {
	curl -fsS -o /dev/null --max-time 2 "$1" 2>/dev/null
}

# pid_alive succeeds while process $1 runs. A zombie counts as ended: once start's shell has exited,
# Jaeger's parent is init, which may take a second or two to reap it.
pid_alive() {
	local stat
	[ -n "$1" ] && stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	stat=${stat##*) }
	[ "${stat%% *}" != Z ]
}

# our_pid prints the pid from the pid file when that process still runs our config.
our_pid() {
	local pid
	[ -f "$state_dir/jaeger.pid" ] || return 0
	pid=$(cat "$state_dir/jaeger.pid")
	if pid_alive "$pid" && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$state_dir/config.yaml"; then
		echo "$pid"
	fi
}

# hex_ip turns /proc/net's address (32-bit words in little-endian order) into dotted IPv4 or, for
# IPv6, 32 hex digits in network order ("[::]" and "[::1]" spelled out).
hex_ip() {
	local h=$1 out="" i w
	if [ ${#h} = 8 ]; then
		echo "$((16#${h:6:2})).$((16#${h:4:2})).$((16#${h:2:2})).$((16#${h:0:2}))"
		return
	fi
	for i in 0 8 16 24; do
		w=${h:i:8}
		out="$out${w:6:2}${w:4:2}${w:2:2}${w:0:2}"
	done
	case "$out" in
	00000000000000000000000000000000) echo "[::]" ;;
	00000000000000000000000000000001) echo "[::1]" ;;
	00000000000000000000FFFF*) echo "[::ffff:$((16#${out:24:2})).$((16#${out:26:2})).$((16#${out:28:2})).$((16#${out:30:2}))]" ;;
	*) echo "[$out]" ;;
	esac
}

# cmd_listeners prints the sockets PID listens on (TCP in LISTEN state and every bound UDP socket,
# from /proc). It fails when there is none or when one is not bound to 127.0.0.1.
cmd_listeners() {
	local pid="${1:-$(our_pid)}" fd link proto f sl local rem st rest inode n=0 bad=0 addr
	[ -n "$pid" ] || die "listeners: no running jaeger (no pid file in $state_dir)"
	declare -A want=()
	for fd in /proc/"$pid"/fd/*; do
		link=$(readlink "$fd" 2>/dev/null) || continue
		case "$link" in socket:\[*\]) want[${link//[^0-9]/}]=1 ;; esac
	done
	for proto in tcp tcp6 udp udp6; do
		f=/proc/"$pid"/net/$proto
		[ -r "$f" ] || continue
		# Fields: sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode ...
		while read -r sl local rem st _ _ _ _ _ inode rest; do
			[ -n "${want[$inode]:-}" ] || continue
			case "$proto" in tcp*) [ "$st" = 0A ] || continue ;; esac
			addr=$(hex_ip "${local%%:*}")
			echo "$proto $addr:$((16#${local##*:}))"
			n=$((n + 1))
			[ "$addr" = 127.0.0.1 ] || bad=1
		done < <(tail -n +2 "$f")
	done
	[ "$n" -gt 0 ] || die "listeners: pid $pid has no listening socket"
	[ "$bad" = 0 ] || die "listeners: pid $pid listens beyond 127.0.0.1 (see above)"
}

# ready succeeds when Jaeger $1 runs and both its query API and its health check answer.
ready() {
	pid_alive "$1" &&
		http_ok "http://127.0.0.1:$JAEGER_QUERY_HTTP_PORT/api/services" &&
		http_ok "http://127.0.0.1:$JAEGER_HEALTH_PORT/status"
}

# kill_started ends the Jaeger this script started and forgets it.
kill_started() {
	kill -KILL "$1" 2>/dev/null || true
	rm -f "$state_dir/jaeger.pid"
}

cmd_start() {
	local bin pid="" ports_given=0 attempt start_ms deadline socks port
	mkdir -p "$state_dir"
	if [ -n "$(our_pid)" ]; then
		die "start: a jaeger already runs from $state_dir (pid $(our_pid)); stop it first"
	fi
	bin=$(cmd_build)
	[ -n "${JAEGER_OTLP_GRPC_PORT:-}${JAEGER_OTLP_HTTP_PORT:-}${JAEGER_QUERY_HTTP_PORT:-}${JAEGER_QUERY_GRPC_PORT:-}${JAEGER_HEALTH_PORT:-}" ] && ports_given=1
	for attempt in 1 2 3; do
		pick_ports
		write_config
		start_ms=$(date +%s%3N)
		setsid "$bin" --config "$state_dir/config.yaml" >"$state_dir/jaeger.log" 2>&1 </dev/null &
		pid=$!
		echo "$pid" >"$state_dir/jaeger.pid"
		deadline=$(($(date +%s) + ${JAEGER_START_TIMEOUT:-60}))
		until ready "$pid"; do
			pid_alive "$pid" && [ "$(date +%s)" -lt "$deadline" ] || break
			sleep 0.1
		done
		ready "$pid" && break
		log "start attempt $attempt failed; last log lines:"
		tail -n 20 "$state_dir/jaeger.log" >&2 || true
		kill_started "$pid"
		pid=""
		# Only ports chosen here can have been taken meanwhile; retry with fresh ones.
		[ "$ports_given" = 0 ] || break
		unset JAEGER_OTLP_GRPC_PORT JAEGER_OTLP_HTTP_PORT JAEGER_QUERY_HTTP_PORT JAEGER_QUERY_GRPC_PORT JAEGER_HEALTH_PORT
	done
	[ -n "$pid" ] || die "start: jaeger did not become ready (log: $state_dir/jaeger.log)"
	log "ready in $(($(date +%s%3N) - start_ms))ms (pid $pid)"
	# The answers above must come from this process, on 127.0.0.1 only, and from no other socket.
	if ! socks=$(cmd_listeners "$pid"); then
		kill_started "$pid"
		die "start: killed jaeger: it listened beyond 127.0.0.1"
	fi
	echo "$socks" >&2
	for port in "$JAEGER_OTLP_GRPC_PORT" "$JAEGER_OTLP_HTTP_PORT" "$JAEGER_QUERY_HTTP_PORT" "$JAEGER_QUERY_GRPC_PORT" "$JAEGER_HEALTH_PORT"; do
		if ! grep -qx "tcp 127.0.0.1:$port" <<<"$socks"; then
			kill_started "$pid"
			die "start: killed jaeger: it does not listen on 127.0.0.1:$port (another process answered there?)"
		fi
	done
	cat >"$state_dir/env" <<EOF
JAEGER_QUERY_URL=http://127.0.0.1:$JAEGER_QUERY_HTTP_PORT
JAEGER_QUERY_GRPC=127.0.0.1:$JAEGER_QUERY_GRPC_PORT
JAEGER_OTLP_HTTP=http://127.0.0.1:$JAEGER_OTLP_HTTP_PORT
JAEGER_OTLP_GRPC=127.0.0.1:$JAEGER_OTLP_GRPC_PORT
JAEGER_HEALTH_URL=http://127.0.0.1:$JAEGER_HEALTH_PORT/status
JAEGER_PID=$pid
JAEGER_STATE_DIR=$state_dir
JAEGER_LOG=$state_dir/jaeger.log
EOF
	cat "$state_dir/env"
}

cmd_stop() {
	local pid i
	pid=$(our_pid)
	if [ -z "$pid" ]; then
		rm -f "$state_dir/jaeger.pid"
		log "stop: no running jaeger in $state_dir"
		return 0
	fi
	kill -TERM "$pid" 2>/dev/null || true
	for i in $(seq 1 100); do
		pid_alive "$pid" || break
		sleep 0.1
	done
	if pid_alive "$pid"; then
		log "stop: pid $pid ignored SIGTERM for 10s; killing"
		kill -KILL "$pid" 2>/dev/null || true
	fi
	rm -f "$state_dir/jaeger.pid"
	log "stopped pid $pid"
}

case "${1:-}" in
build) cmd_build ;;
start) cmd_start ;;
stop) cmd_stop ;;
listeners) cmd_listeners "${2:-}" ;;
*) die "usage: $0 build|start|stop|listeners [PID]" ;;
esac
