#!/usr/bin/env bash
# Fleet bench (README "Operator guide"): the same small-call load through `gymtrace proxy` writing its
# capture directory itself (local), through one gateway Collector (1 gateway) and through three
# (3 gateways, rollouts spread by rendezvous routing), each measured by `gymtrace bench` beside the plain
# reverse proxy, then printed side by side: calls/s, added p50/p99 latency over direct calls, and the
# throughput ratios capture/plain and fleet/local. Gateways run config/gymtrace-otelcol-gateway.yaml
# (synchronous capture path) and write the bench's own capture directory, so bench's record check
# (every answered call has exactly one record) holds for the fleet runs too.
#
# Usage: scripts/bench-fleet.sh [--concurrency 32] [--duration 15s] [--rounds 2]
# Needs go and jq. Builds gymtrace and gymtrace-otelcol into a temporary directory. Set TMPDIR to the
# disk that will hold the captures (the header's fsync latency is measured there).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
concurrency=32 duration=15s rounds=2
while [[ $# -gt 0 ]]; do
  case $1 in
    --concurrency) concurrency=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    *) echo "bench-fleet.sh: unknown argument $1 (want --concurrency N, --duration D, --rounds N)" >&2; exit 2 ;;
  esac
done
command -v jq >/dev/null || { echo "bench-fleet.sh: needs jq" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/gymtrace-fleet-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
echo "building gymtrace and gymtrace-otelcol into $work" >&2
go build -C "$root" -o "$work/gymtrace" ./cmd/gymtrace
go build -C "$root/collectorext" -o "$work/gymtrace-otelcol" ./cmd/gymtrace-otelcol

# The capture command gymtrace bench runs (`EXE proxy --upstream U --capture-dir D --listen ...`):
# for N > 0 it starts N gateways writing D, then the proxy exporting to them, and on SIGTERM stops
# the proxy first (it drains its calls), then the gateways.
for n in 1 3; do
  cat >"$work/fleet-$n" <<SH
#!/usr/bin/env bash
set -uo pipefail
dir="" prev=""
for a in "\$@"; do [[ \$prev == --capture-dir ]] && dir=\$a; prev=\$a; done
free_port() { local p; while :; do p=\$((20000 + RANDOM % 12000)); (exec 3<>/dev/tcp/127.0.0.1/\$p) 2>/dev/null || { echo \$p; return; }; done; }
gws=() urls=()
for i in \$(seq 1 $n); do
  g=\$(free_port) h=\$(free_port)
  GYMTRACE_OTLP_GRPC_ENDPOINT=127.0.0.1:\$g GYMTRACE_OTLP_HTTP_ENDPOINT=127.0.0.1:\$h GYMTRACE_CAPTURE_DIR="\$dir" \
    GYMTRACE_JAEGER_OTLP_HTTP_ENDPOINT=http://127.0.0.1:1 "$work/gymtrace-otelcol" --config="$root/collectorext/config/gymtrace-otelcol-gateway.yaml" \
    >>"$work/gateways.log" 2>&1 &
  gws+=(\$!) urls+=("http://127.0.0.1:\$h")
done
for u in "\${urls[@]}"; do
  p=\${u##*:}
  for _ in \$(seq 1 300); do (exec 3<>/dev/tcp/127.0.0.1/\$p) 2>/dev/null && break; sleep 0.1; done
done
"$work/gymtrace" "\$@" --capture-via-otlp "\$(IFS=,; echo "\${urls[*]}")" &
proxy=\$!
trap 'kill -TERM \$proxy 2>/dev/null' TERM INT
rc=0
while kill -0 \$proxy 2>/dev/null; do wait \$proxy; rc=\$?; done
kill -TERM "\${gws[@]}" 2>/dev/null
wait "\${gws[@]}" 2>/dev/null
exit \$rc
SH
  chmod +x "$work/fleet-$n"
done

run() { # label exe: one gymtrace bench run, one JSON cell line
  "$work/gymtrace" bench --workload small --concurrency "$concurrency" --duration "$duration" --json --capture-exe "$2" \
    | jq -c --arg name "$1" '{name: $name, fsync_p50_ms: .fsync.p50_ms, cell: .cells[0]}'
}
results=()
for r in $(seq 1 "$rounds"); do
  echo "round $r of $rounds" >&2
  results+=("$(run local "$work/gymtrace")")
  results+=("$(run "1 gateway" "$work/fleet-1")")
  results+=("$(run "3 gateways" "$work/fleet-3")")
done
printf '%s\n' "${results[@]}" | jq -rs --arg c "$concurrency" '
  (map(select(.name == "local") | .cell.capture.calls_per_s) | add / length) as $local
  | "fleet bench: small calls, concurrency \($c), fsync p50 \(.[0].fsync_p50_ms * 1000 | round / 1000) ms, mean of \(length / 3) rounds",
    "target        capture calls/s  plain calls/s  capture/plain  vs local  added p50 ms  added p99 ms",
    (group_by(.name) | sort_by(.[0].name | if . == "local" then 0 elif . == "1 gateway" then 1 else 2 end)[]
     | (map(.cell.capture.calls_per_s) | add / length) as $cap
     | (map(.cell.plain.calls_per_s) | add / length) as $plain
     | "\(.[0].name | . + " " * (12 - length))  \($cap | round | tostring | " " * (15 - length) + .)  \($plain | round | tostring | " " * (13 - length) + .)  \($cap / $plain * 100 | round / 100 | tostring | " " * (13 - length) + .)  \($cap / $local * 100 | round / 100 | tostring | " " * (8 - length) + .)  \(map(.cell.added_latency_p50_ms) | add / length * 100 | round / 100 | tostring | " " * (12 - length) + .)  \(map(.cell.added_latency_p99_ms) | add / length * 100 | round / 100 | tostring | " " * (12 - length) + .)")'
