# Build the kernels (clang-19, no vendor SDK) and the harness (CGO_ENABLED=0).
#   make kernels   families/*/*.hip -> build/sm_90a/*.ptx and build/gfx1201/*.co
#   make bin       bin/parharness
#   make test      kernels, gofmt, vet, staticcheck, go mod tidy -diff, go test ./...,
#                  then the quick suite (no GPU needed)
CLANG   ?= clang++-19
GO      ?= go
# staticcheck, fetched and built by `go run` from the module proxy (CI
# reaches it), pinned so every run checks the same rules.
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
SRC     := $(wildcard families/*/*.hip)
HDR     := $(wildcard hipsrc/*/*.h)
PTX     := $(foreach s,$(SRC),build/sm_90a/$(basename $(notdir $(s))).ptx)
CO      := $(foreach s,$(SRC),build/gfx1201/$(basename $(notdir $(s))).co)
vpath %.hip $(sort $(dir $(SRC)))
NVFLAGS := -x cuda --cuda-gpu-arch=sm_90a --cuda-device-only -nocudainc -nocudalib --cuda-feature=+ptx84 -O3 -ffp-contract=off -S -Ihipsrc -Wall -Werror
AMDFLAGS:= -x hip --offload-arch=gfx1201 --cuda-device-only --no-gpu-bundle-output -nogpuinc -nogpulib -O3 -ffp-contract=off -Ihipsrc -Wall -Werror

.PHONY: all kernels bin test clean
all: kernels bin

kernels: $(PTX) $(CO)

build/sm_90a/%.ptx: %.hip $(HDR)
	@mkdir -p $(@D)
	$(CLANG) $(NVFLAGS) $< -o $@.tmp && mv $@.tmp $@

build/gfx1201/%.co: %.hip $(HDR)
	@mkdir -p $(@D)
	$(CLANG) $(AMDFLAGS) $< -o $@.tmp && mv $@.tmp $@

bin: 
	CGO_ENABLED=0 $(GO) build -buildvcs=auto -o bin/parharness ./cmd/parharness

# The README's test command: build the kernels, run every Go test (no GPU
# needed), then the quick gate suite (device gates SKIP without a GPU).
test: kernels
	@out=$$("$$($(GO) env GOROOT)/bin/gofmt" -l .) && if [ -n "$$out" ]; then echo "gofmt -l lists:"; echo "$$out"; exit 1; fi
	CGO_ENABLED=0 $(GO) vet ./...
	CGO_ENABLED=0 $(GO) run $(STATICCHECK) ./...
	$(GO) mod tidy -diff
	CGO_ENABLED=0 $(GO) test ./...
	scripts/run.sh --quick

clean:
	rm -rf build bin
