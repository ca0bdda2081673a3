#!/usr/bin/env bash
# Generates what ships beside the binary from the command definitions themselves, so it cannot
# drift from them: the man page (swift-argument-parser's generate-manual plugin) and completions.
# Usage: scripts/generate-docs.sh BINARY OUTDIR   (BINARY: any build of ipdirect; OUTDIR gets man/, completions/)
set -euo pipefail
binary=$1 out=$2
cd "$(dirname "$0")/.."

rm -rf "$out" && mkdir -p "$out/man" "$out/completions"

# The plugin builds the package's products in debug (the same build `make test` uses) and runs
# `ipdirect --experimental-dump-help` through its generate-manual tool. One page, ipdirect(1), with a
# section per command: its NAME is one word, which man-db's whatis reads (a page per command is
# named "ipdirect agent", which it cannot). The date is the last commit's, so the same source gives
# the same page. The plugin never empties its output folder: stale pages are removed first.
date=$(git log -1 --format=%cs 2>/dev/null || date -u +%F)
pages=.build/plugins/GenerateManual/outputs/ipdirect
rm -rf "$pages"
swift package plugin generate-manual --configuration debug --date "$date" --authors 'the ipdirect developers' >&2
ls "$pages"/ipdirect.1 >/dev/null
cp "$pages"/*.1 "$out/man/"
# generate-manual writes a paragraph break inside a command's discussion as an empty line, which
# mdoc warns about (groff -ww: "Empty input line"); .Pp is mdoc's paragraph break.
sed -i 's/^$/.Pp/' "$out"/man/*.1
# Each command's examples and the exit-status table, read from the binary's --help as printed.
scripts/man-sections.py "$binary" "$out/man/ipdirect.1"

# Completion scripts are sourced, never run: the bash one loses the #! line ArgumentParser gives it.
"$binary" --generate-completion-script bash | sed '1{/^#!/d}' >"$out/completions/ipdirect.bash"
"$binary" --generate-completion-script zsh >"$out/completions/_ipdirect"
"$binary" --generate-completion-script fish >"$out/completions/ipdirect.fish"
echo "generated the man page and 3 completion scripts in $out" >&2
