#!/usr/bin/env bash
# The release soak (issue 32): every command shape the README shows, run ROUNDS times on BINARY
# against the lab; a command that ends by a signal (a crash, not our timeout) fails the soak.
#
#   scripts/soak-release.sh BINARY [ROUNDS]      (`make soak-release`; .ci/run runs it)
#
# It runs in a network namespace of its own (loopback only) when `unshare -n` is allowed, else on
# the host's loopback. Crashes are named with the command, its status and the end of its output;
# statuses 1-3 are answers (a doctor finding a fault says so by its status) and do not fail it. A
# command that outlives its time limit is killed and fails the soak too: a hang is no better.
set -uo pipefail
binary=${1:?usage: soak-release.sh BINARY [ROUNDS]}
rounds=${2:-6}
binary=$(cd "$(dirname "$binary")" && pwd)/$(basename "$binary")
[ -x "$binary" ] || { echo "soak: $binary is not an executable" >&2; exit 2; }

if [ -z "${SOAK_NAMESPACE:-}" ] && unshare -n true 2>/dev/null; then
  exec env SOAK_NAMESPACE=1 unshare -n sh -c 'ip link set lo up && exec "$@"' sh "$0" "$binary" "$rounds"
fi
[ -n "${SOAK_NAMESPACE:-}" ] || echo "soak: unshare -n is not allowed here; running on the host's loopback" >&2

work=$(mktemp -d /tmp/ipdirect-soak.XXXXXX)
trap 'tmux -L "soak-$$" kill-server 2>/dev/null; rm -rf "$work"' EXIT
export XDG_CACHE_HOME=$work/cache XDG_CONFIG_HOME=$work/config LANG=C.UTF-8 LC_ALL=C.UTF-8
# A crash ends the process at once rather than after the backtracer (the status says which signal).
export SWIFT_BACKTRACE=enable=no
mkdir -p "$XDG_CACHE_HOME" "$XDG_CONFIG_HOME"

runs=0 failures=0
declare -A statuses=()

# Records one finished command: its status, and a failure when a signal ended it or it hung.
settle() { # settle LABEL STATUS LOG
  local label=$1 status=$2 log=$3
  runs=$((runs + 1))
  statuses[$status]=$((${statuses[$status]:-0} + 1))
  if [ "$status" = timeout ] || [ "$status" -ge 128 ] 2>/dev/null; then
    failures=$((failures + 1))
    local why="status $status (signal $((status - 128)): $(kill -l $((status - 128)) 2>/dev/null))"
    [ "$status" = timeout ] && why="did not finish in its time limit (killed by the soak)"
    echo "soak: FAILED: $label: $why; its last lines:" >&2
    tail -n 15 "$log" | sed 's/^/    /' >&2
  fi
}

# Records a step that did not do what it exists to do (so the soak would test less than it says).
unanswered() { # unanswered SENTENCE LOG
  failures=$((failures + 1))
  echo "soak: FAILED: $1; the last lines:" >&2
  tail -n 15 "$2" | sed 's/^/    /' >&2
}

# Runs one command with a time limit (timeout's own 124/137 are told apart from the command's signals).
check() { # check SECONDS LABEL COMMAND...
  local limit=$1 label=$2 status
  shift 2
  timeout -k 5 "$limit" "$@" >"$work/out" 2>&1
  status=$?
  if [ $status = 124 ] || [ $status = 137 ]; then status=timeout; fi
  settle "$label" "$status" "$work/out"
}

names=(plain.lab.test dual.lab.test single.lab.test sni-a.lab.test hijacked.lab.test)
providers=(alicloud alicloud-legacy tencent doh doh-json system)

# The agent: /metrics and /probe scraped by curl while it probes every lab name each second.
agent_round() { # agent_round ROUND
  local port=$((19400 + $1)) log=$work/agent.log status pid tries=0
  "$binary" agent --lab --interval 1 --metrics-listen "127.0.0.1:$port" >"$log" 2>&1 &
  pid=$!
  # Ready once a first round is counted (before it, /metrics has no rounds to show).
  until grep -q '^ipdirect_rounds_total [1-9]' <<<"$(curl -sf "http://127.0.0.1:$port/metrics" 2>/dev/null)"; do
    tries=$((tries + 1))
    if [ $tries -gt 150 ] || ! kill -0 $pid 2>/dev/null; then break; fi
    sleep 0.2
  done
  local scraped=0
  # Each answer is read whole before it is searched (grep -q stopping early would fail curl's write).
  scrape() { # scrape PATH LINE: counts the scrape when the answer has a line starting with LINE
    local body
    body=$(curl -s -m 30 "http://127.0.0.1:$port$1")
    grep -q "^$2" <<<"$body" && scraped=$((scraped + 1))
  }
  for _ in 1 2 3; do
    scrape /metrics ipdirect_rounds_total
    scrape "/probe?target=https://sni-a.lab.test/" probe_success
    scrape "/probe?target=https://hijacked.lab.test/&provider=lab-doh" probe_success
    sleep 1
  done
  # A soak that never reached the agent would pass without testing it.
  [ $scraped = 9 ] || unanswered "agent: $((9 - scraped)) of 9 scrapes of /metrics and /probe got no metrics" "$log"
  kill -TERM $pid 2>/dev/null
  for _ in $(seq 100); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
  if kill -0 $pid 2>/dev/null; then
    kill -KILL $pid 2>/dev/null; wait $pid 2>/dev/null; status=timeout
  else
    wait $pid; status=$?
    # SIGTERM is how an agent is stopped: 143 (or 0, exporters flushed) is its answer, not a crash.
    [ $status = 143 ] && status=0
  fi
  settle "agent --lab --metrics-listen (/metrics and /probe scraped)" "$status" "$log"
}

