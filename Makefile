# The two commands of the README: `make run` (builds, then the console against the lab) and `make
# test` (builds, then every test). `make run` and `make build` install only what building and
# running needs (scripts/install-deps.sh run); `make test` adds the test suite's packages
# (prometheus, zsh, fish, the namespace tools, a pip package: scripts/install-deps.sh test).
# `make build` says what it builds and how far along it is (scripts/build-progress.sh), the full
# log in .build/build.log. `make bench` runs the benchmarks (on demand, never as tests); `make release`,
# `make install`, `make deb` and `make package-test` ship it (see "Shipping" below).
SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -c
SWIFT ?= swift
BIN := .build/debug/ipdirect
SWIFT_SOURCES := Package.swift Sources Tests Resources

.PHONY: run test deps test-deps build bench format format-check lab fuzz tsan tsan-opt asan release size test-release soak-release docs install uninstall deb package-test

deps:
	@scripts/install-deps.sh run

test-deps:
	@scripts/install-deps.sh test

build: deps
	@$(SWIFT) build --product ipdirect 2>&1 | scripts/build-progress.sh .build/build.log

run: build
	$(BIN) --lab

lab: build
	$(BIN) lab

# Builds everything (warnings in our own code fail the build) then runs every test.
test: test-deps
	@$(SWIFT) build --build-tests 2>&1 | tee .build-test.log
	@if grep -E '^/.*/(Sources|Tests)/.*: warning:' .build-test.log | grep -v '/.build/' ; then \
	  echo "make test: warnings in ipdirect's own code (listed above) fail the build" >&2; exit 1; fi
	# Suites run in parallel: labs hold their ports for life, and tests wait for child processes
	# and tmux without blocking the cooperative threads (Tests/TestSupport/ChildProcess.swift).
	# A test that blocks one of them starves the others' deadlines: wait with it, not Process.
	$(SWIFT) test --skip-build

# The probe benchmark runs against a local nginx origin (nginx-light, installed here if missing).
bench: deps
	@scripts/install-deps.sh run nginx-light
	$(SWIFT) build -c release --product ipdirect
	$(SWIFT) build -c release --product ipdirect-bench
	.build/release/ipdirect-bench

format:
	$(SWIFT) format --in-place --recursive $(SWIFT_SOURCES)

format-check:
	$(SWIFT) format lint --strict --recursive $(SWIFT_SOURCES)

