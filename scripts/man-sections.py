#!/usr/bin/env python3
# Adds to the generated man page what swift-argument-parser's generate-manual leaves out, from the
# same source as --help: each command's EXAMPLES and the EXIT STATUS table (its ".Ex -std" says
# only ">0 if an error occurs"). Usage: scripts/man-sections.py BINARY PAGE (rewrites PAGE).
import json
import os
import re
import subprocess
import sys

binary, page = sys.argv[1], sys.argv[2]
# Wide enough that --help wraps no line: each row and example stays whole.
environment = dict(os.environ, COLUMNS="400")


def helped(path):
    """The --help text of the command at `path` (a list of words after ipdirect)."""
    return subprocess.run([binary, *path, "--help"], capture_output=True, text=True, env=environment).stdout


def commands(node, path):
    """Every command's path in the tree --experimental-dump-help gives, in its order."""
    found = [path]
    for sub in node.get("subcommands", []):
        if sub["commandName"] != "help":
            found += commands(sub, path + [sub["commandName"]])
    return found


def text(line):
    """A line of roff text that starts with no control character and shows backslashes as written."""
    return "\\&" + line.replace("\\", "\\e")


def examples(help_text):
    """The (command, shows) pairs of a help text's EXAMPLES block."""
    pairs, lines = [], help_text.split("\n")
    if "EXAMPLES:" not in lines:
        return pairs
    for line in lines[lines.index("EXAMPLES:") + 1 :]:
        if line.startswith("      ") and pairs:
            pairs[-1][1] += (" " if pairs[-1][1] else "") + line.strip()
        elif line.startswith("  ") and line.strip():
            pairs.append([line.strip(), ""])
        elif line.strip():
            break
    return pairs


def exit_rows(help_text):
    """The (status, meaning) rows under the root help's EXIT STATUS line."""
    lines = help_text.split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith("EXIT STATUS"))
    rows = []
    for line in lines[start + 1 :]:
        match = re.match(r"^\s+(\d+)\s+(.*)$", line)
        if not match:
            break
        rows.append((match.group(1), match.group(2)))
    return rows


tree = json.loads(subprocess.run([binary, "--experimental-dump-help"], capture_output=True, text=True).stdout)
root_help = helped([])
rows = exit_rows(root_help)

section = [".Sh EXAMPLES"]
for path in commands(tree["command"], []):
    listed = examples(helped(path))
    if not listed:
        continue
    section.append('.Ss "%s"' % " ".join(["ipdirect"] + path))
    for command, shows in listed:
        # A literal display: .Dl would read a word like "." (jq .) as punctuation and move it.
        section += [".Pp", text(shows), ".Bd -literal -offset indent", text(command), ".Ed"]
status = ['.Sh "EXIT STATUS"', "The same in every command:", ".Bl -tag -width 6n"]
for number, meaning in rows:
    status += [".It " + number, text(meaning)]
status.append(".El")

with open(page) as file:
    lines = file.read().split("\n")
# The root's discussion carries the table as preformatted lines, which mdoc runs together into
# one paragraph: they give way to a pointer to the section.
out, skipping = [], False
for line in lines:
    if line.startswith("EXIT STATUS (the same in every command)"):
        out.append("The exit statuses are the same in every command (see EXIT STATUS).")
        skipping = True
        continue
    if skipping and re.match(r"^\s+\d+\s", line):
        continue
    skipping = False
    out.append(line)
start = out.index('.Sh "EXIT STATUS"')
end = start + 1
while end < len(out) and not out[end].startswith(".Sh"):
    end += 1
out[start:end] = section + status
with open(page, "w") as file:
    file.write("\n".join(out))
