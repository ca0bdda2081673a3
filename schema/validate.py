#!/usr/bin/env python3
"""Check ipdirect's JSON output against the schemas in this folder.
Usage: validate.py probe|resolve|doctor|audit|audit-setup FILE...   Exit 0 when every file is valid; prints each error otherwise.
Needs the jsonschema package (python3-jsonschema, or pip install jsonschema)."""
import json, pathlib, sys
from jsonschema import Draft202012Validator, FormatChecker
from referencing import Registry, Resource

here = pathlib.Path(__file__).parent
registry = Registry()
for p in here.glob("*.schema.json"):
    registry = registry.with_resource(p.name, Resource.from_contents(json.loads(p.read_text())))
root = json.loads((here / f"{sys.argv[1]}.schema.json").read_text())
validator = Draft202012Validator(root, registry=registry, format_checker=FormatChecker())

bad = 0
for name in sys.argv[2:]:
    document = json.loads(pathlib.Path(name).read_text())
    for error in sorted(validator.iter_errors(document), key=lambda e: list(e.path)):
        bad += 1
        print(f"{name}: {'/'.join(str(p) for p in error.path)}: {error.message}"[:400])
sys.exit(1 if bad else 0)
