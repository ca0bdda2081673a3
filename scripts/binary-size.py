#!/usr/bin/env python3
# What the release binary is made of: its stripped size, then the bytes each input (a static
# library of the toolchain, a module of ours or of a dependency) puts in it, from lld's link map.
# `make size` links with the map and runs this; issue 34's table of steps was measured with it.
import collections
import os
import re
import subprocess
import sys
import tempfile

if len(sys.argv) < 3:
    sys.exit("usage: binary-size.py LINK_MAP BINARY [HOW_MANY]")
link_map, binary = sys.argv[1], sys.argv[2]
how_many = int(sys.argv[3]) if len(sys.argv) > 3 else 30

# Sections that never reach a stripped file (debug info, symbols) or take no file space (.bss).
NOT_SHIPPED = re.compile(r"^\.(debug|comment|symtab|strtab|shstrtab|bss|tbss)")
LINE = re.compile(r"^\s*([0-9a-f]+)\s+([0-9a-f]+)\s+([0-9a-f]+)\s+(\d+) (\s*)(.*)$")

by_input = collections.Counter()
by_section = collections.Counter()
section = ""
with open(link_map) as lines:
    for line in lines:
        match = LINE.match(line)
        if not match:
            continue
        indent, text, size = len(match.group(5)), match.group(6), int(match.group(3), 16)
        if indent == 0:
            section = text.strip()
            continue
        if indent != 8 or NOT_SHIPPED.match(section):
            continue
        path = text.split(":(")[0]
        if ".build/" in path and "/release/" in path:
            # An object of a module: named by its module (Probe.build/ProbeJSON.swift.o → Probe).
            # rsplit: the release link names copies of the objects under .../release/without-unwind-tables/.
            name = path.rsplit("/release/", 1)[1].split("/")[0].removesuffix(".build")
        else:
            # A member of a static library: named by the library (libswiftCore.a(Swift.o) → libswiftCore.a).
            name = os.path.basename(re.sub(r"\(.*\)$", "", path))
        by_input[name] += size
        by_section[section] += size

with tempfile.TemporaryDirectory() as scratch:
    stripped = os.path.join(scratch, "ipdirect")
    subprocess.run(["strip", "-o", stripped, binary], check=True)
    stripped_size = os.path.getsize(stripped)

print(f"{binary}: {stripped_size:,} bytes stripped ({stripped_size / 1e6:.1f} MB)")
icu = by_input.get("lib_FoundationICU.a", 0)
print(f"ICU (the full Foundation's): {'not linked' if not icu else f'{icu / 1e6:.1f} MB'}")
print(f"\nlargest inputs (MB, of {sum(by_input.values()) / 1e6:.1f} mapped):")
for name, size in by_input.most_common(how_many):
    print(f"  {size / 1e6:7.2f}  {name}")
print("\nby section (MB):")
for name, size in by_section.most_common(10):
    print(f"  {size / 1e6:7.2f}  {name}")
