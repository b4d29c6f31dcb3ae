# Linoone. `make run` serves locally; `make test` is what CI runs.
SHELL := /bin/bash
GO ?= go
GOBIN ?= $(shell $(GO) env GOPATH)/bin
export PATH := $(GOBIN):$(PATH)
# Terraform warns on every command when TF_CLI_CONFIG_FILE names a missing file; we
# need no CLI configuration (fmt only), so an unset or dangling one becomes /dev/null.
ifeq ($(wildcard $(TF_CLI_CONFIG_FILE)),)
export TF_CLI_CONFIG_FILE := /dev/null
endif

LAMBDAS := issue resolve replay
LAMBDA_FLAGS := -tags lambda.norpc -trimpath -buildvcs=false -ldflags='-s -w -buildid='

.PHONY: all generate build check test test-unit lint spec-lint fmt-check run bench soak fuzz e2e-aws tools clean screenshot

all: lint test

## generate: regenerate api/ from openapi.yaml (oapi-codegen, one cfg per output), the
## TypeScript client's types (openapi-typescript), the capacity model's Terraform
## defaults and docs/capacity.md, and docs/configuration.md from internal/app/config
generate:
	$(GO) generate ./api/...
	scripts/install-npm-tools.sh
	npm --prefix clients/typescript run --silent generate
	$(GO) generate ./internal/ops/capacity
	$(GO) generate ./internal/app/config

## build: the linoone binary and dist/{issue,resolve,replay}.zip (arm64 Lambda bootstraps)
build: bin/linoone $(LAMBDAS:%=dist/%.zip)

# Rebuilt only when a source it can embed or compile changed (make run starts at once
# on an unchanged tree); go build's own cache keeps a rebuild short.
LINOONE_SRC := go.mod go.sum openapi.yaml openapi.go $(shell find api cmd internal -type f -not -name '*_test.go' -not -path '*/testdata/*' 2>/dev/null)
bin/linoone: $(LINOONE_SRC)
	$(GO) build -trimpath -buildvcs=auto -o $@ ./cmd/linoone

dist/%.zip: FORCE
	@mkdir -p dist/$*
	GOOS=linux GOARCH=arm64 CGO_ENABLED=0 $(GO) build $(LAMBDA_FLAGS) -o dist/$*/bootstrap ./lambdas/$*
	scripts/zip-bootstrap.sh dist/$*/bootstrap $@

## tools: what the tests need besides Go, curl and terraform: tflint and the Lambda
## runtime interface emulator, built from pinned versions into GOBIN, and the npm
## packages of both package-lock.json files (idempotent)
tools:
	scripts/install-tflint.sh >/dev/null
	scripts/install-rie.sh >/dev/null
	scripts/install-npm-tools.sh

## test: lint, unit, contract, end-to-end, RIE and local terratest suites; every fuzz
## target runs on its seeds and saved inputs. No new inputs: a verdict that hangs on
## what a fuzzer happens to try in a few seconds is not one (make fuzz does that).
test: tools lint
	$(GO) test -race -count=1 -timeout 15m ./...
	cd test && $(GO) test -count=1 -timeout 10m ./...

## check: the contributor's quick loop, under a minute on a warm cache: gofmt, go vet,
## staticcheck and go test -short (the end-to-end, emulator, browser and Lambda build
## tests skip, saying so; make test runs everything)
check: fmt-check
	$(GO) vet ./...
	$(GO) tool staticcheck ./...
	$(GO) test -short -count=1 ./...

## lint: gofmt, go vet (also for Windows and macOS, and -tags netresolver), staticcheck, generated code drift,
## both OpenAPI linters (Redocly recommended, Spectral spectral:oas), terraform fmt, tflint
lint: fmt-check tools spec-lint
	$(GO) vet ./...
	GOOS=windows $(GO) vet ./...
	GOOS=darwin $(GO) vet ./...
	$(GO) vet -tags netresolver ./internal/app/serve  # the resolver on net/http, for make bench
	$(GO) tool staticcheck ./...
	cd test && $(GO) vet ./... && $(GO) vet -tags aws ./...
	scripts/check-generated.sh
	terraform fmt -check -recursive terraform
	tflint --chdir=terraform --recursive --config="$(CURDIR)/.tflint.hcl"

## spec-lint: openapi.yaml against Redocly's recommended rules (accepted findings in
## .redocly.lint-ignore.yaml) and Spectral's spectral:oas, warnings included
spec-lint:
	scripts/install-npm-tools.sh
	REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true npx --no-install redocly lint --format=codeframe openapi.yaml
	npx --no-install spectral lint --ruleset .spectral.yaml --fail-severity=warn openapi.yaml

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

## fuzz: fuzz every target for FUZZTIME (FUZZTIME=5m for a longer run); a failing
## input is saved under the package's testdata/fuzz, where make test then runs it
FUZZTIME ?= 10s
fuzz:
	scripts/fuzz.sh $(FUZZTIME)

## run: serve everything locally on loopback (data in ./.linoone); Ctrl-C drains serve
## and make exits 0. On a terminal the recipe's shell turns on job control (set -m):
## serve runs as the terminal's foreground process group, so Ctrl-C reaches serve
## alone, and make sees it exit 0 (GNU make that gets the SIGINT itself dies of it, or
## prints "*** wait: No child processes"). Without a terminal serve stays in make's
## process group, so a SIGINT sent to that group still reaches it.
run: bin/linoone
	@if [ -t 0 ]; then set -m; bin/linoone serve; else exec bin/linoone serve; fi

## soak: a default serve on a fresh data dir driven with SOAK_CLICKS redirects (loopback,
## at most SOAK_MAX_TIME), printing the data dir by part and each process's RSS every
## SOAK_EVERY clicks (tools/soak), then whether the data dir's budget and flat RSS held;
## SOAK_FLAGS passes more (-drain 2m, -settle 30s, -serve-log FILE, -keep)
SOAK_CLICKS ?= 2000000
SOAK_EVERY ?= 250000
SOAK_MAX_TIME ?= 30m
SOAK_FLAGS ?=
soak: bin/linoone
	$(GO) run ./tools/soak -bin bin/linoone -clicks $(SOAK_CLICKS) -every $(SOAK_EVERY) -max-time $(SOAK_MAX_TIME) $(SOAK_FLAGS)

## bench: Go benchmarks, then the click path against its floors in one pinned run
## (scripts/bench.sh), then each Lambda's init and zip size (scripts/bench-lambda-init.sh)
BENCHTIME ?= 500ms
bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime=$(BENCHTIME) ./internal/... ./cmd/...
	scripts/bench.sh
	scripts/bench-lambda-init.sh 5

## screenshot: docs/images/console-link.png, the README's image of the console's Link
## page: a serve seeded with a month of clicks from several browsers, in Chromium at
## 1200×800 (TestConsoleLinkScreenshot; needs what the browser tests need)
screenshot:
	$(GO) test -count=1 -run '^TestConsoleLinkScreenshot$$' ./cmd/linoone -screenshot

## e2e-aws: the terratest suite against a real sandbox stack (needs AWS credentials)
e2e-aws:
	cd test && LINOONE_TEST_AWS_REQUIRED=1 $(GO) test -tags aws -count=1 -timeout 60m ./...

clean:
	rm -rf bin dist

FORCE:
