#!/usr/bin/env bash
# Prints the `swift test --filter` pattern of the suites that start the ipdirect binary (the files
# that name BuiltBinary.ipdirect, Tmux.binary or a console under tmux), for `make test-release`.
# Read from the tests themselves, so a new suite that runs the binary is run against the release
# one without a list to keep. PackagingTests is left to `make package-test`, which runs it.
set -euo pipefail
cd "$(dirname "$0")/.."
files=$(grep -rlE 'BuiltBinary\.ipdirect|Tmux\.binary|ipdirectBinary|EndToEndTests\.command|TmuxPane|TmuxTerminal' Tests \
  --include='*.swift' | grep -v -e '^Tests/TestSupport/' -e '^Tests/PackagingTests/' | sort)
patterns=()
for file in $files; do
  module=$(echo "$file" | cut -d/ -f2)
  # The file's top-level types whose names end in Tests: its suites (helpers such as Tmux are not).
  for suite in $(grep -oE '^(@Suite[^)]*\)? *)?(struct|final class|enum|actor) [A-Za-z0-9_]+Tests\b' "$file" | awk '{print $NF}'); do
    patterns+=("$module\\.$suite/")
  done
done
[ ${#patterns[@]} -gt 0 ] || { echo "binary-suites: no suite starts the binary (the pattern found none)" >&2; exit 1; }
(IFS='|'; echo "${patterns[*]}")
