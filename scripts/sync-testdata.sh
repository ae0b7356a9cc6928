#!/usr/bin/env bash
# Refreshes testdata/vectors and testdata/conformance from ../shared (the project's shared folder).
set -euo pipefail
cd "$(dirname "$0")/.."
for d in vectors conformance; do
  rm -rf "testdata/$d"
  cp -r "../shared/$d" "testdata/$d"
  chmod -R u+w "testdata/$d"
done
echo "testdata refreshed from ../shared"
