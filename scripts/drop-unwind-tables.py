#!/usr/bin/env python3
# The release link's inputs without their unwind tables (scripts/link-release.sh runs this): copies
# of the objects and the Swift toolchain's static libraries with .eh_frame removed, cached beside
# the build, TOMLKit's C++ (CTOML) left whole, and a response file that names the copies.
#
# Why (issue 34): .eh_frame and its index were 4.8 MB of the 32 MB binary, and nothing in it needs
# them but toml++, which throws its parse errors inside CTOML and catches them there (without its
# tables a malformed config.toml ends the process: "terminate called after throwing an instance of
# 'toml::v3::ex::parse_error'"). No Swift code can catch an exception, BoringSSL's C++ throws none,
# and pthread_exit (dispatch_main, under the async main) stops unwinding where the tables end and
# exits the thread all the same. lld cannot drop them per file: a /DISCARD/ of .eh_frame takes the
# whole merged section, CTOML's with it. The cost: a debugger or `perf --call-graph dwarf` loses
# its way up a stack through C code; Swift code keeps its frame pointers (`perf record -g`, gdb).
import os
import shlex
import subprocess
import sys

KEEP = "/CTOML.build/"  # toml++'s exceptions unwind through these objects only.

# TOOLCHAIN_USR LINKER_ARGUMENTS...: the arguments clang gives lld, in response files (@FILE) or not.
toolchain_root = sys.argv[1]
objcopy = os.path.join(toolchain_root, "bin", "llvm-objcopy")
arguments = []
for argument in sys.argv[2:]:
    if argument.startswith("@"):
        with open(argument[1:]) as text:
            arguments += shlex.split(text.read())
    else:
        arguments.append(argument)
output = arguments[arguments.index("-o") + 1]
cache = os.path.join(os.path.dirname(output), "without-unwind-tables")


def without_unwind_tables(path):
    """A cached copy of the object or archive at path with no .eh_frame, made again when older."""
    copy = os.path.join(cache, os.path.abspath(path).lstrip("/"))
    if not os.path.exists(copy) or os.path.getmtime(copy) < os.path.getmtime(path):
        os.makedirs(os.path.dirname(copy), exist_ok=True)
        subprocess.run([objcopy, "--remove-section=.eh_frame", path, copy + ".tmp"], check=True)
        os.replace(copy + ".tmp", copy)
    return copy


toolchain = None
rewritten = []
for argument in arguments:
    if argument.startswith("-L") and argument.endswith("/swift_static/linux") and toolchain is None:
        # The toolchain's static libraries (-lswiftCore, -lFoundationEssentials...): searched in a
        # folder of copies first, each copy made from the library of that name.
        toolchain = argument[2:]
        copies = os.path.join(cache, "swift_static")
        os.makedirs(copies, exist_ok=True)
        named = {a[2:] for a in arguments if a.startswith("-l")} | {"FoundationEssentials"}
        for name in os.listdir(toolchain):
            if name.startswith("lib") and name.endswith(".a") and name[3:-2] in named:
                copy = without_unwind_tables(os.path.join(toolchain, name))
                target = os.path.join(copies, name)
                if os.path.realpath(target) != copy:
                    if os.path.lexists(target):
                        os.remove(target)
                    os.symlink(copy, target)
        rewritten.append("-L" + copies)
    elif (
        argument.endswith(".o")
        and KEEP not in argument
        and os.path.isfile(argument)
        and ("/.build" in argument or argument.startswith(toolchain_root + "/"))
    ):
        rewritten.append(without_unwind_tables(argument))
        continue
    rewritten.append(argument)

out = os.path.join(cache, "link.rsp")
with open(out, "w") as text:
    text.write(" ".join(shlex.quote(argument) for argument in rewritten))
print(out)
