#!/usr/bin/env bash
# Runs every test of the project: the root module (unit, vectors, conformance through the real binary,
# fuzz seed corpora, race detector) and the e2e module (official openai-go and anthropic-sdk-go clients
# against the real gymtrace binary) and the collectorext module (Collector exporter, distribution). Network:
# 127.0.0.1 only.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/check-testdata.sh

echo "== go vet (root module)"
go vet ./...

echo "== go test -race (root module)"
go test -race -count=1 -timeout 25m ./... 2>&1 | tee /tmp/gymtrace-root-test.log

echo "== go test without -race (root module: peak RSS of the real proxy under decompression bombs and a 1 GB stream, SPEC §0 D15; the race detector's shadow memory would distort RSS)"
go test -count=1 -timeout 10m -run '^TestProxyCmdBoundedUnderAttack$' -v ./cmd/gymtrace/ 2>&1 | grep -v '^=== ' | tee -a /tmp/gymtrace-root-test.log
go test -count=1 -timeout 10m -run '^TestReadHoldsAnyLineAtMostTwice$' -v ./capture/ 2>&1 | grep -v '^=== ' | tee -a /tmp/gymtrace-root-test.log

echo "== go test (e2e module)"
(cd e2e && go vet ./... && go test -count=1 -timeout 25m ./... 2>&1) | tee /tmp/gymtrace-e2e-test.log

echo "== go generate (collectorext module: mdatagen output is committed and current)"
scripts/check-generated.sh

echo "== go test (collectorext module: gymcapture exporter with -race, the gymtrace-otelcol distribution and its e2e)"
(cd collectorext && go vet ./... && go test -race -count=1 -timeout 25m ./gymcaptureexporter/... 2>&1 && go test -count=1 -timeout 25m ./cmd/... 2>&1) | tee /tmp/gymtrace-collectorext-test.log

echo "== go test (examples/agent module: the example agent with openai-go and agentobs)"
(cd examples/agent && go vet ./... && go test -race -count=1 ./... 2>&1) | tee /tmp/gymtrace-examples-test.log
