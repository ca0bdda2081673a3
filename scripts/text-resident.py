#!/usr/bin/env python3
# The agent's resident code, release binaries side by side (issue 34, round 15): each binary's
# r-x mapping at rest and at its /proc/PID/smaps peak under `ipdirect-bench probe-blackbox`.
#
# For each round and each binary in turn (alternating, as the machine is shared): the agent
# started alone with no targets, its code's resident KB (smaps Rss of the binary's r-x mapping),
# the pages of that mapping present (pagemap) and VmRSS, after 3 s; then probe-blackbox with the
# binary (IPDIRECT_BENCH_ROUNDS, 3 by default), the r-x mapping's Rss sampled every 0.2 s, and
# the benchmark's ratios and peak RSS; then `ipdirect-bench startup`'s `--version` ratios.
#
#   scripts/text-resident.py ROUNDS IPDIRECT_BENCH LABEL=STRIPPED_BINARY...
# Each binary is copied into a folder of its own beside a copy of ipdirect-bench, as the
# benchmark expects; the load average is printed with each figure.
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

PAGE = os.sysconf("SC_PAGE_SIZE")


def text_mapping(pid, binary):
    """(start, end) of the binary's r-x mapping in the process."""
    with open(f"/proc/{pid}/maps") as maps:
        for line in maps:
            fields = line.split()
            if len(fields) >= 6 and fields[1] == "r-xp" and fields[5] == binary:
                start, end = (int(x, 16) for x in fields[0].split("-"))
                return start, end
    return None


def text_rss_kb(pid, binary):
    """Resident KB of the binary's r-x mapping (smaps)."""
    inside = False
    with open(f"/proc/{pid}/smaps") as smaps:
        for line in smaps:
            if re.match(r"^[0-9a-f]+-[0-9a-f]+ ", line):
                fields = line.split()
                inside = fields[1] == "r-xp" and len(fields) >= 6 and fields[5] == binary
            elif inside and line.startswith("Rss:"):
                return int(line.split()[1])
    return 0


def present_pages(pid, mapping):
    """Pages of the mapping present in the process's page table, and all its pages (pagemap)."""
    start, end = mapping
    count = (end - start) // PAGE
    with open(f"/proc/{pid}/pagemap", "rb") as pagemap:
        pagemap.seek(start // PAGE * 8)
        data = pagemap.read(count * 8)
    present = sum(1 for i in range(count) if data[i * 8 + 7] & 0x80)
    return present, count


def status_kb(pid, field):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(field):
                return int(line.split()[1])
    return 0


def load():
    with open("/proc/loadavg") as text:
        return " ".join(text.read().split()[:3])


def at_rest(binary, scratch):
    environment = dict(os.environ, XDG_CONFIG_HOME=scratch, XDG_CACHE_HOME=scratch)
    agent = subprocess.Popen(
        [binary, "agent", "--metrics-listen", "127.0.0.1:0"], env=environment,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(3)
    rss = text_rss_kb(agent.pid, binary)
    present, count = present_pages(agent.pid, text_mapping(agent.pid, binary))
    vmrss = status_kb(agent.pid, "VmRSS:")
    agent.terminate()
    agent.wait()
    return rss, present, count, vmrss


def agent_pid(binary):
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if os.readlink(f"/proc/{name}/exe") == binary:
                    return int(name)
            except OSError:
                pass
    return None


def under_load(binary, bench):
    """probe-blackbox with the binary; the peak of its code's Rss while it ran."""
    peak = [0, 0]
    done = threading.Event()

    def sample():
        pid = None
        while not done.is_set():
            pid = pid or agent_pid(binary)
            if pid:
                try:
                    peak[0] = max(peak[0], text_rss_kb(pid, binary))
                    peak[1] = max(peak[1], status_kb(pid, "VmHWM:"))
                except OSError:
                    pid = None
            time.sleep(0.2)

    sampler = threading.Thread(target=sample)
    sampler.start()
    run = subprocess.run([bench, "probe-blackbox"], capture_output=True, text=True)
    done.set()
    sampler.join()
    output = run.stdout + run.stderr
    ratios = re.search(r"wall ([\d.]+)x.*CPU ([\d.]+)x.*peak RSS ([\d.]+)x", output)
    peaks = re.search(r"ipdirect agent ([\d.]+) MB, blackbox_exporter ([\d.]+) MB", output)
    if not ratios or not peaks:
        sys.stderr.write(output)
        return None
    return peak[0], peak[1], ratios.groups(), peaks.groups()


def startup(binary, bench):
    run = subprocess.run(
        [bench, "startup"], capture_output=True, text=True,
        env=dict(os.environ, STARTUP_BENCH_BINARY=binary))
    found = re.findall(r"--version (wall|CPU): ipdirect median ([\d.]+) ms, curl median ([\d.]+) ms, ratio ([\d.]+)x", run.stdout)
    return {figure: (mine, theirs, ratio) for figure, mine, theirs, ratio in found}


def main():
    rounds = int(sys.argv[1])
    bench = sys.argv[2]
    binaries = []
    for argument in sys.argv[3:]:
        label, path = argument.split("=", 1)
        folder = tempfile.mkdtemp(prefix=f"ipdirect-text-{label}-")
        shutil.copy(path, os.path.join(folder, "ipdirect"))
        shutil.copy(bench, os.path.join(folder, "ipdirect-bench"))
        binaries.append((label, folder, os.path.getsize(path)))
    for round in range(1, rounds + 1):
        order = binaries if round % 2 else list(reversed(binaries))
        for label, folder, size in order:
            binary = os.path.join(folder, "ipdirect")
            rest = at_rest(binary, folder)
            print(f"round {round} {label} ({size} bytes) at rest, load {load()}: code resident {rest[0]} KB,"
                  f" {rest[1]} of {rest[2]} text pages present, VmRSS {rest[3]} KB", flush=True)
        for label, folder, _ in order:
            binary = os.path.join(folder, "ipdirect")
            before = load()
            loaded = under_load(binary, os.path.join(folder, "ipdirect-bench"))
            if loaded:
                (wall, cpu, rss), (mine, theirs) = loaded[2], loaded[3]
                print(f"round {round} {label} probe-blackbox, load {before}: code resident at peak {loaded[0]} KB,"
                      f" VmHWM {loaded[1]} KB; agent {mine} MB, blackbox {theirs} MB; wall {wall}x CPU {cpu}x"
                      f" RSS {rss}x", flush=True)
        for label, folder, _ in order:
            binary = os.path.join(folder, "ipdirect")
            before = load()
            figures = startup(binary, os.path.join(folder, "ipdirect-bench"))
            print(f"round {round} {label} startup, load {before}: " + "; ".join(
                f"{figure} {mine} ms against curl {theirs} ms, {ratio}x" for figure, (mine, theirs, ratio) in figures.items()),
                flush=True)


main()
