# The only build entry point. `make help` lists every target.
#
# Steps are the NN_topic folders; each holds NN_topic/topic.cu, built into
# build/NN_topic. Adding a step means adding its folder, nothing here.

NVCC      ?= nvcc
ARCH      ?= -gencode arch=compute_90a,code=sm_90a
# All warnings on, none hidden: host compiler -Wall -Wextra, ptxas reports
# spills and local-memory use. --resource-usage prints
# each kernel's registers and shared memory into the build log (lessons quote
# it). MBAR_TIMEOUT_NS bounds every mbarrier wait (common/mbarrier.cuh);
# 0 makes the waits unbounded, as production code would have them.
MBAR_TIMEOUT_NS ?= 10000000000
NVCCFLAGS ?= -O3 -lineinfo -std=c++17 $(ARCH) -Icommon \
             -Xcompiler -Wall,-Wextra \
             -Xptxas -warn-spills,-warn-lmem-usage \
             -DMBAR_WAIT_TIMEOUT_NS=$(MBAR_TIMEOUT_NS)ull \
             --resource-usage
PYTHON    ?= python3
CUDA_HOME ?= /usr/local/cuda
# compute-sanitizer and Nsight Compute: on PATH, else the toolkit's own bin/.
SANITIZER ?= $(firstword $(shell command -v compute-sanitizer) $(wildcard $(CUDA_HOME)/bin/compute-sanitizer))
NCU       ?= $(firstword $(shell command -v ncu) $(wildcard $(CUDA_HOME)/bin/ncu))
VENV      ?= .venv
VPY       := $(VENV)/bin/python
BUILD     := build
ARGS      ?=
# Seconds a checked run may take before the checker calls it hung.
CHECK_TIMEOUT ?= 600

