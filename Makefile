# slogate — make demo runs the main job on the built-in simulator; make test runs the tests.
GO      ?= go
BIN     := bin/slogate
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
COMMIT  ?= $(shell git rev-parse HEAD 2>/dev/null)
LDFLAGS := -X main.version=$(VERSION) -X main.commit=$(COMMIT)

.PHONY: build install demo test vet fuzz load bench peers profiles clean

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/slogate

# Into $(go env GOBIN), else $(go env GOPATH)/bin, as go install does.
install:
	$(GO) install -ldflags "$(LDFLAGS)" ./cmd/slogate

# specs/demo.hcl passes on the simulator, then a 20 % slower "upgrade" is
# caught by -baseline (scripts/demo.sh says what happened; exit 0 = caught).
demo: build
	./scripts/demo.sh ./$(BIN)

vet:
	$(GO) vet ./...

# The statistical rules' error-rate simulations, and the simulator's engine
# run in virtual time over the seeds' cells: one goroutine's arithmetic, in
# which the race detector finds nothing and which it slows about eightfold
# (ratesearch's 165 s under -race, 16 s without). They run
# without -race, beside the rest, which runs with it, at a lower priority
# (nice), so that they take the CPU time the real servers of the e2e tests
# leave (docs/ci.md#test-time; internal/layers checks that each name is one
# test of these packages).
SIMULATIONS     := ^(TestErrorRates|TestPairedErrorRates|TestAnswerPrecision|TestSaturationErrorRates|TestSaturationWithoutWarmUp|TestUnmeasurableSimulation|TestShortfallErrorRates|TestTrafficErrorRates|TestBlocksSimulation|TestCorrectnessErrorRates|TestProfilesReproduceSeeds|TestSlowdownOnTheSeedProfile)$$
SIMULATION_PKGS := ./internal/ratesearch ./internal/measure ./internal/compare ./internal/sim

# -timeout 30m: the suite takes about 11 minutes on 2 cores, and up to
# twice that on a machine other work loads (stress --cpu 2: docs/ci.md).
# Either run failing fails the target; both always run to the end.
test: vet
	nice -n 10 $(GO) test -timeout 30m -run '$(SIMULATIONS)' $(SIMULATION_PKGS) & sims=$$!; \
	$(GO) test -race -timeout 30m -skip '$(SIMULATIONS)' ./...; rc=$$?; \
	wait $$sims || rc=1; exit $$rc

# Each fuzz target briefly (FUZZTIME=60s for a longer look); findings land in
# the package's testdata/fuzz folder and become regression tests. Go's default
# minimisation time (60s) would eat a short run, hence -fuzzminimizetime.
FUZZTIME ?= 10s
FUZZ     = $(GO) test -run '^$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 1s
fuzz:
	$(FUZZ) -fuzz '^FuzzLoad$$' ./internal/spec
	$(FUZZ) -fuzz '^FuzzSSE$$' ./internal/measure/sse
	$(FUZZ) -fuzz '^FuzzMetrics$$' ./internal/engine/vllm
	$(FUZZ) -fuzz '^FuzzPromptField$$' ./internal/sim

# 256 streams against the simulator for 60s (SLOGATE_LOAD_WINDOW=20s shortens
# it): no errors, goroutines back to baseline, flat memory.
load:
	SLOGATE_LOAD=1 $(GO) test -count=1 -run TestLoad -v -timeout 15m ./e2e

# Regenerate the simulator's profiles from the seed reports.
profiles:
	$(GO) generate ./internal/sim

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# slogate beside vllm bench serve on one real vLLM (its CPU build: run
# scripts/vllm-setup.sh first); docs/performance.md has the table.
peers:
	./scripts/vllm-peers.sh

clean:
	rm -rf bin slogate-out
