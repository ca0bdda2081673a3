#!/bin/sh
# Re-makes docs/console.svg, the README's picture of the console: a real session against the lab
# under a private tmux server, captured with its colours and drawn by scripts/ansi-to-svg.py.
# Usage: scripts/console-screenshot.sh [BINARY] [OUTPUT]   (defaults: .build/debug/ipdirect, docs/console.svg)
set -eu

binary=${1:-.build/debug/ipdirect}
output=${2:-docs/console.svg}
width=110
height=32
here=$(cd "$(dirname "$0")" && pwd)
socket="ipdirect-screenshot-$$"
scratch=$(mktemp -d)
tmux_() { tmux -L "$socket" -f /dev/null "$@"; }
cleanup() {
    tmux_ kill-server 2>/dev/null || true
    rm -rf "$scratch"
}
trap cleanup EXIT INT TERM

[ -x "$binary" ] || { echo "console-screenshot: no $binary; build it first (swift build)" >&2; exit 1; }
command -v tmux >/dev/null || { echo "console-screenshot: tmux is not installed" >&2; exit 1; }

# An empty configuration and cache, so the picture shows the lab and nothing of this machine.
printf 'persist_cache = false\n' > "$scratch/config.toml"
tmux_ new-session -d -s shot -x "$width" -y "$height" \
    "cd '$scratch' && LANG=C.UTF-8 TERM=xterm-256color '$(cd "$(dirname "$binary")" && pwd)/$(basename "$binary")' --lab --config '$scratch/config.toml'"

# Waits (up to 60 s) until the pane shows $1.
wait_for() {
    tries=0
    until tmux_ capture-pane -p -t shot | grep -q -- "$1"; do
        tries=$((tries + 1))
        [ "$tries" -lt 600 ] || { echo "console-screenshot: never saw '$1'" >&2; exit 1; }
        sleep 0.1
    done
}

wait_for "Host or URL"
# The hijacked name: system DNS sends it to another site, HTTPDNS to the right one.
tmux_ send-keys -t shot p
tmux_ send-keys -t shot -l "hijacked.lab.test"
tmux_ send-keys -t shot Enter
wait_for "Verdict:"
sleep 1
mkdir -p "$(dirname "$output")"
tmux_ capture-pane -e -p -N -t shot | python3 "$here/ansi-to-svg.py" "$width" "$height" > "$output"
tmux_ send-keys -t shot q
echo "wrote $output"
