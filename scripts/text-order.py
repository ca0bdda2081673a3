#!/usr/bin/env python3
# The order of the release binary's code (scripts/text-order.txt, which scripts/link-release.sh
# gives lld as --symbol-ordering-file): every function a run of ipdirect enters, found by running it.
#
# Why (issue 34): the agent's `/probe` peak RSS was 1.2x blackbox_exporter's, and 13 MB of its 30 MB
# at rest was ipdirect's own code. The kernel maps a file's pages 64 KB around each page fault, and
# the code a run enters once (start-up, type metadata, first calls) was spread over nearly every
# 64 KB window of the 21 MB text (pagemap: 4,311 of 5,378 pages mapped). Round 14 ordered the
# functions perf sampled and gained nothing: samples miss the code run once, and most modules had
# all their functions in one .text section, which lld moves whole. So this list holds every function
# entered (callgrind counts each instruction, so nothing run is missed), and the release build
# compiles every module, dependencies too, with a section per function (the Makefile's
# RELEASE_FLAGS). The static Swift runtime's C++ has them already; its Swift code (Swift.o's 1.6 MB,
# _Concurrency.o's 250 KB) is one section each and stays where it is.
#
# The list: the agent's functions first, hottest first (it serves `/probe` and `/metrics`; the
# aim is its resident memory), then those the other commands enter (`probe --lab`, the console's
# first screen, `--help`, `--version`) that the agent did not. Names are the mangled symbols lld
# matches, local ones included. A stale list fails soft: lld ignores names it does not find
# (--no-warn-symbol-ordering), and code added since is laid out after the listed code in lld's
# usual order, so it costs only the pages the new code's first calls touch; regenerate it when a
# release's resident code grows (docs/benchmarks.md, round 15, has the figures to compare).
#
# Regenerate (valgrind, nginx-light, curl and prometheus-blackbox-exporter installed; about five
# minutes on two cores):
#   make release && swift build --product ipdirect-bench
#   scripts/text-order.py .build-release/release/ipdirect .build/debug/ipdirect-bench scripts/text-order.txt
# The binary must carry its symbol table (the build folder's, not the stripped install). Valgrind
# 3.19 cannot read Swift's DWARF 5, so the runs use a copy without debug information.
import collections
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

CALLGRIND = ["valgrind", "--tool=callgrind", "--demangle=no"]


def parse(path, binary):
    """Instructions run in each function of `binary` (by symbol) in one callgrind output file."""
    objects, functions = {}, {}
    cost = collections.Counter()
    obj = function = None
    after_call = False

    def name(table, rest):
        # Callgrind's name compression: "(id) name" the first time, "(id)" after.
        match = re.match(r"\((\d+)\)(?: (.*))?$", rest)
        if not match:
            return rest
        if match.group(2) is not None:
            table[match.group(1)] = match.group(2)
        return table.get(match.group(1))

    with open(path, errors="replace") as text:
        for line in text:
            line = line.rstrip("\n")
            if line.startswith("ob="):
                obj = name(objects, line[3:])
            elif line.startswith("cob="):
                name(objects, line[4:])
            elif line.startswith("fn="):
                function = name(functions, line[3:])
            elif line.startswith("cfn="):
                name(functions, line[4:])
            elif line.startswith("calls="):
                after_call = True  # the next cost line is the callee's, not this function's
            elif line and (line[0].isdigit() or line[0] in "+-*"):
                if after_call:
                    after_call = False
                elif obj == binary and function:
                    fields = line.split()
                    cost[function] += int(fields[1]) if len(fields) > 1 else 1
    entered = collections.Counter()
    for symbol, count in cost.items():
        symbol = re.sub(r"'\d+$", "", symbol)  # callgrind's recursion-depth suffix
        if not symbol.startswith("0x"):  # code with no symbol: nothing to name to lld
            entered[symbol] += count
    return entered


