#!/usr/bin/env bash
# Turns `swift build`'s growing [N/M] counter into lines a person reads: what is being built (the
# dependencies, or ipdirect itself), about how far along, and for how long; the full log in a file.
#   swift build ... 2>&1 | scripts/build-progress.sh LOG
# The total is about: SwiftPM plans as it goes, so M grows; the last complete build's step count
# (kept beside the log) or a recorded estimate stands in until M passes it, for a build from
# nothing; over an earlier build SwiftPM plans the few steps first, and M is the total. On failure the errors
# and the log's end are shown, and the status is 1.
set -uo pipefail

log=${1:-.build/build.log}
mkdir -p "$(dirname "$log")"
: >"$log"
steps_file="$(dirname "$log")/build-steps"
# A debug build from nothing on this project took about 2,600 steps (Swift 6.3, SwiftNIO, BoringSSL).
estimate=$(cat "$steps_file" 2>/dev/null || echo 2600)
[[ "$estimate" =~ ^[0-9]+$ ]] || estimate=2600
# A build over an earlier one plans its few steps up front: its M is the total.
[ -e "$(dirname "$log")/debug/ipdirect" ] && estimate=0
# ipdirect's own modules are the folders of Sources/; every other module is a dependency.
own=" $(ls "$(dirname "$0")/../Sources" 2>/dev/null | tr '\n' ' ') "
start=$(date +%s)
last_print=0
last_phase=""
deps_seen=()
done_steps=0
total_seen=0
complete=false

commas() { echo "$1" | sed -E ':a; s/([0-9])([0-9]{3})($|,)/\1,\2\3/; ta'; }
elapsed() {
  local seconds=$(($(date +%s) - start))
  if [ $seconds -lt 60 ]; then echo "${seconds} s so far"; else echo "$((seconds / 60)) min so far"; fi
}
say() {
  local total=$estimate
  [ "$total_seen" -gt "$total" ] && total=$total_seen
  local percent=$((done_steps * 100 / (total > 0 ? total : 1)))
  [ $percent -gt 99 ] && percent=99
  echo "building: $1 — about ${percent}% ($(commas "$done_steps") of ~$(commas "$total") steps), $(elapsed)"
  last_print=$(date +%s)
}

while IFS= read -r line; do
  printf '%s\n' "$line" >>"$log"
  if [[ "$line" =~ ^\[([0-9]+)/([0-9]+)\]\ (Compiling|Emitting\ module|Linking|Write|Building|Planning)\ ?([A-Za-z0-9_-]*) ]]; then
    done_steps=${BASH_REMATCH[1]}
    total_seen=${BASH_REMATCH[2]}
    module=${BASH_REMATCH[4]}
    phase=""
    if [[ -n "$module" && "$own" == *" $module "* ]] || [[ "${BASH_REMATCH[3]}" == Linking ]]; then
      phase="ipdirect itself"
    elif [[ -n "$module" && "${BASH_REMATCH[3]}" == Compiling ]]; then
      if [[ " ${deps_seen[*]-} " != *" $module "* ]]; then deps_seen+=("$module"); fi
      first=$((${#deps_seen[@]} > 3 ? ${#deps_seen[@]} - 3 : 0))
      shown=("${deps_seen[@]:first}")
      phase="the dependencies ($(IFS=,; echo "${shown[*]}" | sed 's/,/, /g'), ...)"
    fi
    [ -z "$phase" ] && continue
    # A line when the work changes from dependencies to ipdirect, else every 20 seconds.
    if [[ "${phase%% (*}" != "${last_phase%% (*}" ]] || [ $(($(date +%s) - last_print)) -ge 20 ]; then
      say "$phase"
      last_phase=$phase
    fi
  elif [[ "$line" == *"Build complete!"* || "$line" == *"Build of product"*"complete!"* ]]; then
    complete=true
  fi
done

if $complete; then
  [ "$total_seen" -gt 0 ] && [ "$done_steps" -gt 1000 ] && echo "$total_seen" >"$steps_file"
  echo "built in $(elapsed | sed 's/ so far//') (the full log: $log)"
  exit 0
fi
echo "the build failed; its errors:" >&2
grep -E 'error:' "$log" | head -20 >&2
echo "the end of the log ($log has all of it):" >&2
tail -15 "$log" >&2
exit 1