# Fuzzing (on demand, never in `make test`): builds the libFuzzer executable with
# -sanitize=fuzzer,address in a build folder of its own, then runs each target for
# FUZZ_SECONDS on a copy of its seed corpus. New crashing inputs land in
# Tests/Fuzz/Corpus/<target>/ (crash-*), where the replay test in `make test` keeps them.
# Leak detection is off: libFuzzer stops at the first leak, and the two it found are outside
# ipdirect (TOMLKit's parse-error path, Foundation's Data(contentsOf:) of an empty file).
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= url input-lines location alicloud tencent doh-json doh-wire cache-file configuration header-lines terminal-text service-text
FUZZ_BUILD := .build-fuzz
fuzz: test-deps
	# swiftc keeps only the last -sanitize= it is given: SwiftPM's two flags alone leave Swift code
	# with ASan and no coverage (libFuzzer then fuzzes blind: "corp: 1/1b", "Is the code
	# instrumented for coverage?"). The combined flag, passed after them, gives Swift code both.
	$(SWIFT) build --scratch-path $(FUZZ_BUILD) --product ipdirect-fuzz --sanitize=fuzzer --sanitize=address \
	  -Xswiftc -sanitize=fuzzer,address
	@mkdir -p $(FUZZ_BUILD)/corpus $(FUZZ_BUILD)/logs
	@status=0; for target in $(FUZZ_TARGETS); do \
	  work=$(FUZZ_BUILD)/corpus/$$target; mkdir -p $$work; cp Tests/Fuzz/Corpus/$$target/* $$work/; \
	  ASAN_OPTIONS=detect_leaks=0 IPDIRECT_FUZZ_TARGET=$$target $(FUZZ_BUILD)/debug/ipdirect-fuzz $$work Tests/Fuzz/Corpus/$$target \
	    -max_total_time=$(FUZZ_SECONDS) -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
	    -artifact_prefix=Tests/Fuzz/Corpus/$$target/ -print_final_stats=1 -detect_leaks=0 \
	    > $(FUZZ_BUILD)/logs/$$target.log 2>&1 || status=1; \
	  runs=$$(grep -o 'stat::number_of_executed_units: *[0-9]*' $(FUZZ_BUILD)/logs/$$target.log | grep -o '[0-9]*$$'); \
	  crashes=$$(ls Tests/Fuzz/Corpus/$$target | grep -c -E '^(crash|leak|timeout|oom|slow-unit)-[0-9a-f]{40}$$' || true); \
	  echo "fuzz $$target: $${runs:-?} executions, $$crashes findings kept in its corpus (log: $(FUZZ_BUILD)/logs/$$target.log)"; \
	  if grep -q 'Is the code instrumented for coverage' $(FUZZ_BUILD)/logs/$$target.log; then \
	    echo "fuzz $$target: libFuzzer saw no coverage (the Swift code is not instrumented): the run was blind" >&2; status=1; fi; \
	done; exit $$status

# The whole suite under ThreadSanitizer, in a build folder of its own (every dependency is
# rebuilt instrumented, so the first run is slow). A reported race stops the run and fails it.
TSAN_BUILD := .build-tsan
# Language mode 6 as in every other build: language mode 5 was forced here while swift-otel (no
# longer a dependency) failed to compile under -sanitize=thread; ipdirect and the rest build clean.
TSAN_FLAGS := --sanitize=thread
# Reports in the Swift toolchain, not in ipdirect, each explained in the file.
TSAN_SUPPRESSIONS := $(CURDIR)/scripts/tsan-suppressions.txt
# Reports go to files, one per process: the programs the tests start (ipdirect itself) are
# instrumented too, and a report in one of them otherwise shows only as its exit status 66.
# One test at a time (unlike `make test`): instrumented code runs several times slower, so the
# end-to-end tests' waits have the two cores to themselves, and a report stops the run in the
# test that caused it.
TSAN_REPORTS := $(TSAN_BUILD)/reports
tsan: test-deps
	$(SWIFT) build --build-tests --scratch-path $(TSAN_BUILD) $(TSAN_FLAGS)
	@rm -rf $(TSAN_REPORTS) && mkdir -p $(TSAN_REPORTS)
	@status=0; TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$(TSAN_SUPPRESSIONS) log_path=$(CURDIR)/$(TSAN_REPORTS)/tsan" \
	  $(SWIFT) test --skip-build --scratch-path $(TSAN_BUILD) $(TSAN_FLAGS) --no-parallel || status=1; \
	for report in $(TSAN_REPORTS)/tsan.*; do \
	  [ -e "$$report" ] || continue; echo "ThreadSanitizer report ($$report):"; cat "$$report"; status=1; \
	done; exit $$status

# ThreadSanitizer with the optimiser on (issue 32): `make tsan` runs unoptimised code, where races
# and miscompiles that only -O makes can hide. The concurrent suites (task groups resolving
# batches, the resolver cache, the transfer loop, the agent's loop and exporters, its /probe
# endpoint and /metrics listener, the doctor's runner, the probe batch, a session from
# configuration) built with -O on top of the debug configuration (`@testable` imports keep
# working), in a build folder of its own; reports as under `make tsan`. On demand, not in CI: the
# instrumented, optimised build of every dependency is slow. Each name in TSAN_OPT_SUITES must
# match a suite (a filter that matches nothing passes having run nothing).
TSAN_OPT_BUILD := .build-tsan-opt
TSAN_OPT_REPORTS := $(TSAN_OPT_BUILD)/reports
TSAN_OPT_SUITES := NameResolutionTests\.(CacheTests|ResolveAfreshTests|LabProviderTests|ProviderComparisonTests|SignedBatchTests)/|CurlTransportTests\.TransferLoopTests/|AgentTests\.(AgentLoopTests|AgentExportersTests|ProbeEndpointTests|MetricsServerTests|MetricsListenerLimitsTests)/|DoctorTests\.DoctorRunnerTests/|ProbeTests\.BatchOrderTests/|CompositionTests\.ResolverSessionTests/
tsan-opt: test-deps
	$(SWIFT) build --build-tests --scratch-path $(TSAN_OPT_BUILD) $(TSAN_FLAGS) -Xswiftc -O
	@rm -rf $(TSAN_OPT_REPORTS) && mkdir -p $(TSAN_OPT_REPORTS)
	@status=0; TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$(TSAN_SUPPRESSIONS) log_path=$(CURDIR)/$(TSAN_OPT_REPORTS)/tsan" \
	  $(SWIFT) test --skip-build --scratch-path $(TSAN_OPT_BUILD) $(TSAN_FLAGS) -Xswiftc -O --no-parallel \
	  --filter '$(TSAN_OPT_SUITES)' || status=1; \
	for report in $(TSAN_OPT_REPORTS)/tsan.*; do \
	  [ -e "$$report" ] || continue; echo "ThreadSanitizer report ($$report):"; cat "$$report"; status=1; \
	done; exit $$status

# The whole suite under AddressSanitizer, in a build folder of its own (every dependency is
# rebuilt instrumented, so the first run is slow). The tests start the ipdirect binary built
# beside them, so the end-to-end ones run the instrumented binary: issue 20's crash (libcurl
# walking a list ipdirect had freed) shows here as a report, not a Bus error half the time.
ASAN_BUILD := .build-asan
ASAN_FLAGS := --sanitize=address
# Reports go to files, one per process, as under `make tsan`: a report in a program a test
# started otherwise shows only as its exit status. Leak detection is off: the Swift runtime,
# Foundation and TOMLKit keep allocations for the process's life that LeakSanitizer calls leaks
# (see `make fuzz`), and the agent's memory is measured by its benchmark instead. Suites run in
# parallel as in `make test`: instrumented code runs about twice as slow, not ten times.
ASAN_REPORTS := $(ASAN_BUILD)/reports
# Reports in the Swift toolchain, not in ipdirect, each explained in the file.
ASAN_SUPPRESSIONS := $(CURDIR)/scripts/asan-suppressions.txt
asan: test-deps
	$(SWIFT) build --build-tests --scratch-path $(ASAN_BUILD) $(ASAN_FLAGS)
	@rm -rf $(ASAN_REPORTS) && mkdir -p $(ASAN_REPORTS)
	@status=0; ASAN_OPTIONS="detect_leaks=0 suppressions=$(ASAN_SUPPRESSIONS) log_path=$(CURDIR)/$(ASAN_REPORTS)/asan" \
	  $(SWIFT) test --skip-build --scratch-path $(ASAN_BUILD) $(ASAN_FLAGS) || status=1; \
	for report in $(ASAN_REPORTS)/asan.*; do \
	  [ -e "$$report" ] || continue; echo "AddressSanitizer report ($$report):"; cat "$$report"; status=1; \
	done; exit $$status

# Shipping. `make release` builds the binary with the Swift runtime and Foundation linked in
# (--static-swift-stdlib), in a build folder of its own so `make bench`'s release build is not
# rebuilt each time; it keeps its symbols (perf, gdb). `make docs` generates the man page
# (swift-argument-parser's generate-manual plugin, from the command definitions) and the bash,
# zsh and fish completions. `make install` / `make uninstall` put them under $(DESTDIR)$(PREFIX);
# `make deb` builds out/ipdirect_VERSION_ARCH.deb with dpkg-deb and checks it with lintian;
# `make package-test` builds all of it and runs the tests that need it (PackagingTests).
PREFIX ?= /usr/local
DESTDIR ?=
RELEASE_BUILD := .build-release
RELEASE_BIN := $(RELEASE_BUILD)/release/ipdirect
DOCS := out/docs
# A section per function in every module, the dependencies' too (SwiftPM gives -Xswiftc, -Xcc and
# -Xcxx to every target), so lld can lay the code out in scripts/text-order.txt's order: the agent
# then maps less of its binary (scripts/text-order.py says why; docs/benchmarks.md, round 15, what
# it saved). Every build in $(RELEASE_BUILD) takes the same flags, or SwiftPM rebuilds it all.
RELEASE_FLAGS := -c release --scratch-path $(RELEASE_BUILD) --static-swift-stdlib \
  -Xswiftc -Xfrontend -Xswiftc -function-sections -Xcc -ffunction-sections -Xcxx -ffunction-sections

# The link reads scripts/text-order.txt, which SwiftPM does not know of: a newer list relinks.
release: deps
	@if [ scripts/text-order.txt -nt $(RELEASE_BIN) ]; then rm -f $(RELEASE_BIN); fi
	$(SWIFT) build $(RELEASE_FLAGS) --product ipdirect
	@scripts/check-release.sh $(RELEASE_BIN)

# What the release binary is made of: relinked with lld's map, its stripped size and the bytes of
# each library and module in it (issue 34's size table was measured this way).
size: release
	$(SWIFT) build $(RELEASE_FLAGS) --product ipdirect -Xlinker -Map=$(RELEASE_BUILD)/ipdirect.map
	scripts/binary-size.py $(RELEASE_BUILD)/ipdirect.map $(RELEASE_BIN)

docs: build
	scripts/generate-docs.sh $(BIN) $(DOCS)

install: release docs
	scripts/install-tree.sh install "$(DESTDIR)" "$(PREFIX)" $(RELEASE_BIN) $(DOCS)

uninstall:
	scripts/install-tree.sh uninstall "$(DESTDIR)" "$(PREFIX)"

deb: release docs
	@scripts/install-deps.sh run dpkg-dev binutils lintian
	scripts/make-deb.sh $(RELEASE_BUILD) $(DOCS) out

package-test: deb
	@$(SWIFT) build --build-tests 2>&1 | tail -3
	$(SWIFT) test --skip-build --filter PackagingTests

# The binary we ship is the binary we test (issue 32: a crash only the optimised build had). The
# suites that start `ipdirect` (scripts/binary-suites.sh reads which from the tests) run against
# the release binary that goes into the package: the test code is the debug build's, the binary
# it starts is IPDIRECT_BINARY's (BuiltBinary.ipdirect, Tests/TestSupport/ChildProcess.swift).
test-release: release
	@$(SWIFT) build --build-tests 2>&1 | tail -3
	IPDIRECT_BINARY=$(CURDIR)/$(RELEASE_BIN) $(SWIFT) test --skip-build --filter "$$(scripts/binary-suites.sh)"

# Every command shape the README shows, many times, on the release binary against the lab, in a
# network namespace of its own; any exit by a signal fails it, naming the command. SOAK_ROUNDS
# sizes it (15 rounds, about 350 commands: three to four minutes on two cores).
SOAK_ROUNDS ?= 15
soak-release: release
	scripts/soak-release.sh $(RELEASE_BIN) $(SOAK_ROUNDS)
