# slogate — make demo runs the main job on the built-in simulator; make test runs the tests.
GO      ?= go
BIN     := bin/slogate
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)

.PHONY: build demo test vet fuzz bench profiles clean

build:
	$(GO) build -ldflags "-X main.version=$(VERSION)" -o $(BIN) ./cmd/slogate

demo: build
	./$(BIN) run -sim specs/demo.hcl

vet:
	$(GO) vet ./...

test: vet
	$(GO) test -race -timeout 20m ./...

# Each fuzz target briefly (FUZZTIME=60s for a longer look); findings land in
# the package's testdata/fuzz folder and become regression tests.
FUZZTIME ?= 10s
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzLoad$$' -fuzztime $(FUZZTIME) ./spec
	$(GO) test -run '^$$' -fuzz '^FuzzSSE$$' -fuzztime $(FUZZTIME) ./runner/sse
	$(GO) test -run '^$$' -fuzz '^FuzzMetrics$$' -fuzztime $(FUZZTIME) ./runner/promread
	$(GO) test -run '^$$' -fuzz '^FuzzPromptField$$' -fuzztime $(FUZZTIME) ./sim

# Regenerate the simulator's profiles from the seed reports.
profiles:
	$(GO) generate ./sim

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

clean:
	rm -rf bin slogate-out
