# The only build entry point. `make help` lists every target.
#
# Steps are the NN_topic folders; each holds one NN_topic/topic.cu, built into
# build/NN_topic. Adding a step means adding its folder, nothing here.

# The CUDA toolkit: `make CUDA_HOME=/opt/cuda-13.0` names one, and its nvcc
# builds; otherwise nvcc from PATH, else $CUDA_HOME/bin/nvcc (CUDA_HOME from
# the environment, else /usr/local/cuda). `make NVCC=/path/to/nvcc` names the
# compiler itself.
CUDA_HOME ?= /usr/local/cuda
ifeq ($(origin CUDA_HOME),command line)
FOUND_NVCC := $(CUDA_HOME)/bin/nvcc
else
FOUND_NVCC := $(if $(shell command -v nvcc 2>/dev/null),nvcc,$(CUDA_HOME)/bin/nvcc)
endif
NVCC      ?= $(FOUND_NVCC)
# The Hopper target. Only `make ARCH=...` changes it: an ARCH variable in the
# environment (a common name) is ignored.
ifneq ($(origin ARCH),command line)
ARCH := -gencode arch=compute_90a,code=sm_90a
endif
# Your own extra flags, added after the required ones, which they cannot drop:
# make NVCCFLAGS="-DCOPY_STAGES=8" build-04
NVCCFLAGS ?=
# Bound of every mbarrier wait, in ns of wall-clock time (its default is in
# common/tutorial.cuh; 0 = unbounded, as production code would wait).
MBAR_TIMEOUT_NS ?=
# Required flags: all warnings on, none hidden (host compiler -Wall -Wextra,
# ptxas reports spills and local memory); --resource-usage writes every
# kernel's registers and shared memory into the build log (lessons quote it);
# -I. lets every include name its path from the repository root.
TUTORIAL_FLAGS := -O3 -lineinfo -std=c++17 $(ARCH) -I. -Xcompiler -Wall,-Wextra \
                  -Xptxas -warn-spills,-warn-lmem-usage --resource-usage \
                  $(if $(MBAR_TIMEOUT_NS),-DMBAR_TIMEOUT_NS=$(MBAR_TIMEOUT_NS)ull)
# SHADOW=1: the protocol checker (common/shadow/). The steps are built into
# build/shadow/ with -DTUTORIAL_SHADOW: the wrappers also hand the checker
# what CUDA's Sanitizer API cannot see (common/shadow/hooks.h); check-NN then
# runs them under the checker's tool, which sees everything else in the
# machine code and stops at the first broken rule of the PTX ISA. Slow, and
# its timings mean nothing: its check ignores the PERF floors. The normal
# build's machine code does not change with it (tests/test_shadow.py). The
# twins have no hooks: make shadow-NN runs their normal build under the tool.
SHADOW ?=
SHADOW_FLAG := $(if $(filter 1,$(SHADOW)),-DTUTORIAL_SHADOW)
ALL_FLAGS := $(TUTORIAL_FLAGS) $(SHADOW_FLAG) $(NVCCFLAGS)

PYTHON    ?= python3
VENV      ?= .venv
VPY       := $(VENV)/bin/python
BUILD     := build$(if $(SHADOW_FLAG),/shadow)
ARGS      ?=
# Seconds a checked run may take before the checker calls it hung.
CHECK_TIMEOUT ?= 600
# The lab bundle (`make lab-dist`, unpacked) marks itself with .lab-bundle: there
# the step folders are the student's own copies, so `make grade-NN` grades them
# where they are, and the targets that need the full tutorial say so.
BUNDLE := $(wildcard .lab-bundle)
# Where `make lab-NN` writes a student copy and `make grade-NN` grades it.
LAB ?= $(if $(BUNDLE),.,labs)
BUNDLE_NOTE := This is the lab bundle: bug-NN, lab-NN, lab-dist, bench, results-table, test, test-all, mutation, notebooks, and experiments need the full tutorial.
# The first line of every target that needs the full tutorial: in the bundle it stops with a reason.
# (The per-step rules name it $$(FULL_ONLY): expanded when the recipe runs, $@ is the target's name.)
FULL_ONLY = $(if $(BUNDLE),@echo "make $@: not part of the lab bundle (it needs the full tutorial: results/, tests/, notebooks/, bugs/)"; exit 2)

STEP_DIRS := $(sort $(wildcard [0-9][0-9]_*))
# The checker's options for this build: its binary, and no floors in the shadow build.
checker_build = $(if $(SHADOW_FLAG),--binary $(BUILD)/$(1) --shadow)
STEPS     := $(foreach d,$(STEP_DIRS),$(firstword $(subst _, ,$(d))))
BINARIES  := $(addprefix $(BUILD)/,$(STEP_DIRS))
# The flags a binary was built with: rewritten only when they change, so that
# `make MBAR_TIMEOUT_NS=0` or new NVCCFLAGS rebuild what they affect.
FLAGS_STAMP := $(BUILD)/flags.txt

.DEFAULT_GOAL := all
.DELETE_ON_ERROR:
SHELL := /bin/bash

