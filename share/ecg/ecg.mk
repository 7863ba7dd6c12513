# ecg.mk -- build ONNX models with the ecg tools from your own Makefile.
#
# Installed as PREFIX/share/ecg/ecg.mk by `make install`; in the source tree it is
# share/ecg/ecg.mk and finds the tools in bin/.  Set ECG_MODELS (and the per-model
# variables) before the include, then `make -j` builds every model's library:
#
#     ECG_MODELS = mobilenet_v2 bert_tiny
#     mobilenet_v2_SHAPES = input=1x3x224x224
#     mobilenet_v2_STAGES = ecg-rewrite ecg-fuse
#     include /usr/local/share/ecg/ecg.mk
#
# For each model NAME of ECG_MODELS:
#
#   NAME_ONNX          the ONNX file (default NAME.onnx)
#   NAME_SHAPES        onnx2ecg --input-shape values, space separated (input=1x3x224x224 ...)
#   NAME_ONNX2ECG_FLAGS  more onnx2ecg options
#   NAME_STAGES        the ECG -> ECG stages, in order, by tool name (ecg-rewrite ecg-fuse);
#                      default none: the graph goes from onnx2ecg straight to ecg-lower
#   NAME_<stage>_FLAGS options of one stage, e.g. NAME_ecg-fuse_FLAGS = --plan fixed --intensive
#   NAME_LOWER_FLAGS   more ecg-lower options (--arch aarch64, ...); the symbol prefix is NAME,
#                      so NAME must be a C identifier
#
# and, for every model, ECG_DIR_GOALS: more goals of the lowered directories' Makefiles to
# build with the library (e.g. `all`: also libNAME.so and the runner ecg-bench uses).
# CC, MARCH and CFLAGS from the environment or the command line reach those Makefiles.
#
# and it builds, under ECG_BUILD (default build):
#
#   ECG_BUILD/NAME.import.ecg   onnx2ecg's output
#   ECG_BUILD/NAME.ecg          after the stages
#   ECG_BUILD/NAME/             the lowered directory (tools/lower/LOWERED.md: model.h, model.c,
#                               runtime, weights.bin, Makefile)
#   ECG_BUILD/NAME/libNAME.a    the library, built by that directory's own Makefile
#
# Targets: ecg-all (the default goal when nothing comes before the include: every library),
# NAME (one model's library), ecg-clean.  $(ECG_LIBS) lists the libraries and
# $(call ecg_lib,NAME) names one, for a link line:
#
#     app: app.c $(ECG_LIBS)
#             $(CC) -fopenmp -I$(ECG_BUILD)/NAME app.c $(ECG_LIBS) -lm -o $@
#
# Rebuilds follow what changed: the ONNX file or the onnx2ecg options rebuild everything
# of that model; the stages or their options rebuild from the stages on; ecg-lower options
# re-lower; each step's full command is kept in ECG_BUILD/NAME.*.cmd and a step runs again
# only when its inputs are newer or its command differs.  Option values must not contain
# single quotes.  Every step writes to a temporary name and renames, so a failing tool
# leaves no partial output.

ECG_MK_DIR := $(patsubst %/,%,$(dir $(abspath $(lastword $(MAKEFILE_LIST)))))
# PREFIX/share/ecg/ecg.mk -> PREFIX/bin (also the source tree: share/ecg -> bin)
ECG_BIN ?= $(abspath $(ECG_MK_DIR)/../../bin)
ECG_BUILD ?= build
ECG_MODELS ?=
ECG_DIR_GOALS ?=

ecg_lib = $(ECG_BUILD)/$(1)/lib$(1).a
ECG_LIBS = $(foreach m,$(ECG_MODELS),$(call ecg_lib,$(m)))

.PHONY: ecg-all ecg-clean ecg-FORCE
ecg-all: $(ECG_LIBS)

# The command of each step, as text (the .cmd stamps compare it).
ecg_onnx = $(or $($(1)_ONNX),$(1).onnx)
ecg_import_cmd = $(ECG_BIN)/onnx2ecg $(call ecg_onnx,$(1)) $(foreach s,$($(1)_SHAPES),--input-shape $(s)) $($(1)_ONNX2ECG_FLAGS)
ecg_stages_cmd = $(foreach s,$($(1)_STAGES),$(ECG_BIN)/$(s) $($(1)_$(s)_FLAGS) ;)
ecg_lower_cmd = $(ECG_BIN)/ecg-lower --prefix $(1) $($(1)_LOWER_FLAGS)

# ecg_stamp,FILE,TEXT: rewrite FILE only when TEXT differs (make then sees it as newer).
ecg_stamp = @mkdir -p $(dir $(1)) && printf '%s\n' '$(2)' | cmp -s - $(1) || printf '%s\n' '$(2)' > $(1)

$(ECG_BUILD)/%.import.cmd: ecg-FORCE
	$(call ecg_stamp,$@,$(call ecg_import_cmd,$*))
$(ECG_BUILD)/%.stages.cmd: ecg-FORCE
	$(call ecg_stamp,$@,$(call ecg_stages_cmd,$*))
$(ECG_BUILD)/%.lower.cmd: ecg-FORCE
	$(call ecg_stamp,$@,$(call ecg_lower_cmd,$*))
.PRECIOUS: $(ECG_BUILD)/%.import.cmd $(ECG_BUILD)/%.stages.cmd $(ECG_BUILD)/%.lower.cmd \
           $(ECG_BUILD)/%.import.ecg $(ECG_BUILD)/%.ecg $(ECG_BUILD)/%/model.h

.SECONDEXPANSION:
# .onnx -> .import.ecg
$(ECG_BUILD)/%.import.ecg: $$(call ecg_onnx,$$*) $(ECG_BUILD)/%.import.cmd
	$(call ecg_import_cmd,$*) -o $@

# .import.ecg -> (NAME_STAGES, each reading the previous file) -> .ecg
$(ECG_BUILD)/%.ecg: $(ECG_BUILD)/%.import.ecg $(ECG_BUILD)/%.stages.cmd
	@rm -f $@.tmp $@.tmp2; cp $< $@.tmp
	$(foreach s,$($*_STAGES),$(ECG_BIN)/$(s) $($*_$(s)_FLAGS) $@.tmp -o $@.tmp2 && mv $@.tmp2 $@.tmp && ) \
	  mv $@.tmp $@ || { rm -f $@.tmp $@.tmp2; exit 1; }

# .ecg -> the lowered directory (ecg-lower owns only the files of its manifest)
$(ECG_BUILD)/%/model.h: $(ECG_BUILD)/%.ecg $(ECG_BUILD)/%.lower.cmd
	$(call ecg_lower_cmd,$*) $< -o $(ECG_BUILD)/$*

# the lowered directory -> its library, with the directory's own Makefile
define ecg_model_rules
$(call ecg_lib,$(1)): $(ECG_BUILD)/$(1)/model.h
	$$(MAKE) -C $(ECG_BUILD)/$(1) lib$(1).a $$(ECG_DIR_GOALS)
.PHONY: $(1)
$(1): $(call ecg_lib,$(1))
endef
$(foreach m,$(ECG_MODELS),$(eval $(call ecg_model_rules,$(m))))

ecg-clean:
	rm -rf $(foreach m,$(ECG_MODELS),$(ECG_BUILD)/$(m) $(ECG_BUILD)/$(m).*ecg $(ECG_BUILD)/$(m).*.cmd)
