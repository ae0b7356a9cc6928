#!/usr/bin/env bash
# Checks that testdata/vectors and testdata/conformance exist, and, when ../shared is present beside the
# repository, that they equal its vectors/ and conformance/ (refresh with scripts/sync-testdata.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
for d in vectors conformance; do
  if [ ! -d "testdata/$d" ]; then
    echo "testdata/$d is missing: run scripts/sync-testdata.sh" >&2
    exit 1
  fi
  if [ -d "../shared/$d" ] && ! diff -rq "../shared/$d" "testdata/$d" >/dev/null; then
    echo "testdata/$d differs from ../shared/$d: run scripts/sync-testdata.sh and commit" >&2
    diff -rq "../shared/$d" "testdata/$d" >&2 || true
    exit 1
  fi
done
echo "testdata in sync"
