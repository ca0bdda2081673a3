#!/usr/bin/env bash
# Checks that a release binary needs no Swift toolchain (ldd names no libswift* or Foundation
# library) and says its size and what it links, so `make release` reports both every time.
set -euo pipefail
binary=$1
if ldd "$binary" | grep -E 'libswift|libFoundation|libdispatch|libBlocksRuntime|lib_Foundation'; then
  echo "check-release: $binary still links the Swift runtime dynamically (above)" >&2
  exit 1
fi
echo "release binary: $binary, $(du -h "$binary" | cut -f1) with symbols; links: $(ldd "$binary" | awk '{print $1}' | tr '\n' ' ')" >&2
