#!/usr/bin/env bash
# Checks that a release binary needs no Swift toolchain (ldd names no libswift* or Foundation
# library) and carries no ICU (the full Foundation's; issue 34: 38 MB of the binary), and says its
# size stripped and what it links, so `make release` reports them every time.
set -euo pipefail
binary=$1
if ldd "$binary" | grep -E 'libswift|libFoundation|libdispatch|libBlocksRuntime|lib_Foundation'; then
  echo "check-release: $binary still links the Swift runtime dynamically (above)" >&2
  exit 1
fi
# ICU's data table and the full Foundation's types come in only when a module of ours uses an API
# of `Foundation` beyond FoundationEssentials; name the objects that do.
if nm "$binary" | grep -E ' icudt[0-9]+_dat$' >/dev/null; then
  echo "check-release: $binary links ICU through the full Foundation; objects that use it:" >&2
  # (not the link's copies of them without unwind tables: scripts/drop-unwind-tables.py)
  for object in $(find "$(dirname "$binary")/" -path '*.build/*.o' -not -path '*/without-unwind-tables/*' 2>/dev/null); do
    if nm -u "$object" 2>/dev/null | grep -E '10Foundation|31FoundationInternationalization' >/dev/null; then
      echo "  $object" >&2
    fi
  done
  echo "check-release: use FoundationEssentials and FoundationGaps there instead (see Sources/FoundationGaps)" >&2
  exit 1
fi
stripped=$(mktemp)
trap 'rm -f "$stripped"' EXIT
strip -o "$stripped" "$binary"
echo "release binary: $binary, $(du -h "$binary" | cut -f1) with symbols, $(stat -c %s "$stripped") bytes stripped; links: $(ldd "$binary" | awk '{print $1}' | tr '\n' ' ')" >&2