.PHONY: all check shadow sanitize bench test test-all notebooks results-table venv grader-tools help clean mutation \
        lab-dist grade-class

# Numbers given to make are checked before anything is built or run: one line naming the rule, exit 2.
not_digits = $(subst 9,,$(subst 8,,$(subst 7,,$(subst 6,,$(subst 5,,$(subst 4,,$(subst 3,,$(subst 2,,$(subst \
             1,,$(subst 0,,$(1)))))))))))
is_whole = $(if $(1),$(if $(call not_digits,$(1)),,yes))
$(if $(call is_whole,$(CHECK_TIMEOUT)),,$(error CHECK_TIMEOUT=$(CHECK_TIMEOUT) is not a whole number of seconds))
$(if $(MBAR_TIMEOUT_NS),$(if $(call is_whole,$(MBAR_TIMEOUT_NS)),,$(error MBAR_TIMEOUT_NS=$(MBAR_TIMEOUT_NS) is \
  not a whole number of nanoseconds (0: unbounded))))
# A per-step target for a step there is not (make check-11, make build-1, make lab-11):
PER_STEP_TARGETS := build run check shadow sass sanitize profile lab grade bug compile-command
$(foreach g,$(filter $(addsuffix -%,$(PER_STEP_TARGETS)),$(filter-out lab-dist grade-class shadow-tool shadow-probe \
  $(foreach t,$(PER_STEP_TARGETS),$(addprefix $(t)-,$(STEPS))),$(MAKECMDGOALS))),$(error make $(g): there is no \
  step $(lastword $(subst -, ,$(g))): NN is one of $(STEPS)))
