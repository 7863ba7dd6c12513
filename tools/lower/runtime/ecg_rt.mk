# ecg_rt.mk: the ecg runtime library, built once per configuration and shared by every
# lowered directory (tools/lower/LOWERED.md, "The runtime library"). ecg-lower copies it
# into each lowered directory, whose Makefile sets CC and CFLAGS and then includes it.
# Alone, `make -f ecg_rt.mk ecg-rt` finds or builds the library for the current CC and
# CFLAGS and prints its path (the repository's `make runtime` does that).
#
#   ECG_RT_CACHE  where built runtime libraries are kept, one folder per configuration
#                 (default $XDG_CACHE_HOME/ecg/runtime, else $HOME/.cache/ecg/runtime);
#                 set it empty to compile the runtime in this directory every time.
#
# A configuration is the hash of: the runtime sources here (ecg_*.c, ecg_*.h), $(CC) and
# the flags, the compiler's --version, and its predefined macros under these flags
# (`-dM -E`: the ISA that -march selects, OpenMP, the target). Its folder,
# $(ECG_RT_CACHE)/<target triple>-<16 hex digits>, holds libecg_rt.a and config.txt.
# RT_LIB is the library to link: the cached one when it exists; otherwise libecg_rt.a is
# compiled here from the sources and then copied into the cache: a temporary file renamed
# into place, so a concurrent build never sees a partial library (two concurrent first
# builds both compile; the last rename wins, with the same bytes). A cache that cannot be
# written costs a note on stderr, never the build. Whatever library is linked, the model
# checks at create time that it was built from the same sources for the same ISA
# (ecg_rt.h, ecg_rt1_build_id): a mismatch is an error, never wrong outputs.

MARCH ?= native
CFLAGS ?= -O3 -march=$(MARCH) -fopenmp
# Always on: value semantics are unchanged (no code reads errno or FP exception flags), and
# they let selects and sqrt vectorise.
ECG_CFLAGS = -fno-math-errno -fno-trapping-math
# Position-independent, so one build serves static archives, executables and shared
# libraries; no semantic interposition, so calls inside the runtime still inline.
RT_CFLAGS = $(CFLAGS) $(ECG_CFLAGS) -fPIC -fno-semantic-interposition
RT_SRCS := $(sort $(filter-out runner_main.c,$(wildcard ecg_*.c)))
RT_HDRS := $(sort $(wildcard ecg_*.h))
RT_OBJS := $(RT_SRCS:.c=.o)
ECG_RT_CACHE ?= $(if $(XDG_CACHE_HOME),$(XDG_CACHE_HOME),$(HOME)/.cache)/ecg/runtime

ifneq ($(strip $(ECG_RT_CACHE)),)
RT_CONFIG := $(shell $(CC) -dumpmachine 2>/dev/null)-$(shell { cat $(RT_SRCS) $(RT_HDRS); echo $(CC) $(RT_CFLAGS); \
  $(CC) --version; $(CC) $(RT_CFLAGS) -dM -E -x c /dev/null | LC_ALL=C sort; } 2>/dev/null | \
  { sha256sum 2>/dev/null || cksum; } | cut -c1-16)
RT_CACHED := $(wildcard $(ECG_RT_CACHE)/$(RT_CONFIG)/libecg_rt.a)
endif
RT_LIB := $(if $(RT_CACHED),$(RT_CACHED),libecg_rt.a)

$(RT_OBJS): %.o: %.c $(RT_HDRS)
	$(CC) $(RT_CFLAGS) -c $< -o $@

libecg_rt.a: $(RT_OBJS)
	rm -f $@ && ar rcs $@ $(RT_OBJS)
ifneq ($(strip $(ECG_RT_CACHE)),)
	@d='$(ECG_RT_CACHE)/$(RT_CONFIG)'; t="$$d/.tmp$$$$"; \
	if mkdir -p "$$d" 2>/dev/null && \
	   { echo "cc: $(CC) $(RT_CFLAGS)"; $(CC) --version 2>/dev/null | head -n 1; \
	     sed -n 's/^#define ECG_RT_SOURCE_ID "\(.*\)"/sources: \1/p' ecg_rt_id.h; } > "$$t.txt" 2>/dev/null && \
	   mv -f "$$t.txt" "$$d/config.txt" && cp $@ "$$t.a" 2>/dev/null && mv -f "$$t.a" "$$d/libecg_rt.a"; then :; \
	else rm -f "$$t.txt" "$$t.a"; echo "ecg_rt.mk: note: cannot write the runtime cache $$d (ECG_RT_CACHE); the runtime is built in each directory" >&2; fi
endif

ecg-rt: $(RT_LIB)
	@c='$(ECG_RT_CACHE)/$(RT_CONFIG)/libecg_rt.a'; \
	if [ -n '$(RT_CONFIG)' ] && [ -f "$$c" ]; then echo "$$c"; else echo '$(abspath $(RT_LIB))'; fi

.PHONY: ecg-rt
