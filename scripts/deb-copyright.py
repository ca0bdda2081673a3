#!/usr/bin/env python3
"""Writes the Debian copyright file of the ipdirect binary: ipdirect itself, then every package
whose code the release build linked into it (read from the linker's own list of objects, not from
Package.swift), then the Swift runtime and Foundation, each with its licence.
Usage: deb-copyright.py BUILD_DIR > copyright   (BUILD_DIR: the release build's --scratch-path)"""
import pathlib, re, shutil, subprocess, sys

build = pathlib.Path(sys.argv[1])
root = pathlib.Path(__file__).resolve().parent.parent
checkouts = build / "checkouts"

link_lists = [p for p in build.rglob("Objects.LinkFileList") if p.parent.name == "ipdirect.product"]
if not link_lists:
    sys.exit(f"deb-copyright: no ipdirect.product/Objects.LinkFileList under {build}: build the release first")
targets = set()
for line in link_lists[0].read_text().split():
    for part in pathlib.Path(line.strip("'\"")).parts:
        if part.endswith(".build"):
            targets.add(part[: -len(".build")])

def package_of(target):
    """The checkout that defines a target: its folder under Sources/, or its name in Package.swift."""
    for package in sorted(checkouts.iterdir()):
        if (package / "Sources" / target).is_dir():
            return package
    for package in sorted(checkouts.iterdir()):
        manifest = package / "Package.swift"
        if manifest.exists() and re.search(r'name:\s*"%s"' % re.escape(target), manifest.read_text()):
            return package
    return None

# Our own targets: every name Package.swift declares (BundledResources lives in Resources/).
ours = set(re.findall(r'name:\s*"([^"]+)"', (root / "Package.swift").read_text()))
packages = {}
for target in sorted(targets - ours):
    package = package_of(target)
    if package is None:
        sys.exit(f"deb-copyright: linked target {target} belongs to no checkout under {checkouts}")
    packages.setdefault(package, []).append(target)

def version(package):
    out = subprocess.run(["git", "-C", str(package), "describe", "--tags", "--always"],
                         capture_output=True, text=True)
    return out.stdout.strip() or "unknown"

def licence_files(package, targets):
    """The package's own licence, and any licence file inside a linked target (BoringSSL, toml++)."""
    files = [p for p in sorted(package.iterdir()) if re.match(r"(LICEN[CS]E|COPYING)", p.name, re.I)]
    for target in targets:
        folder = package / "Sources" / target
        if folder.is_dir():
            files += [p for p in sorted(folder.rglob("*")) if p.is_file() and re.match(r"(LICEN[CS]E|COPYING)", p.name, re.I)]
    return files

def is_apache(text):
    return "Apache License" in text and "Version 2.0" in text

def copyright_lines(package, files):
    lines = []
    for f in files + [p for p in package.iterdir() if p.name.upper().startswith("NOTICE")]:
        for line in f.read_text(errors="replace").splitlines():
            line = line.strip()
            if re.match(r"copyright\s+(\(c\)|©|\d{4})", line, re.I) and line not in lines:
                lines.append(line)
    return lines[:6] or ["the authors named in the package's NOTICE and licence files"]

out = []
out.append("ipdirect: troubleshoot HTTPDNS and IP-direct connections\n")
out.append("Copyright: the ipdirect developers. No licence for ipdirect itself has been published yet:")
out.append("ask its developers before redistributing it.\n")
out.append("The ipdirect binary links the following packages statically (computed from the")
out.append("linker's list of objects by scripts/deb-copyright.py); their licences follow.")
out.append("Apache-2.0 is in /usr/share/common-licenses/Apache-2.0; other licences are given in full.\n")
full_texts = []
for package, linked in sorted(packages.items(), key=lambda item: item[0].name.lower()):
    files = licence_files(package, linked)
    out.append(f"{package.name} {version(package)} (targets: {', '.join(linked)})")
    for line in copyright_lines(package, files):
        out.append(f"  {line}")
    names = []
    for f in files:
        text = f.read_text(errors="replace")
        relative = f.relative_to(package)
        if is_apache(text):
            names.append(f"Apache-2.0 ({relative})")
        else:
            names.append(f"{relative}, in full below")
            full_texts.append((f"{package.name}/{relative}", text))
    out.append(f"  Licence: {'; '.join(names) or 'see the package'}\n")

out.append("Swift runtime, Foundation, Dispatch (the Swift toolchain, linked with --static-swift-stdlib)")
out.append("  Copyright (c) 2014 - 2026 Apple Inc. and the Swift project authors")
out.append("  Licence: Apache-2.0 with the Runtime Library Exception, below")
out.append("  Foundation's ICU data and code (swift-foundation-icu): the Unicode licence (ICU),")
out.append("  https://www.unicode.org/copyright.html\n")
# The toolchain's own licence, beside the `swift` that built the binary.
swift = shutil.which("swift")
runtime = pathlib.Path(swift).resolve().parent.parent / "share/swift/LICENSE.txt" if swift else None
if runtime and runtime.exists():
    text = runtime.read_text(errors="replace")
    start = text.find("## Runtime Library Exception")
    if start >= 0:
        full_texts.append(("Swift runtime: the Runtime Library Exception to Apache-2.0", text[start:]))

for name, text in full_texts:
    out.append("-" * 72)
    out.append(name)
    out.append("")
    out.append(text.rstrip())
    out.append("")
print("\n".join(out))
