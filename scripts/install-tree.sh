#!/usr/bin/env bash
# Lays out (or removes) an installed ipdirect under DESTDIR/PREFIX: the binary, the man page,
# completions for bash, zsh and fish, and the examples. `make install`, `make uninstall` and
# `make deb` (PREFIX=/usr) all go through here, so the three agree on where each file lives.
# Usage: scripts/install-tree.sh install DESTDIR PREFIX BINARY DOCS
#        scripts/install-tree.sh uninstall DESTDIR PREFIX
set -euo pipefail
action=$1 destdir=$2 prefix=$3
root="$destdir$prefix"
cd "$(dirname "$0")/.."

bin="$root/bin/ipdirect"
man="$root/share/man/man1"
bash_completion="$root/share/bash-completion/completions/ipdirect"
# Debian's zsh reads vendor-completions for packages; site-functions is zsh's own for /usr/local.
if [ "$prefix" = /usr ]; then zsh_completion="$root/share/zsh/vendor-completions/_ipdirect"
else zsh_completion="$root/share/zsh/site-functions/_ipdirect"; fi
fish_completion="$root/share/fish/vendor_completions.d/ipdirect.fish"
doc="$root/share/doc/ipdirect"

case $action in
install)
  binary=$4 docs=$5
  install -D -m 0755 "$binary" "$bin"
  install -D -m 0644 "$docs/man/ipdirect.1" "$man/ipdirect.1"
  install -D -m 0644 "$docs/completions/ipdirect.bash" "$bash_completion"
  install -D -m 0644 "$docs/completions/_ipdirect" "$zsh_completion"
  install -D -m 0644 "$docs/completions/ipdirect.fish" "$fish_completion"
  install -D -m 0644 Resources/default-config.toml "$doc/examples/config.toml"
  install -m 0644 packaging/targets.txt packaging/agent.env "$doc/examples/"
  # Prometheus scrape configuration (/probe, multi-target), alert rules and the Grafana dashboard.
  install -D -m 0644 -t "$doc/examples/prometheus" packaging/prometheus/prometheus.yml \
    packaging/prometheus/ipdirect-rules.yml packaging/prometheus/grafana-dashboard.json
  # The example unit runs the binary where this install put it.
  sed "s|/usr/bin/ipdirect|$prefix/bin/ipdirect|" packaging/ipdirect-agent.service >"$doc/examples/ipdirect-agent.service"
  chmod 0644 "$doc/examples/ipdirect-agent.service"
  echo "installed ipdirect under $root (binary, man page, completions, examples in $doc/examples)" >&2
  ;;
uninstall)
  rm -f "$bin" "$man"/ipdirect.1 "$bash_completion" "$zsh_completion" "$fish_completion"
  rm -rf "$doc"
  echo "removed ipdirect from $root" >&2
  ;;
*)
  echo "usage: $0 install|uninstall DESTDIR PREFIX [BINARY DOCS]" >&2
  exit 2
  ;;
esac
