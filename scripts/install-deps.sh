#!/usr/bin/env bash
# Installs the system packages ipdirect builds and runs with (mode `run`) or also tests with (mode
# `test`), only those missing, and says which. Debian/Ubuntu (apt-get); uses sudo when not root.
#   scripts/install-deps.sh run|test [EXTRA-PACKAGE...]
#   scripts/install-deps.sh --list run|test   prints the packages the mode wants, installs nothing
set -euo pipefail

list=false
if [ "${1-}" = --list ]; then list=true; shift; fi
mode=${1-}
case "$mode" in
  run | test) shift ;;
  *) echo "usage: scripts/install-deps.sh [--list] run|test [EXTRA-PACKAGE...]" >&2; exit 2 ;;
esac

# What building and running needs: the C libraries ipdirect links and pkg-config to find them.
# Extra packages for one target come as arguments (`make bench` adds nginx-light).
wanted=(libcurl4-openssl-dev libssl-dev libc-ares-dev libcrypt-dev libncurses-dev pkg-config "$@")
if [ "$mode" = test ]; then
  # bind9-dnsutils gives the tests `dig`, which the reproduce commands of a chosen DNS server use;
  # prometheus is the server the agent's end-to-end test scrapes with; zsh and fish load the
  # completion scripts, man-db and groff-base render the man pages (PackagingTests).
  wanted+=(tmux python3-jsonschema bind9-dnsutils prometheus zsh fish man-db groff-base)
  # The namespace tests (Tests/DoctorTests/Namespaces) make real faults with real software: each
  # command beside the Debian package that has it, added when the command is missing (nginx may
  # come as nginx or nginx-light; either serves). tinyproxy-bin is the program without the service.
  for pair in ip:iproute2 ss:iproute2 nft:nftables unbound:unbound faketime:faketime mitmdump:mitmproxy \
    tinyproxy:tinyproxy-bin nginx:nginx-light tayga:tayga; do
    if $list || ! PATH="$PATH:/usr/sbin:/sbin" command -v "${pair%%:*}" >/dev/null; then wanted+=("${pair#*:}"); fi
  done
fi
if $list; then
  printf '%s\n' "${wanted[@]}" | awk '!seen[$0]++'
  [ "$mode" = test ] && echo "opentelemetry-proto (pip)"
  exit 0
fi
missing=()
for pkg in "${wanted[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done
# The HAR check only needs the Python module; a pip-installed jsonschema is as good.
if [[ " ${missing[*]-} " == *" python3-jsonschema "* ]] && python3 -c 'import jsonschema, referencing' 2>/dev/null; then
  missing=("${missing[@]/python3-jsonschema}")
fi
read -r -a missing <<<"${missing[*]-}"

if [ ${#missing[@]} -gt 0 ]; then
  if ! command -v apt-get >/dev/null; then
    echo "ipdirect needs: ${missing[*]} (no apt-get here: install them with your package manager)" >&2
    exit 1
  fi
  sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  echo "ipdirect: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -qq >&2
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

[ "$mode" = test ] || exit 0

# The OTLP export test decodes what the agent sends with the official protobuf classes (PyPI's
# opentelemetry-proto). Installed here, before the tests run, so no test waits on pip; without
# it that test says it is skipped.
if ! python3 -c 'import opentelemetry.proto.collector.trace.v1.trace_service_pb2' 2>/dev/null; then
  echo "ipdirect: installing opentelemetry-proto (pip) for the OTLP test" >&2
  python3 -m pip install --quiet opentelemetry-proto >&2 \
    || echo "ipdirect: could not install opentelemetry-proto; the OTLP test will be skipped" >&2
fi
