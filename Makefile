# convbatch: build, test, run the sample, fuzz, benchmark.
GO       ?= go
BIN      := bin/convbatch
FUZZTIME ?= 60s
OUT      ?= out
# staticcheck at a pinned version, fetched through the Go module proxy and
# built once into Go's build cache (whatever staticcheck is on PATH is not
# used: another version reports other findings).
STATICCHECK_VERSION := v0.8.2
STATICCHECK ?= $(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
# gotestsum runs go test and ends with every skipped test and its reason
# (=== Skipped), then "DONE N tests, N skipped": no skip goes unseen.
GOTESTSUM_VERSION := v1.13.0
GOTESTSUM ?= $(GO) run gotest.tools/gotestsum@$(GOTESTSUM_VERSION)
# go test's flags in make test and make test-beam: every test run again
# (-count=1), test binaries linked without DWARF (-ldflags=-w: a quarter
# less of the linker's CPU for each of some 35 binaries of 100-150 MB;
# stack traces keep their names and lines, debuggers lose variables).
TESTFLAGS ?= -count=1 -ldflags=-w

.PHONY: build pgo build-beam test test-beam lint lint-beam run fuzz fuzz-short bench bench-audit sample clean

# -buildvcs=auto: the revision goes into every Parquet part's created_by
# (parquetout.CreatedBy) even where GOFLAGS says -buildvcs=false, as on the
# project's build machines; outside a Git checkout it is left out.
# go build also picks up cmd/convbatch/default.pgo, the CPU profile of
# profile-guided optimization (make pgo regenerates it).
build:
	$(GO) build -buildvcs=auto -o $(BIN) ./cmd/convbatch

# Regenerate cmd/convbatch/default.pgo from four profiled runs on generated
# archives (scripts/pgo.sh says which, and when to refresh it).
pgo:
	GO=$(GO) bash scripts/pgo.sh

# convbeam, the job on Apache Beam: its own module beam/ (docs/SCALE-OUT.md).
build-beam:
	cd beam && $(GO) build -ldflags="-s -w" -o ../bin/convbeam ./cmd/convbeam

# vet and staticcheck over the module.
lint:
	$(GO) vet ./...
	$(STATICCHECK) ./...

# vet and staticcheck over the Beam module.
lint-beam:
	cd beam && $(GO) vet ./... && $(STATICCHECK) ./...

# The Beam module's tests, on Prism (in-process; needs loopback). Prism logs
# at INFO to stderr; the tests' own output is in go test's.
test-beam: lint-beam
	cd beam && $(GOTESTSUM) --format pkgname -- $(TESTFLAGS) ./...

# The test command of the README and of CI: vet, staticcheck, every test
# (each fuzz target's seed corpus among them), listing every skip with its
# reason; then the same for the Beam module; temporary files on /dev/shm
# where there is room (scripts/test.sh says why; TEST_TMPDIR= for /tmp).
# Fuzzing proper is make fuzz (CI runs it for 4s a target before make test).
test: lint
	@GO=$(GO) GOTESTSUM="$(GOTESTSUM)" TESTFLAGS="$(TESTFLAGS)" MAKE="$(MAKE)" bash scripts/test.sh

# The main job on the bundled sample archive.
run: build
	./$(BIN) run -o $(OUT) --keys testdata/sample.jsonl.zst.keys.json testdata/sample.jsonl.zst

# Every fuzz target in the module, FUZZTIME each (default 60s); a Go 1.26
# fuzzing-engine flake at the -fuzztime boundary is retried (see the script).
fuzz:
	@GO=$(GO) bash scripts/fuzz.sh $(FUZZTIME)

# Whole-corpus benchmark: see bench/README.md. Then the targets against
# ClickHouse (CASES=perf: issue 28's and 46's, 5 interleaved rounds, into
# bench/work/RESULTS-perf.md) and the auditor's bench (bench/audit.sh:
# audit against a full rerun over 30 nights, 1M receipts), alone with
# make bench-audit.
bench: build
	bash bench/run.sh
	CASES=perf RUNS=$${PERF_RUNS:-5} bash bench/run.sh
	bash bench/audit.sh

bench-audit: build
	bash bench/audit.sh

# Regenerate the bundled sample (deterministic: same bytes every time).
sample: build
	./$(BIN) gen -o testdata/sample.jsonl.zst --conversations 200 --seed 1

clean:
	rm -rf bin $(OUT)