def agent_run(binary, bench, work):
    """The agent under callgrind, serving `/probe` through ipdirect-bench probe-blackbox (its nginx,
    lab and configuration) with `/metrics` scraped beside it."""
    wrapper = os.path.join(work, "ipdirect")
    with open(wrapper, "w") as text:
        command = " ".join(CALLGRIND + [f"--callgrind-out-file={work}/agent.%p.out", binary])
        text.write(f'#!/bin/sh\nexec {command} "$@"\n')
    os.chmod(wrapper, 0o755)
    shutil.copy(bench, os.path.join(work, "ipdirect-bench"))
    environment = dict(os.environ, BLACKBOX_BENCH_REQUESTS="60", BLACKBOX_BENCH_AT_ONCE="20", IPDIRECT_BENCH_ROUNDS="1")
    run = subprocess.Popen(
        [os.path.join(work, "ipdirect-bench"), "probe-blackbox"], env=environment,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    port = None
    while port is None and run.poll() is None:
        time.sleep(1)
        listening = subprocess.run(["ss", "-ltnpH"], capture_output=True, text=True).stdout
        for line in listening.splitlines():
            if "callgrind" in line and "127.0.0.1:" in line:
                port = line.split("127.0.0.1:")[1].split()[0]
    for _ in range(5):
        if port:
            # Beside the benchmark's probes that succeed: one of a name nothing resolves, an
            # unknown module, a path nothing serves, and the scrapes.
            for path in ["/metrics", "/nothing-here", "/probe?module=none&target=x",
                         "/probe?module=direct_sni&target=https%3A%2F%2Fnothing.invalid%2F"]:
                subprocess.run(["curl", "-s", "-m", "60", "-o", "/dev/null", f"http://127.0.0.1:{port}{path}"])
    output, _ = run.communicate()
    sys.stderr.write(output)
    if run.returncode != 0:
        sys.exit("text-order: probe-blackbox under callgrind failed")


def command_run(binary, work, label, arguments, seconds=None):
    """One command under callgrind; with `seconds`, in a terminal, interrupted after that long."""
    out = os.path.join(work, label + ".out")
    command = CALLGRIND + [f"--callgrind-out-file={out}", binary] + arguments
    if seconds is None:
        subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    else:
        quoted = " ".join(command)
        session = subprocess.Popen(
            ["script", "-qec", f"stty cols 120 rows 40; timeout -s INT {seconds} {quoted}", "/dev/null"],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            env=dict(os.environ, TERM="xterm-256color"), start_new_session=True)
        try:
            session.wait(timeout=seconds + 60)
        except subprocess.TimeoutExpired:
            os.killpg(session.pid, signal.SIGKILL)
    return out


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: scripts/text-order.py RELEASE_IPDIRECT IPDIRECT_BENCH OUTPUT")
    release, bench, output = sys.argv[1:]
    work = tempfile.mkdtemp(prefix="ipdirect-text-order-")
    binary = os.path.join(work, "ipdirect-symbols")
    objcopy = shutil.which("llvm-objcopy") or "/opt/swift/usr/bin/llvm-objcopy"
    subprocess.run([objcopy, "--strip-debug", release, binary], check=True)
    agent_run(binary, bench, work)
    agent = collections.Counter()
    for name in os.listdir(work):
        if name.startswith("agent.") and name.endswith(".out"):
            agent.update(parse(os.path.join(work, name), binary))
    others = collections.Counter()
    for label, arguments, seconds in [
        ("probe-lab", ["probe", "--lab", "https://sni-a.lab.test/"], None),
        ("console", ["--lab"], 90),
        ("help", ["--help"], None),
        ("version", ["--version"], None),
    ]:
        others.update(parse(command_run(binary, work, label, arguments, seconds), binary))
    if len(agent) < 1000:
        sys.exit(f"text-order: the agent's run entered only {len(agent)} functions; see {work}")
    listed = [symbol for symbol, _ in agent.most_common()]
    listed += [symbol for symbol, _ in others.most_common() if symbol not in agent]
    with open(output, "w") as text:
        text.write("\n".join(listed) + "\n")
    print(f"text-order: {len(agent)} functions the agent entered, {len(listed) - len(agent)} more"
          f" the other commands did, written to {output} (callgrind's files in {work})")


main()
