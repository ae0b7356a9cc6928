#!/usr/bin/env bash
# Prints the number of non-test Go lines of the repository (#13 "Done when"): every tracked .go file
# that is not a _test.go, outside testdata/, e2e/ and tools/, without generated files (a line
# "// Code generated ... DO NOT EDIT.", the marker of go.dev/s/generatedcode). With -v, per file.
set -euo pipefail
cd "$(dirname "$0")/.."
files=$(git ls-files -- '*.go' ':!:*_test.go' ':!:*testdata/*' ':!:e2e/*' ':!:tools/*' |
  xargs grep -L -E '^// Code generated .* DO NOT EDIT\.$' || true)
if [ "${1:-}" = "-v" ]; then
  echo "$files" | xargs wc -l | sort -n
else
  echo "$files" | xargs cat | wc -l
fi