# The values a target is given, checked where it runs (a dry run, make -n, only shows its commands):
# bug-NN's N, one of the step's planted mistakes (NN_topic/bugs/N.diff);
DRY_RUN := $(findstring n,$(firstword -$(MAKEFLAGS)))
bug_numbers = $(shell ls $(1)/bugs 2>/dev/null | sed -n 's/\.diff$$//p' | sort -n)
$(foreach g,$(if $(DRY_RUN),,$(if $(N),$(filter $(addprefix bug-,$(STEPS)),$(MAKECMDGOALS)))),$(if $(filter 1,$(words $(N))),$(if \
  $(filter $(N),$(call bug_numbers,$(filter $(subst bug-,,$(g))_%,$(STEP_DIRS)))),,$(error make $(g): N=$(N) is \
  not one of step $(subst bug-,,$(g))'s planted mistakes: N is one of $(call bug_numbers,$(filter \
  $(subst bug-,,$(g))_%,$(STEP_DIRS))))),$(error make $(g): N=$(N) is not one number)))
# grade-class's NN and DIR.
GRADE_CLASS_USAGE := make grade-class NN=03 DIR=submissions/
$(if $(filter grade-class,$(if $(DRY_RUN),,$(MAKECMDGOALS))),$(if $(NN),$(if $(filter $(NN),$(STEPS)),,$(error make grade-class: \
  NN=$(NN) is not a step: NN is one of $(STEPS))),$(error make grade-class: NN is missing: NN is one of $(STEPS) \
  ($(GRADE_CLASS_USAGE)))))
$(if $(filter grade-class,$(if $(DRY_RUN),,$(MAKECMDGOALS))),$(if $(DIR),,$(error make grade-class: DIR is missing \
  ($(GRADE_CLASS_USAGE)))))

# A command between $(WATCH_77) and $(SAY_77) runs as usual, its stderr also kept in $(BUILD)/TARGET.stderr.
# Its exit 77 means that it cannot run here (no Hopper GPU, ...): then the last line says SKIP and why (the
# first line the command wrote to stderr: the program's own reason), and make still fails: a skip is never
# a pass.
WATCH_77 = mkdir -p $(BUILD); set -o pipefail; {
SAY_77 = 2>&1 1>&3 3>&- | tee $(BUILD)/$@.stderr 1>&2; } 3>&1; code=$$?; if [ $$code = 77 ]; then \
  echo "make $@: SKIP (exit 77): $$(head -n 1 $(BUILD)/$@.stderr)"; fi; exit $$code

# The twins (NN_topic/twins/*.cu, in the steps that teach an instruction): the
# step's key kernels again through CCCL (cuda::ptx, cuda::memcpy_async, ...)
# and CuTe, one program per step, built into build/twins/NN_topic with the
# steps' flags plus CuTe's headers, which come from the pinned nvidia-cutlass
# package in .venv (installed by the first build that needs them, 6 MB:
# requirements/twins.txt; CUTE_INCLUDE=DIR, on the command line or in the
# environment, names another copy instead), and --expt-relaxed-constexpr,
# which CuTe's constexpr functions need.
# make check-NN runs a step's twins after the step.
TWIN_DIRS := $(if $(SHADOW_FLAG),,$(sort $(patsubst %/,%,$(dir $(wildcard [0-9][0-9]_*/twins/*.cu)))))
TWIN_BINS := $(patsubst %/twins,$(BUILD)/twins/%,$(TWIN_DIRS))
ifneq ($(origin CUTE_INCLUDE),undefined)
CUTE_NEEDS :=
else
# $(shell), not $(wildcard): make caches the directories it has listed, and
# .venv may be installed by this very run, after the first listing.
CUTE_INCLUDE = $(firstword $(shell ls -d $(VENV)/lib/python3*/site-packages/cutlass_library/source/include 2>/dev/null))
CUTE_NEEDS := $(VENV)/.installed-twins
endif
TWIN_FLAGS = --expt-relaxed-constexpr -isystem $(CUTE_INCLUDE)
# cuobjdump and nvdisasm, which sass-NN reads the machine code with (tools/sass.py looks on PATH, in the
# toolkit, then in .venv): installed into .venv (requirements/sass.txt, 5 MB) only where PATH and the
# toolkit lack one of them; tools/sass.py then runs with the venv's Python, which knows where they are.
SASS_TOOLS_HERE := $(shell for t in cuobjdump nvdisasm; do command -v $$t || test -x $(CUDA_HOME)/bin/$$t || exit 1; \
                     done > /dev/null && echo yes)
SASS_NEEDS := $(if $(SASS_TOOLS_HERE),,$(VENV)/.installed-sass)
SASS_PYTHON = $(if $(SASS_NEEDS),$(VPY),$(PYTHON))
# A step folder and its twins folder, if it has one; the twins' binary.
with_twins = $(1) $(filter $(1)/twins,$(TWIN_DIRS))
twin_bin = $(patsubst %/twins,$(BUILD)/twins/%,$(filter $(1)/twins,$(TWIN_DIRS)))
# In a shell loop over such folders: n, the name a summary line gives folder d (03, 03/twins).
LABEL = n=$${d%%_*}; case $$d in */twins) n=$$n/twins;; esac

all: $(BINARIES) $(TWIN_BINS)

# Compared while the Makefile is read. A dry run (make -n) writes nothing: it
# only shows the rebuild that new flags would cause.
FLAGS_CHANGED := $(shell echo '$(ALL_FLAGS)' | cmp -s - $(FLAGS_STAMP) 2>/dev/null || echo yes)
ifneq ($(findstring n,$(firstword -$(MAKEFLAGS))),)
ifeq ($(FLAGS_CHANGED),yes)
.PHONY: $(FLAGS_STAMP)
endif
else ifeq ($(FLAGS_CHANGED),yes)
$(shell mkdir -p $(BUILD) && echo '$(ALL_FLAGS)' > $(FLAGS_STAMP))
endif

# Libraries a step links, from its check.py's build facts (06 links cuBLAS),
# found at run time in the toolkit the program was built with. Asked of
# tools/contract.py (their one reader) once per make run, at first use: every
# linking step as one word, NN_topic=-lx|-ly.
STEP_LINKS = $(eval STEP_LINKS := $(shell $(PYTHON) tools/contract.py links))$(STEP_LINKS)
with_rpath = $(if $(1),$(1) -Xlinker -rpath=$(CUDA_HOME)/lib64)
step_link = $(call with_rpath,$(subst |, ,$(patsubst $(1)=%,%,$(filter $(1)=%,$(STEP_LINKS)))))

# The protocol checker's tool (common/shadow/tool/): a library the CUDA driver
# loads into a program (CUDA_INJECTION64_PATH) and device functions CUDA's
# Sanitizer API patches into its kernels. Its headers and library come from the
# toolkit's compute-sanitizer folder, else from the pinned nvidia-cuda-sanitizer-api
# wheel in .venv (requirements); SANITIZER_HOME=DIR names another copy.
SANITIZER_HOME ?= $(patsubst %/include/sanitizer.h,%,$(firstword $(wildcard $(CUDA_HOME)/compute-sanitizer/include/sanitizer.h $(VENV)/lib/python3*/site-packages/nvidia/cu13/include/sanitizer.h)))
SANITIZER_LIB = $(patsubst %/,%,$(dir $(firstword $(wildcard $(SANITIZER_HOME)/libsanitizer-public.so $(SANITIZER_HOME)/lib/libsanitizer-public.so))))
TOOL := build/shadow_tool
TOOL_CC ?= cc
TOOL_HOST_FLAGS = -std=c11 -O2 -Wall -Wextra -Werror -fPIC -shared -I. -I$(CUDA_HOME)/include -I$(SANITIZER_HOME)/include
# Patch functions: a fatbin of device code the API links into the patched
# kernels (--compile-as-tools-patch, as NVIDIA's compute-sanitizer-samples build theirs).
TOOL_PATCH_FLAGS = --fatbin --compile-as-tools-patch -gencode arch=compute_90,code=sm_90 -O3 -I. -I$(SANITIZER_HOME)/include
need_sanitizer = @test -f "$(SANITIZER_HOME)/include/sanitizer.h" -a -n "$(SANITIZER_LIB)" || { echo "$@: needs CUDA's Sanitizer API headers and library: the toolkit's compute-sanitizer folder, or the nvidia-cuda-sanitizer-api wheel in $(VENV) (make venv installs it: requirements/shadow.txt), or SANITIZER_HOME=DIR"; exit 2; }
$(TOOL)/libshadow_probe.so: common/shadow/tool/probe_inject.c common/shadow/tool/probe_record.h common/shadow/tool/tool_host.h common/shadow/tool/tool_sanitizer.h
	$(need_sanitizer)
	@mkdir -p $(@D)
	$(TOOL_CC) $(TOOL_HOST_FLAGS) -o $@ $< -L$(SANITIZER_LIB) -Wl,-rpath,$(SANITIZER_LIB) -lsanitizer-public -ldl
$(TOOL)/probe_patches.fatbin: common/shadow/tool/probe_patches.cu common/shadow/tool/probe_record.h
	$(need_sanitizer)
	@mkdir -p $(@D)
	$(NVCC) $(TOOL_PATCH_FLAGS) -o $@ -c $<
$(TOOL)/probe_kernels: tests/shadow_proof/probe_kernels.cu $(FLAGS_STAMP)
	@mkdir -p $(@D)
	$(NVCC) $(TUTORIAL_FLAGS) $(NVCCFLAGS) -o $@ $< > $@.log 2>&1 || { cat $@.log; exit 1; }
	@grep -i "warning" $@.log || true
# The checker's tool: the injected library and the patch functions that feed
# the rules (common/shadow/shadow.cuh, core.h). A program runs under it with
# SHADOW_ENV in front of it (make shadow-NN, check-NN SHADOW=1 do).
TOOL_LIB := $(TOOL)/libshadow_tool.so
TOOL_PATCHES := $(TOOL)/shadow_patches.fatbin
SHADOW_STATE := common/shadow/state.h common/shadow/core.h common/shadow/rules.h
$(TOOL_LIB): common/shadow/tool/shadow_tool.c common/shadow/tool/tool_host.h common/shadow/tool/tool_sanitizer.h $(SHADOW_STATE)
	$(need_sanitizer)
	@mkdir -p $(@D)
	$(TOOL_CC) $(TOOL_HOST_FLAGS) -o $@ $< -L$(SANITIZER_LIB) -Wl,-rpath,$(SANITIZER_LIB) -lsanitizer-public -ldl
$(TOOL_PATCHES): common/shadow/tool/shadow_patches.cu common/shadow/shadow.cuh $(SHADOW_STATE)
	$(need_sanitizer)
	@mkdir -p $(@D)
	$(NVCC) $(TOOL_PATCH_FLAGS) -o $@ -c $<
.PHONY: shadow-tool
shadow-tool: $(TOOL_LIB) $(TOOL_PATCHES)
GRADE_TOOL = $(if $(SANITIZER_LIB),$(TOOL_LIB) $(TOOL_PATCHES))
SHADOW_ENV = CUDA_INJECTION64_PATH=$(abspath $(TOOL_LIB)) CUDA_MODULE_LOADING=EAGER LD_LIBRARY_PATH=$(SANITIZER_LIB)
# The sweep's arguments for the tool: where it is and the library it loads.
SWEEP_TOOL = --tool-lib "$(abspath $(TOOL_LIB))" --sanitizer-lib "$(SANITIZER_LIB)"

# Raw PTX nobody annotated (tests/shadow_proof): the normal build, checked by the tool alone.
build/shadow_proof/raw_kernels: tests/shadow_proof/raw_kernels.cu $(FLAGS_STAMP)
	@mkdir -p $(@D)
	$(NVCC) $(TUTORIAL_FLAGS) $(NVCCFLAGS) $< -o $@ > $@.log 2>&1 || { cat $@.log; exit 1; }
	@grep -i "warning" $@.log || true

# The probe (tools/shadow_probe.py): which instructions the API patches, with
# which arguments, in its own program and in every step and twin. Builds here;
# `python3 tools/shadow_probe.py run --out DIR` runs it on a GPU.
.PHONY: shadow-probe
shadow-probe: $(TOOL)/libshadow_probe.so $(TOOL)/probe_patches.fatbin $(TOOL)/probe_kernels $(BINARIES) $(TWIN_BINS)
	@echo "built: $^"
	@echo "on a GPU: python3 tools/shadow_probe.py run --out DIR"

# Per-step targets, generated from the folder list: build-NN run-NN check-NN
# sass-NN sanitize-NN profile-NN. A binary depends on its .cu, on every header
# it includes (nvcc -MD writes the list into build/NN_topic.d) and on the
# flags. The compiler's output goes to build/NN_topic.log (the warnings test
# reads it); the terminal shows the command and any warning.
define STEP_RULES
.PHONY: build-$(1) run-$(1) check-$(1) shadow-$(1) sass-$(1) sanitize-$(1) profile-$(1) lab-$(1) grade-$(1) bug-$(1) compile-command-$(1)
$(BUILD)/$(2): $(wildcard $(2)/*.cu) $(FLAGS_STAMP)
	@echo "$(NVCC) $$(ALL_FLAGS) $$< -o $$@ $(call step_link,$(2))  (log: $$@.log)"
	@$(NVCC) $$(ALL_FLAGS) -MD -MF $$@.d $$< -o $$@ $(call step_link,$(2)) > $$@.log 2>&1 || { cat $$@.log; echo "build of $$@ failed"; exit 1; }
	@$(if $(SHADOW_FLAG),echo "  (the shadow build: $$$$(grep -ci warning $$@.log) ptxas notes on registers and local memory in $$@.log, its checks' own)",grep -i "warning" $$@.log || true)
build-$(1): $(BUILD)/$(2)
run-$(1): $(BUILD)/$(2)
	@echo "./$(BUILD)/$(2) $(ARGS)"; $$(WATCH_77) ./$(BUILD)/$(2) $(ARGS) $$(SAY_77)
check-$(1): $(BUILD)/$(2) $(call twin_bin,$(2)) $(if $(SHADOW_FLAG),shadow-tool)
	@ok=0; rm -f $(BUILD)/$(2).summary; for d in $(call with_twins,$(2)); do \
	  echo "$(if $(SHADOW_FLAG),SHADOW_ENV )$(PYTHON) tools/checker.py $$$$d --timeout $(CHECK_TIMEOUT) $(call checker_build,$(2))"; \
	  $(if $(SHADOW_FLAG),$(SHADOW_ENV) SHADOW_TOOL_SUMMARY=$(BUILD)/$(2).summary) \
	  $(PYTHON) tools/checker.py $$$$d --timeout $(CHECK_TIMEOUT) $$$$(test $$$$d = $(2) && echo "$(call checker_build,$(2))") \
	    || ok=1; done; \
	$(if $(SHADOW_FLAG),if [ $$$$ok = 0 ] && ! grep -q ' CTAs ' $(BUILD)/$(2).summary 2>/dev/null; then \
	  echo "check-$(1) SHADOW=1: FAIL: the checker's tool did not run (no summary in $(BUILD)/$(2).summary): nothing was checked"; ok=1; fi;) \
	exit $$$$ok
# Step NN on --quick under the protocol checker: its build with the hooks,
# and its twins' normal build (no hooks: what the tool alone sees). Passes
# when the tool ran, no rule broke and every check passed; SKIP (77) with no
# GPU; without the Sanitizer API's headers the tool cannot be built (exit 2).
shadow-$(1):
	@$(MAKE) --no-print-directory SHADOW=1 build-$(1)
	@$(if $(call twin_bin,$(2)),$(MAKE) --no-print-directory $(call twin_bin,$(2)))
	@$(MAKE) --no-print-directory shadow-tool > build/shadow/tool.log 2>&1 || { grep -m1 "needs CUDA's Sanitizer API" build/shadow/tool.log || tail -1 build/shadow/tool.log; echo "(the steps' programs still run: a machine without a GPU says so)"; }
	@$(PYTHON) tools/shadow_sweep.py step $(2) $(SWEEP_TOOL) --timeout $(CHECK_TIMEOUT)
sass-$(1): $(BUILD)/$(2) $(call twin_bin,$(2)) $(SASS_NEEDS)
	@ok=0; for d in $(call with_twins,$(2)); do echo "==== $$$$d: each kernel's key instructions (tools/sass.py)"; \
	  $(SASS_PYTHON) tools/sass.py $$$$d || ok=1; done; exit $$$$ok
sanitize-$(1): $(BUILD)/$(2) $(call twin_bin,$(2))
	@ok=0; for d in $(call with_twins,$(2)); do bash tools/sanitize.sh $$$$d || ok=1; done; exit $$$$ok
profile-$(1): $(BUILD)/$(2)
	$(PYTHON) tools/ncu_profile.py $(2)
# Without N: the step's planted mistakes; with N=k: bugs/k.diff applied to a
# copy under build/bugs/, built with these flags, run, and the outcome named.
bug-$(1): $(FLAGS_STAMP)
	$$(FULL_ONLY)
	@$(if $(N),$$(WATCH_77) $(PYTHON) tools/bugs.py run $(2) $(N) --nvcc="$(NVCC) $$(ALL_FLAGS)" --link="$(call step_link,$(2))" --timeout $(CHECK_TIMEOUT) -- $(ARGS) $$(SAY_77),$(PYTHON) tools/bugs.py list $(2))
lab-$(1):
	$$(FULL_ONLY)
	@$(PYTHON) tools/lab.py make $(2) --out $(LAB)
# The grader builds only the copy's student files (its program and parts) against
# this repository's harness and headers, and judges it with this repository's
# check.py (tools/lab.py says why); it finds the step's libraries itself. make's
# own exit status is 0 or 2; tools/lab.py grade's is the verdict's. The
# protocol checker's tool is built first where CUDA's Sanitizer API is found
# (without it a grade that reaches the shadow run is a SKIP, never a pass).
grade-$(1): $(FLAGS_STAMP) $$(GRADE_TOOL)
	@$(PYTHON) tools/lab.py grade $(2) $(LAB) --timeout $(CHECK_TIMEOUT) --nvcc="$(NVCC) $$(ALL_FLAGS)"
# The compiler command and the link flags, one line each (tools/lab.py asks for them).
compile-command-$(1):
	@echo "$(NVCC) $$(ALL_FLAGS)"
	@echo "$(call step_link,$(2))"
endef
$(foreach d,$(STEP_DIRS),$(eval $(call STEP_RULES,$(firstword $(subst _, ,$(d))),$(d))))
-include $(wildcard $(BUILD)/*.d)

define TWIN_RULES
$(BUILD)/twins/$(1): $(wildcard $(1)/twins/*.cu) $(FLAGS_STAMP) | $(CUTE_NEEDS)
	@test -n "$$(CUTE_INCLUDE)" || { echo "$$@: no CuTe headers: run make venv, or give CUTE_INCLUDE=DIR"; exit 2; }
	@mkdir -p $$(@D)
	@echo "$(NVCC) $$(ALL_FLAGS) $$(TWIN_FLAGS) $$< -o $$@  (log: $$@.log)"
	@$(NVCC) $$(ALL_FLAGS) $$(TWIN_FLAGS) -MD -MF $$@.d $$< -o $$@ > $$@.log 2>&1 || { cat $$@.log; echo "build of $$@ failed"; exit 1; }
	@grep -i "warning" $$@.log || true
endef
$(foreach d,$(TWIN_DIRS),$(eval $(call TWIN_RULES,$(patsubst %/twins,%,$(d)))))
-include $(wildcard $(BUILD)/twins/*.d)

# The experiments behind the lessons (results/experiments/*.cu, not steps):
# each built into build/experiments/<name> with the steps' flags and headers,
# its own "// link: ..." line (read by tools/contract.py), a dependency list
# and a log, like a step.
EXP_SRCS := $(wildcard results/experiments/*.cu)
EXP_BINS := $(patsubst results/experiments/%.cu,$(BUILD)/experiments/%,$(EXP_SRCS))
file_link = $(call with_rpath,$(shell $(PYTHON) tools/contract.py link $(1)))
.PHONY: experiments
experiments: $(if $(BUNDLE),,$(EXP_BINS))
	$(FULL_ONLY)
$(EXP_BINS): $(BUILD)/experiments/%: results/experiments/%.cu $(FLAGS_STAMP)
	@mkdir -p $(@D)
	@echo "$(NVCC) $(ALL_FLAGS) $< -o $@ $(call file_link,$<)  (log: $@.log)"
	@$(NVCC) $(ALL_FLAGS) -MD -MF $@.d $< -o $@ $(call file_link,$<) > $@.log 2>&1 || { cat $@.log; echo "build of $@ failed"; exit 1; }
	@grep -i "warning" $@.log || true
-include $(wildcard $(BUILD)/experiments/*.d)

# Aggregates run every step, report each, and fail at the end if any step
# failed or was skipped (exit 77 is never a pass).
check: all $(if $(SHADOW_FLAG),shadow-tool)
	@failed=""; for d in $(sort $(STEP_DIRS) $(TWIN_DIRS)); do \
	  $(LABEL); $(if $(SHADOW_FLAG),$(SHADOW_ENV)) $(PYTHON) tools/checker.py $$d --timeout $(CHECK_TIMEOUT) \
	    $(if $(SHADOW_FLAG),--binary $(BUILD)/$$d --shadow) || failed="$$failed $$n"; \
	done; \
	if [ -n "$$failed" ]; then echo "make check: failed or skipped:$$failed"; exit 1; fi; \
	echo "make check: every step passed"
# Every step and twin under the protocol checker on --quick, timed beside the
# normal build (its overhead); FULL=1 also at full size against the expected
# output. On a GPU.
shadow: $(BINARIES) $(TWIN_BINS) shadow-tool build/shadow_proof/raw_kernels
	@$(MAKE) --no-print-directory SHADOW=1 $(addprefix build/shadow/,$(STEP_DIRS))
	$(PYTHON) tools/shadow_sweep.py correct $(if $(FULL),--full) $(SWEEP_TOOL)
sanitize: all
	@failed=""; for d in $(sort $(STEP_DIRS) $(TWIN_DIRS)); do $(LABEL); \
	  bash tools/sanitize.sh $$d || failed="$$failed $$n"; done; \
	if [ -n "$$failed" ]; then echo "make sanitize: failed or skipped:$$failed"; exit 1; fi; \
	echo "make sanitize: every step clean"

# Every step at full size; PERF lines into results/<gpu>.csv, then the result
# tables in README.md and the lessons are regenerated from that file.
bench: $(if $(BUNDLE),,all)
	$(FULL_ONLY)
	$(PYTHON) tools/bench.py $(STEP_DIRS)
	$(PYTHON) tools/results_table.py

results-table:
	$(FULL_ONLY)
	$(PYTHON) tools/results_table.py

# The Python environment, in parts (requirements/PART.txt): a target installs only the part it needs, once
# (the stamp $(VENV)/.installed-PART, renewed when the part's list changes), and says which part and how
# large before it downloads (the list's "size:" line). `make venv` installs every part. No part warns that
# nvidia-cutlass lacks its Python dependencies: the twins part leaves them out on purpose.
#   twins      CuTe's headers, for the twins' builds (make all, check-NN and sass-NN of a step with twins)
#   sass       cuobjdump and nvdisasm, where neither PATH nor the toolkit has both (sass-NN, grader-tools)
#   test       pytest, clang-format, numpy; make test also installs twins, sass and notebooks
#   notebooks  Jupyter's nbconvert and ipykernel, matplotlib (make notebooks)
#   shadow     CUDA's Sanitizer API, for the shadow build's checker (the shadow targets)
VENV_PARTS := $(sort $(basename $(notdir $(wildcard requirements/*.txt))))
venv: $(addprefix $(VENV)/.installed-,$(VENV_PARTS))
$(VPY):
	@$(PYTHON) -m venv $(VENV) || { echo "cannot create $(VENV): install python3-venv"; exit 1; }
$(VENV)/.installed-%: requirements/%.txt | $(VPY)
	@echo "Installing requirements/$*.txt into $(VENV) (once): $$(sed -n 's/^# size: //p' $<)"
	@$(VPY) -m pip install --quiet --disable-pip-version-check --no-warn-conflicts $$(sed -n 's/^# pip: //p' $<) -r $< \
	  || { echo "make: installing requirements/$*.txt failed (no network? on a machine without PyPI, see README.md)"; exit 1; }
	@touch $@
SHADOW_NEEDS := $(VENV)/.installed-shadow
NOTEBOOK_NEEDS := $(VENV)/.installed-notebooks
TEST_NEEDS := $(VENV)/.installed-test $(NOTEBOOK_NEEDS) $(CUTE_NEEDS) $(SASS_NEEDS)

# What the lab grader needs besides the toolkit (tools/lab.py grade reads each hole's machine code):
# cuobjdump and nvdisasm, installed here only where neither PATH nor the toolkit has both.
grader-tools: $(SASS_NEEDS)
	@echo "make grader-tools: cuobjdump and nvdisasm $(if $(SASS_NEEDS),installed in $(VENV) (requirements/sass.txt),\
	  found on PATH or in $(CUDA_HOME)/bin): the grader can read machine code"

# The CPU test suite (no GPU needed), in two tiers (tests/conftest.py chooses them, from data):
#   make test      every kind of rule at least once, the slow builds sampled (one step's shadow build,
#                  one twin, one planted mistake's build, ...): every step built, then pytest --tier=fast
#   make test-all  everything (what .ci/run runs): every step and twin built, then the whole suite
test: $(if $(BUNDLE),,$(TEST_NEEDS) $(BINARIES))
	$(FULL_ONLY)
	$(VPY) -m pytest -q tests --tier=fast
test-all: $(if $(BUNDLE),,$(TEST_NEEDS) all)
	$(FULL_ONLY)
	$(VPY) -m pytest -q tests

# Plants defects one at a time (tools/mutation.py lists them) and checks that
# the test aimed at each catches it; GPU=1 adds those only a GPU run can catch
# (JOBS=16: each GPU defect built in its own copy of the sources, 16 at a time).
# Not part of `make test`: it rebuilds and reruns a lot.
# SHADOW=1 instead: every planted mistake in the shadow build, on a GPU
# (tools/shadow_sweep.py bugs: built in parallel, each must name its rule).
mutation: $(if $(BUNDLE),,$(if $(SHADOW_FLAG),shadow-tool,$(TEST_NEEDS) all))
	$(FULL_ONLY)
	$(if $(SHADOW_FLAG),$(PYTHON) tools/shadow_sweep.py bugs --nvcc="$(NVCC) $(TUTORIAL_FLAGS) $(NVCCFLAGS)" $(SWEEP_TOOL),$(VPY) tools/mutation.py $(if $(GPU),--gpu) $(if $(JOBS),--jobs $(JOBS) --nvcc="$(NVCC) $(ALL_FLAGS)" --twin-flags="$(TWIN_FLAGS)"))

# Every step's student copy with the harness and the tools, no solutions.
lab-dist:
	$(FULL_ONLY)
	$(PYTHON) tools/lab.py dist --out $(BUILD)/labs.tar.gz

# A class: every folder of DIR is one student's (holding NN_topic/); builds in
# parallel, runs one at a time, one CSV row each (DIR/grades_NN.csv).
grade-class: $(FLAGS_STAMP) $(GRADE_TOOL)
	@$(PYTHON) tools/lab.py grade-class $(NN) $(DIR) --timeout $(CHECK_TIMEOUT) --nvcc="$(NVCC) $(ALL_FLAGS)" \
	  $(if $(JOBS),--jobs $(JOBS)) $(if $(PREBUILT),--prebuilt)

# Executes every notebook headless into build/notebooks (.ipynb and .html);
# the committed notebooks stay as they are.
NOTEBOOKS := $(wildcard notebooks/*.ipynb)
# HTML with each figure's description as its alt text (notebooks/templates/described).
NB_HTML := --TemplateExporter.extra_template_basedirs=notebooks/templates --template described
# The kernel talks to nbconvert over Unix sockets in a private folder (IPC), not over TCP on localhost,
# where ipykernel warns at every start that its traffic is unencrypted.
notebooks: $(if $(BUNDLE),,$(NOTEBOOK_NEEDS))
	$(FULL_ONLY)
	@mkdir -p $(BUILD)/notebooks
	@ipc=$$(mktemp -d); trap 'rm -rf $$ipc' EXIT; for nb in $(NOTEBOOKS); do \
	  $(VPY) -m jupyter nbconvert --to notebook --execute --KernelManager.transport=ipc \
	    --KernelManager.ip=$$ipc/kernel --output-dir $(BUILD)/notebooks $$nb || exit 1; \
	  $(VPY) -m jupyter nbconvert --to html $(NB_HTML) --output-dir $(BUILD)/notebooks $(BUILD)/notebooks/$$(basename $$nb) || exit 1; \
	done

help:
	@echo "Targets (NN is a step number: $(STEPS))"
	@echo "  make / make all      build every step into $(BUILD)/, and the twins into $(BUILD)/twins/"
	@echo "  make build-NN        build step NN"
	@echo "  make run-NN          build and run step NN (ARGS=\"--quick\", ARGS=\"--help\", ...)"
	@echo "  make check-NN        run step NN and check it against NN_*/expected_output.txt; then its twins"
	@echo "  make sass-NN         the SASS lines that show step NN's instructions, per kernel (and its twins')"
	@echo "  make sanitize-NN     compute-sanitizer memcheck, racecheck, synccheck on step NN --quick, and its twins"
	@echo "  make shadow-NN       step NN and its twins on --quick under the protocol checker (common/shadow/): the first broken rule"
	@echo "  make shadow [FULL=1] every step and twin under the checker on --quick (FULL=1: full size too), timed beside the normal one"
	@echo "  make shadow-tool     build the checker's tool (CUDA's Sanitizer API: a library and its patch functions)"
	@echo "  make shadow-probe    build the probe of what the Sanitizer API sees (python3 tools/shadow_probe.py run, on a GPU)"
	@echo "  make profile-NN      Nsight Compute counters that step NN's check.py declares, into results/"
	@echo "  make bug-NN [N=k]    step NN's planted mistakes (NN_*/bugs/*.diff); N=k: apply k, build, run, say what showed"
	@echo "  make check           every check-NN; fails if any fails or is skipped"
	@echo "  make sanitize        every sanitize-NN"
	@echo "  make bench           every step at full size into results/<gpu>.csv, then results-table"
	@echo "  make results-table   regenerate the result tables in README.md and the lessons from results/"
	@echo "  make experiments     build every results/experiments/*.cu into $(BUILD)/experiments/ (steps' flags)"
	@echo "  make venv            create $(VENV) with every Python part (requirements.txt); each target installs its own"
	@echo "  make grader-tools    what the lab grader needs besides the toolkit: cuobjdump and nvdisasm (5 MB, if missing)"
	@echo "  make test            the CPU test suite's fast tier (no GPU needed): every kind of rule once, slow builds sampled"
	@echo "  make test-all        the whole CPU test suite (what CI runs)"
	@echo "  make notebooks       execute every notebook headless into $(BUILD)/notebooks (.ipynb, .html)"
	@echo "  make mutation        plant defects one at a time; each must be caught by its test (GPU=1: GPU ones too;"
	@echo "                       SHADOW=1: every planted mistake in the shadow build, each naming its rule)"
	@echo "  make lab-NN          the student copy of step NN, with holes, into \$$(LAB) (default labs/)"
	@echo "  make grade-NN        grade \$$(LAB)/NN_*: its program and parts alone, built and judged with this tutorial's files"
	@echo "  make grade-class NN=03 DIR=submissions/   grade every student folder of DIR: DIR/grades_NN.csv, DIR/logs_NN/"
	@echo "  make compile-command-NN   the compiler command and link flags of step NN (the grader's)"
	@echo "  make lab-dist        every step's student copy with the harness, no solutions: build/labs.tar.gz"
	@echo "  make help            this list"
	@echo "  make clean           remove $(BUILD)/ (the venv stays; rm -rf $(VENV) for that)"
	@echo "Variables: ARCH, NVCCFLAGS (extra flags), MBAR_TIMEOUT_NS, ARGS, CHECK_TIMEOUT, LAB, N, NN, DIR, CUTE_INCLUDE,"
	@echo "           SHADOW=1 (build with the checker's hooks into build/shadow/, check under its tool), FULL, PREBUILT=1 and JOBS (grade-class; mutation: builds at a time),"
	@echo "           SANITIZER_HOME (the Sanitizer API's headers and library),"
	@echo "           CUDA_HOME (the toolkit), NVCC (the compiler)"
	$(if $(BUNDLE),@echo "$(BUNDLE_NOTE)")

clean:
	rm -rf $(BUILD)

