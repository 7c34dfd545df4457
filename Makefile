# slogate — make demo runs the main job on the built-in simulator; make test runs the tests.
GO      ?= go
BIN     := bin/slogate
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)

.PHONY: build demo test vet fuzz bench clean

build:
	$(GO) build -ldflags "-X main.version=$(VERSION)" -o $(BIN) ./cmd/slogate

demo: build
	./$(BIN) run -sim specs/demo.hcl

vet:
	$(GO) vet ./...

test: vet
	$(GO) test -race -timeout 20m ./...

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

clean:
	rm -rf bin slogate-out
