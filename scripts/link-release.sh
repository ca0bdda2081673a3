#!/usr/bin/env bash
# The release binary's linker (Package.swift's releaseLinkFlags: clang runs this as its --ld-path):
# lld, with the static FoundationEssentials searched before any other library, on inputs without
# their unwind tables.
#
# Why FoundationEssentials first: TOMLKit imports the full Foundation, so the libraries autolinked
# into the binary name libFoundation.a before libFoundationEssentials.a. Both define one symbol (a
# Dictionary specialization FoundationEssentials' file reading needs), and lld takes a symbol from
# the first archive that offers it, so that one symbol pulled in Foundation, CoreFoundation and
# ICU's data: 43 of the binary's 75 MB, though no code in it calls them (issue 34). Named first
# (lld reads every -L before any library, and clang passes the rest in a response file),
# FoundationEssentials supplies it itself. Code that really uses the full Foundation still links
# it, and scripts/check-release.sh names the objects that do.
#
# Why no unwind tables (4.8 MB), and the one module that keeps them: scripts/drop-unwind-tables.py.
#
# The code laid out in scripts/text-order.txt's order, names it does not find ignored (a list
# older than the code costs pages, never a failed link): scripts/text-order.py says why and how it
# is made. IPDIRECT_TEXT_ORDER names another list; set empty, the link has no order (to measure).
set -euo pipefail
# lld beside the clang that runs this (the Swift toolchain's), and that toolchain's llvm-objcopy.
bin=$(dirname "$(readlink -f "/proc/$PPID/exe")")
if [ ! -x "$bin/ld.lld" ] || [ ! -x "$bin/llvm-objcopy" ]; then
  echo "link-release: expected the clang of a Swift toolchain, with ld.lld and llvm-objcopy beside it" >&2
  exit 1
fi
response=$("$(dirname "$0")/drop-unwind-tables.py" "$(dirname "$bin")" "$@")
order=${IPDIRECT_TEXT_ORDER-$(dirname "$0")/text-order.txt}
ordering=()
if [ -n "$order" ]; then
  ordering=("--symbol-ordering-file=$order" --no-warn-symbol-ordering)
fi
exec "$bin/ld.lld" -lFoundationEssentials "${ordering[@]}" "@$response"
