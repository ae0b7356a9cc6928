#!/usr/bin/env bash
# Checks that the committed mdatagen output of the collectorext module is what a fresh run gives:
# runs `go generate ./gymcaptureexporter/...` in collectorext (mdatagen from tools/mdatagen, see its
# README) and fails if that changed, added or removed a file under collectorext/ or tools/mdatagen/.
# Needs only the Go module proxy, and only while the module cache lacks mdatagen's modules; once
# the build cache holds the tool, a run takes about a second.
set -euo pipefail
cd "$(dirname "$0")/.."
paths=(collectorext tools/mdatagen)

# state prints one line per file under paths that differs from HEAD (status and content digest), so
# that a developer's uncommitted edits do not fail the check, only what go generate changes.
state() {
  git status --porcelain=v1 -z --no-renames --untracked-files=all -- "${paths[@]}" |
    while IFS= read -r -d '' entry; do
      if [ -f "${entry:3}" ]; then
        printf '%s %s\n' "$(sha256sum <"${entry:3}" | cut -d' ' -f1)" "$entry"
      else
        printf 'absent %s\n' "$entry"
      fi
    done
}

before=$(state)
(cd collectorext && go generate ./gymcaptureexporter/...)
after=$(state)
if [ "$after" != "$before" ]; then
  echo "go generate changed these files (digest, git status; < before, > after): commit the regenerated files, or fix metadata.yaml" >&2
  diff <(echo "$before") <(echo "$after") >&2 || true
  exit 1
fi
echo "collectorext generated files up to date"