# The console under tmux: the first screen, help, a probe of one name, then q.
console_round() {
  local socket=soak-$$ done=$work/console.status log=$work/console.log waited=0
  rm -f "$done"
  tmux -L "$socket" -f /dev/null new-session -d -x 120 -y 40 \
    "cd '$work' && '$binary' --lab 2>'$log'; echo \$? >'$done'"
  pane() { tmux -L "$socket" capture-pane -p 2>/dev/null; }
  wait_for() { # wait_for TEXT: up to 30 s
    for _ in $(seq 150); do grep -q "$1" <<<"$(pane)" && return 0; [ -e "$done" ] && return 1; sleep 0.2; done
    return 1
  }
  wait_for "Host or URL" || unanswered "console: the first screen (Host or URL) did not come" <(pane)
  tmux -L "$socket" send-keys "?"; wait_for "While typing"; tmux -L "$socket" send-keys Escape
  tmux -L "$socket" send-keys p; tmux -L "$socket" send-keys -l sni-a.lab.test; tmux -L "$socket" send-keys Enter
  wait_for "Verdict:" || unanswered "console: no verdict for sni-a.lab.test on the screen" <(pane)
  tmux -L "$socket" send-keys q
  while [ ! -e "$done" ] && [ $waited -lt 150 ]; do sleep 0.2; waited=$((waited + 1)); done
  if [ -e "$done" ]; then settle "console --lab under tmux (?, Esc, p sni-a.lab.test Enter, q)" "$(cat "$done")" "$log"
  else pane >"$log"; settle "console --lab under tmux (?, Esc, p sni-a.lab.test Enter, q)" timeout "$log"; fi
  tmux -L "$socket" kill-server 2>/dev/null
}

started=$SECONDS
for round in $(seq "$rounds"); do
  check 60 "probe --lab https://hijacked.lab.test/" "$binary" probe --lab https://hijacked.lab.test/
  check 60 "probe --lab --format jsonl (three URLs)" "$binary" probe --lab --format jsonl \
    https://sni-a.lab.test/ https://hijacked.lab.test/ http://plain.lab.test/
  for provider in "${providers[@]}"; do
    check 60 "resolve ${names[*]} --lab --provider $provider" "$binary" resolve "${names[@]}" --lab --provider "$provider"
    check 60 "resolve plain.lab.test dual.lab.test --lab --provider $provider --format json" \
      "$binary" resolve plain.lab.test dual.lab.test --lab --provider "$provider" --format json
  done
  check 60 "resolve --lab --all-providers (compare) ${names[*]}" "$binary" resolve --lab --all-providers "${names[@]}"
  check 30 "cache list" "$binary" cache list
  check 30 "cache path" "$binary" cache path
  check 30 "cache clear" "$binary" cache clear
  check 90 "doctor --lab" "$binary" doctor --lab
  check 90 "doctor --lab --fault clock-skew,service-blocked" "$binary" doctor --lab --fault clock-skew,service-blocked
  check 90 "doctor --lab --fault nat64 --host sni-a.lab.test --format json" \
    "$binary" doctor --lab --fault nat64 --host sni-a.lab.test --format json
  check 30 "audit --for 2 --format json (nothing exercised)" "$binary" audit --for 2 --format json
  agent_round "$round"
  command -v tmux >/dev/null && console_round
  echo "soak: round $round of $rounds done, $runs commands, $failures by a signal or a hang ($((SECONDS - started)) s)" >&2
done

summary=$(for status in "${!statuses[@]}"; do echo -n "$status: ${statuses[$status]}, "; done)
echo "soak: $runs commands in $((SECONDS - started)) s on $binary; exit statuses ${summary%, }" >&2
if [ $failures -gt 0 ]; then
  echo "soak: $failures of $runs commands ended by a signal or hung (above)" >&2
  exit 1
fi
