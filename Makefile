# The two commands of the README: `make run` and `make test`. Both install what the build
# needs first. `make bench` runs the benchmarks (on demand, never as tests).
SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -c
SWIFT ?= swift
BIN := .build/debug/ipdirect
SWIFT_SOURCES := Package.swift Sources Tests Resources

.PHONY: run test deps build bench format format-check lab

deps:
	@scripts/install-deps.sh

build: deps
	$(SWIFT) build --product ipdirect

run: build
	$(BIN) --lab

lab: build
	$(BIN) lab

# Builds everything (warnings in our own code fail the build) then runs every test.
test: deps
	@$(SWIFT) build --build-tests 2>&1 | tee .build-test.log
	@if grep -E '^/.*/(Sources|Tests)/.*: warning:' .build-test.log | grep -v '/.build/' ; then \
	  echo "make test: warnings in ipdirect's own code (listed above) fail the build" >&2; exit 1; fi
	# One test at a time: the suites start real lab servers and check real 1-2 s deadlines
	# (faults, timeouts); run in parallel on a 2-core machine they starve each other's deadlines.
	$(SWIFT) test --skip-build --no-parallel

# The probe benchmark runs against a local nginx origin (nginx-light, installed here if missing).
bench: deps
	@scripts/install-deps.sh nginx-light
	$(SWIFT) build -c release --product ipdirect
	$(SWIFT) build -c release --product ipdirect-bench
	.build/release/ipdirect-bench

format:
	$(SWIFT) format --in-place --recursive $(SWIFT_SOURCES)

format-check:
	$(SWIFT) format lint --strict --recursive $(SWIFT_SOURCES)
