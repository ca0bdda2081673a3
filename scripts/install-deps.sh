#!/usr/bin/env bash
# Installs the system packages ipdirect builds and tests with, only those missing, and says
# which. Debian/Ubuntu (apt-get); uses sudo when not root.
set -euo pipefail

# Extra packages for one target come as arguments (`make bench` adds nginx-light). bind9-dnsutils
# gives the tests `dig`, which the reproduce commands of a chosen DNS server use; prometheus is
# the server the agent's end-to-end test scrapes with.
wanted=(libcurl4-openssl-dev libssl-dev libc-ares-dev libncurses-dev pkg-config tmux python3-jsonschema bind9-dnsutils prometheus "$@")
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
[ ${#missing[@]} -eq 0 ] && exit 0

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