STEP_DIRS := $(sort $(wildcard [0-9][0-9]_*))
STEPS     := $(foreach d,$(STEP_DIRS),$(firstword $(subst _, ,$(d))))
COMMON    := $(wildcard common/*)
BINARIES  := $(addprefix $(BUILD)/,$(STEP_DIRS))

.DEFAULT_GOAL := all
.DELETE_ON_ERROR:
SHELL := /bin/bash

.PHONY: all check sanitize bench test notebooks results-table venv help clean profile-05

all: $(BINARIES)

$(BUILD):
	@mkdir -p $@

# Per-step targets, generated from the folder list: build-NN run-NN check-NN
# sass-NN sanitize-NN.
# The build keeps the full compiler output in build/NN_topic.log (the
# warnings test reads it) and shows it as it happens.
define STEP_RULES
.PHONY: build-$(1) run-$(1) check-$(1) sass-$(1) sanitize-$(1)
$(BUILD)/$(2): $(wildcard $(2)/*.cu) $(COMMON) | $(BUILD)
	@echo "$(NVCC) $$(NVCCFLAGS) $$< -o $$@"
	@set -o pipefail; $(NVCC) $(NVCCFLAGS) $$< -o $$@ 2>&1 | tee $$@.log
build-$(1): $(BUILD)/$(2)
run-$(1): $(BUILD)/$(2)
	./$(BUILD)/$(2) $(ARGS)
check-$(1): $(BUILD)/$(2)
	$(PYTHON) $(2)/check.py --binary $(BUILD)/$(2) --timeout $(CHECK_TIMEOUT)
sass-$(1): $(BUILD)/$(2)
	@$(PYTHON) tools/sass.py $(2) --binary $(BUILD)/$(2)
# All three tools run even when one fails, so a learner sees every report;
# a tool fails on a reported error or on the program's own non-zero exit.
sanitize-$(1): $(BUILD)/$(2)
	@test -n "$(SANITIZER)" || { echo "compute-sanitizer not found on PATH or in $(CUDA_HOME)/bin: set SANITIZER=/path/to/compute-sanitizer"; exit 1; }
	@failed=""; for tool in memcheck racecheck synccheck; do \
	  log=$(BUILD)/$(2).$$$$tool.log; \
	  echo "== compute-sanitizer --tool $$$$tool $(BUILD)/$(2) --quick   (log: $$$$log)"; \
	  if $(SANITIZER) --tool $$$$tool --error-exitcode 1 ./$(BUILD)/$(2) --quick > $$$$log 2>&1; then \
	    tail -n 1 $$$$log; \
	  else \
	    grep -E "^========= (Error|Invalid|Race|Barrier|  *(and|at) )|SUMMARY|^RESULT|^check .* FAIL" $$$$log | head -n 20; \
	    failed="$$$$failed $$$$tool"; \
	  fi; \
	done; \
	test -z "$$$$failed" || { echo "sanitize-$(1): FAILED:$$$$failed"; exit 1; }
endef
$(foreach d,$(STEP_DIRS),$(eval $(call STEP_RULES,$(firstword $(subst _, ,$(d))),$(d))))

# Aggregates: make stops at the first failing part and exits non-zero, so a
# failed or skipped (exit 77) check fails `make check`.
check: $(addprefix check-,$(STEPS))
sanitize: $(addprefix sanitize-,$(STEPS))

# Every step at full size; PERF lines into results/<gpu>.csv, then the result
# tables in README.md and the lessons are regenerated from that file.
bench: all
	$(PYTHON) tools/bench.py --build $(BUILD) $(STEP_DIRS)
	$(PYTHON) tools/results_table.py

results-table:
	$(PYTHON) tools/results_table.py

# Step 05's shared-memory bank-conflict counters, one row per access pattern
# (bank_patterns launch), next to the bank model's prediction in the lesson.
PROFILE_METRICS := l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,smsp__sass_inst_executed_op_shared_ld.sum
profile-05: $(BUILD)/05_swizzle
	@test -n "$(NCU)" || { echo "ncu (Nsight Compute) not found on PATH or in $(CUDA_HOME)/bin: set NCU=/path/to/ncu"; exit 1; }
	$(NCU) --clock-control none --kernel-name bank_patterns --metrics $(PROFILE_METRICS) --csv ./$(BUILD)/05_swizzle > $(BUILD)/profile-05.csv
	$(PYTHON) tools/ncu_banks.py $(BUILD)/profile-05.csv results/ "$$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)"

# The Python environment for tests and notebooks: created once, refreshed when
# requirements.txt changes.
venv: $(VENV)/.installed
$(VENV)/.installed: requirements.txt
	@test -x $(VPY) || $(PYTHON) -m venv $(VENV) || { echo "cannot create $(VENV): install python3-venv"; exit 1; }
	$(VPY) -m pip install --quiet --upgrade pip
	$(VPY) -m pip install --quiet -r requirements.txt
	@touch $@

# The CPU test suite (no GPU needed): builds every step, then pytest.
test: venv all
	$(VPY) -m pytest tests

NOTEBOOKS := $(wildcard notebooks/*.ipynb)
notebooks: venv
	@if [ -z "$(NOTEBOOKS)" ]; then echo "no notebooks yet (they arrive with step 05)"; fi
	@for nb in $(NOTEBOOKS); do \
	  $(VPY) -m jupyter nbconvert --to notebook --execute --inplace $$nb || exit 1; \
	  $(VPY) -m jupyter nbconvert --to html --output-dir $(BUILD)/notebooks $$nb || exit 1; \
	done

help:
	@echo "Targets (NN is a step number: $(STEPS))"
	@echo "  make / make all      build every step into $(BUILD)/"
	@echo "  make build-NN        build step NN"
	@echo "  make run-NN          build and run step NN (ARGS=\"--quick\", ARGS=\"--help\", ...)"
	@echo "  make check-NN        run step NN and check it against NN_*/expected_output.txt"
	@echo "  make sass-NN         the SASS lines that show step NN's instructions, per kernel"
	@echo "  make sanitize-NN     compute-sanitizer memcheck, racecheck, synccheck on step NN --quick"
	@echo "  make check           every check-NN; fails if any fails or is skipped"
	@echo "  make sanitize        every sanitize-NN"
	@echo "  make bench           every step at full size into results/<gpu>.csv, then results-table"
	@echo "  make profile-05      ncu's bank-conflict counters for step 05's access patterns into results/"
	@echo "  make results-table   regenerate the result tables in README.md and the lessons from results/"
	@echo "  make venv            create $(VENV) and install requirements.txt"
	@echo "  make test            the CPU test suite (no GPU needed): venv, build, pytest"
	@echo "  make notebooks       execute every notebook headless and export HTML to $(BUILD)/notebooks"
	@echo "  make help            this list"
	@echo "  make clean           remove $(BUILD)/ (the venv stays; rm -rf $(VENV) for that)"

clean:
	rm -rf $(BUILD)
