# autofuse — `make demo` and `make test` work on a fresh machine: they install what is missing
# (Debian packages, a .venv with torch==2.13.0 and the package in editable mode), build, and run.
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
STAMPS := .stamps
BUILD := build/py
APT_PKGS := g++ make llvm-14-tools libsleef-dev libgtest-dev clang-format graphviz clang-14
PY_PKGS := torch==2.13.0 nanobind==3.1.0 lit==23.1.5 pytest pytest-xdist scikit-build-core ninja \
  cmake numpy transformers==5.24.0 matplotlib expecttest==0.3.0
NVRTC_PKG := nvidia-cuda-nvrtc>=13,<14
SOURCES := $(shell find src tools python/bindings tests/unit -name '*.cpp' -o -name '*.h' 2>/dev/null) CMakeLists.txt pyproject.toml
export PATH := /usr/lib/llvm-14/bin:$(PATH)
export OMP_NUM_THREADS ?= 2

.PHONY: all deps build test test-unit test-lit test-python test-wheel test-models fuzz opinfo sanitize demo bench-smoke \
  bench-ops bench-dynamic bench-tuning bench-conv-layouts bench-models bench-generate check-cann gpu-check golden-update format clean

all: build

deps: $(STAMPS)/apt $(STAMPS)/venv

# Debian packages: installed only when one is missing (dpkg -s is quick).
$(STAMPS)/apt:
	@mkdir -p $(STAMPS)
	@missing=""; for p in $(APT_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then echo "apt-get install$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; fi
	@touch $@

# The venv's packages: installed again when this file (the package list) changes.
$(STAMPS)/venv: Makefile
	@mkdir -p $(STAMPS)
	@test -x $(PY) || python3 -m venv $(VENV)
	$(PIP) install -q --disable-pip-version-check $(PY_PKGS)
	@# NVRTC (compiles the cuda target's kernels to PTX with no GPU): where pip cannot fetch it,
	@# the tests that need it skip with the reason.
	@$(PIP) install -q --disable-pip-version-check "$(NVRTC_PKG)" 2>/dev/null || \
	  echo "$(NVRTC_PKG) is not installable here: the cuda target's NVRTC checks skip"
	@touch $@

# The C++ core, autofuse-opt, the unit tests and the Python extension, in one CMake tree
# driven by scikit-build-core; redone only when a C++ source changed.
$(STAMPS)/build: $(STAMPS)/apt $(STAMPS)/venv $(SOURCES)
	PATH=$(CURDIR)/$(VENV)/bin:$$PATH $(PIP) install -q --disable-pip-version-check \
	  --no-build-isolation --no-deps -e .
	@touch $@

build: $(STAMPS)/build

# The cuda launcher's tests find NVRTC through AUTOFUSE_NVRTC (the venv's wheel; they skip
# without it).
test-unit: build
	AUTOFUSE_NVRTC=$$(ls $(VENV)/lib/python3*/site-packages/nvidia/cu13/lib/libnvrtc.so.13 2>/dev/null | head -1) \
	  $(BUILD)/autofuse_unit_tests --gtest_brief=1

test-lit: build
	PATH=$(CURDIR)/$(BUILD):$$PATH $(VENV)/bin/lit -sv tests/lit

# Two pytest workers (pytest-xdist): most of the suite's time is g++ compiling kernels, which a
# second core halves; each worker has its own JIT cache directory (conftest.py).
test-python: build
	$(PY) -m pytest -q -n 2 tests/python

test: test-unit test-lit test-python

# The wheel: `pip wheel .`, installed into a fresh venv, compiles and runs kernels from outside
# the repository with an empty cache (tests/package; .ci/run runs it after `make test`).
test-wheel: build
	$(PY) -m pytest -q tests/package

# Every Hugging Face model class of tests/python/test_dynamic_models.py under dynamic=True, in
# fp32 and bf16 inference and training (`make test` runs a few of them). About 3.5 minutes.
test-models: build
	AUTOFUSE_ALL_MODELS=1 $(PY) -m pytest -q tests/python/test_dynamic_models.py

# The kernel ISAs this host runs (autofuse.host_isas(), asked after the build): fuzz and opinfo
# run each path.
HOST_ISAS = isas=$$($(PY) -c "import autofuse; print(' '.join(autofuse.host_isas()))") && test -n "$$isas"

# Differential fuzzing against eager PyTorch, 500 cases each: elementwise programs
# (tests/python/test_random_graphs.py), programs with reductions (test_random_reduce_graphs.py)
# and programs with torch.cat (test_random_concat_graphs.py); once per kernel ISA of the host,
# then once on the ascendc target (every kernel the Ascend C emitter prints runs against
# ascendc_emu), with every Ascend C acceptance case (AUTOFUSE_ASCENDC_FULL; make test runs each
# module's ASCENDC_QUICK slice); then through the Inductor frontend (200 cases each: equal to
# eager, or to plain Inductor where Inductor itself differs; no group left to Inductor by a
# tracer bug) with every Inductor-frontend acceptance case (make test: INDUCTOR_QUICK); last,
# tests/python/test_long_reductions.py with AUTOFUSE_BIG_TESTS=1: sums, means and column and row
# sums of up to 10^9 elements judged against float64 on every ISA (inputs of up to 4 GB).
# Per ISA and on the ascendc target also the reduce fuzzer's large mode (issue 40: reductions of
# 10^5 .. 10^7 elements judged against float64; AUTOFUSE_FUZZ_LARGE_CASES, 100 per ISA, about
# 4 s each; 30 on ascendc, 4x shorter; `make test` runs 3).
fuzz: build
	@$(HOST_ISAS) && for isa in $$isas; do echo "== fuzz, isa $$isa"; \
	  AUTOFUSE_ISA=$$isa AUTOFUSE_FUZZ_CASES=$${AUTOFUSE_FUZZ_CASES:-500} \
	  AUTOFUSE_FUZZ_LARGE_CASES=$${AUTOFUSE_FUZZ_LARGE_CASES:-100} $(PY) -m pytest -q \
	  tests/python/test_random_graphs.py tests/python/test_random_reduce_graphs.py \
	  tests/python/test_random_concat_graphs.py || exit 1; done; \
	echo "== fuzz, target ascendc"; AUTOFUSE_TARGET=ascendc AUTOFUSE_FUZZ_ASCENDC_CASES=0 \
	  AUTOFUSE_FUZZ_CASES=$${AUTOFUSE_FUZZ_CASES:-500} AUTOFUSE_ASCENDC_FULL=1 \
	  AUTOFUSE_FUZZ_LARGE_CASES=$${AUTOFUSE_FUZZ_ASCENDC_LARGE_CASES:-30} $(PY) -m pytest -q \
	  tests/python/test_random_graphs.py tests/python/test_random_reduce_graphs.py \
	  tests/python/test_random_concat_graphs.py tests/python/test_ascendc_kernels.py \
	  tests/python/test_acceptance.py tests/python/test_acceptance_reduce.py -k "random or ascendc" || exit 1; \
	echo "== fuzz, frontend inductor"; AUTOFUSE_FRONTEND=inductor AUTOFUSE_FUZZ_CASES=$${AUTOFUSE_FUZZ_INDUCTOR_CASES:-200} \
	  AUTOFUSE_FUZZ_LARGE_CASES=0 $(PY) -m pytest -q tests/python/test_random_graphs.py tests/python/test_random_reduce_graphs.py \
	  tests/python/test_random_concat_graphs.py || exit 1; \
	echo "== frontend inductor, every acceptance case"; AUTOFUSE_INDUCTOR_FULL=1 AUTOFUSE_ASCENDC_FULL=1 $(PY) -m pytest -q \
	  tests/python/test_acceptance.py tests/python/test_acceptance_reduce.py tests/python/test_concat.py \
	  tests/python/test_dynamic_shapes.py -k inductor || exit 1; \
	echo "== long reductions up to 10^9 elements against float64"; AUTOFUSE_BIG_TESTS=1 $(PY) -m pytest -q \
	  tests/python/test_long_reductions.py

# PyTorch's OpInfo samples in full (tests/python/test_opinfo.py): every sample of every op we
# fuse, in every dtype it takes, once per kernel ISA of the host; `make test` runs the largest
# sample of each op in fp32 (bf16: every fourth op). fp32 + bf16 alone take about 20 minutes
# per ISA, every dtype about twice that. With them test_opinfo_large (issue 40): every sample
# of every reduction, normalization and loss grown to reduced extents of 10^5 .. 2x10^6 and
# judged against float64, in fp32 and bf16 (1,452 cases, 430 of them skipped for having no
# reduced dim: 10-11 minutes per ISA on 2 cores, 21 under load; `make test`: one per op in fp32).
opinfo: build
	@$(HOST_ISAS) && for isa in $$isas; do echo "== opinfo, isa $$isa"; \
	  AUTOFUSE_ISA=$$isa AUTOFUSE_OPINFO=all $(PY) -m pytest -q tests/python/test_opinfo.py || exit 1; done

# AddressSanitizer + UndefinedBehaviorSanitizer: the core, autofuse-opt, the unit tests and the
# extension built with them in their own tree (build/sanitize); the unit and lit tests run there,
# then, with that extension and every kernel built with them too (AUTOFUSE_SANITIZE), the three
# fuzzers (300 cases each), the OpInfo slice and a kernel over 2^31 elements (~9 GB). Python runs
# with the ASan runtime preloaded. Any report (build/sanitize/reports) fails the target. About 100
# minutes on 2 cores (a kernel built with the sanitizers compiles in about 5 s).
SAN := build/sanitize
SAN_ENV := ASAN_OPTIONS=detect_leaks=0:log_path=$(CURDIR)/$(SAN)/reports/asan \
  UBSAN_OPTIONS=print_stacktrace=1:log_path=$(CURDIR)/$(SAN)/reports/ubsan
# The ASan runtime first, and libstdc++ with it: ASan finds the real __cxa_throw at start-up only
# (Python itself does not load libstdc++; without it the first C++ exception aborts ASan).
SAN_PRELOAD = $$(g++ -print-file-name=libasan.so) $$(g++ -print-file-name=libstdc++.so)
SAN_TESTS := test_random_graphs.py test_random_reduce_graphs.py test_random_concat_graphs.py \
  test_opinfo.py test_big_index.py test_sanitize.py
sanitize: build
	$(VENV)/bin/cmake -S . -B $(SAN) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DAUTOFUSE_SANITIZE=address,undefined -DAUTOFUSE_PYTHON_EXTENSION=ON \
	  -DPython_EXECUTABLE=$(CURDIR)/$(PY) -DCMAKE_MAKE_PROGRAM=$(CURDIR)/$(VENV)/bin/ninja >/dev/null
	$(VENV)/bin/cmake --build $(SAN)
	@rm -rf $(SAN)/reports && mkdir -p $(SAN)/reports
	@rc=0; \
	$(SAN_ENV) $(SAN)/autofuse_unit_tests --gtest_brief=1 || rc=1; \
	$(SAN_ENV) PATH=$(CURDIR)/$(SAN):$$PATH $(VENV)/bin/lit -s tests/lit || rc=1; \
	cd tests/python && $(SAN_ENV) AUTOFUSE_SANITIZE=address,undefined AUTOFUSE_FUZZ_CASES=300 \
	  AUTOFUSE_BIG_TESTS=1 AUTOFUSE_TEST_EXTENSION=$$(ls $(CURDIR)/$(SAN)/_C*.so) \
	  LD_PRELOAD="$(SAN_PRELOAD)" $(CURDIR)/$(PY) -m pytest -q $(SAN_TESTS) || rc=1; \
	cd $(CURDIR); if [ -n "$$(ls $(SAN)/reports)" ]; then cat $(SAN)/reports/*; \
	  echo "make sanitize: the sanitizer reports above"; exit 1; fi; \
	test $$rc = 0 && echo "make sanitize: no sanitizer reports, every test passed"

demo: build
	$(PY) examples/demo.py

bench-smoke: build
	$(PY) bench/bench_smoke.py

# Single transcendental / power ops and GPT-2's tanh-GELU chain at model shapes, fp32 and bf16:
# eager vs Inductor vs autofuse. About 3-5 minutes. Never part of `make test`.
bench-ops: build
	$(PY) bench/bench_ops.py

# Dynamic shapes: autofuse dynamic vs static vs Inductor dynamic over 20 shapes, and the per-call
# host cost of tiling + launch. Cold caches, about 3-4 minutes. Never part of `make test`.
bench-dynamic: build
	$(PY) bench/bench_dynamic.py

# Measured tuning vs the tiling solver on the block's kernels at the bench-dynamic rows, with an
# A/A noise check. About 2-3 minutes. Never part of `make test`.
bench-tuning: build
	$(PY) bench/bench_tuning.py

# Every convolution of ResNet-50 and ConvNeXt-T timed alone NCHW and channels-last on this CPU: the
# measurements behind conv_layouts.RULES. About 5-10 minutes. Never part of `make test`.
bench-conv-layouts: build
	$(PY) bench/bench_conv_layouts.py

# Real Hugging Face models (BERT, GPT-2, Llama, T5 encoder, ViT; random weights): eager vs
# Inductor vs autofuse in fp32 / bf16 inference, a training step, batch 1 and dynamic=True;
# writes build/bench/models.md and models.png. BENCH_MODELS_ARGS="--models gpt2 --configs bf16
# --breakdown" reruns one case with a profile of where its time goes. About 25-30 minutes cold,
# plus one process per variant and case for peak resident memory (--no-memory skips them).
bench-models: build
	$(PY) bench/bench_models.py $(BENCH_MODELS_ARGS)

# Hugging Face generate with a compiled forward (Llama, Qwen2, GPT-2, Mistral; random weights):
# eager vs Inductor vs Inductor-frozen vs autofuse, fp32/bf16, dynamic/static cache, batch 1/4,
# prompts 24/128: prefill and decode apart, tokens against eager, decode against the weight-
# streaming bound, peak memory per variant; writes build/bench/generate.md and generate.png.
# BENCH_GENERATE_ARGS="--models llama --dtypes fp32 --caches dynamic --shapes 1x24" narrows it.
bench-generate: build
	$(PY) bench/bench_generate.py $(BENCH_GENERATE_ARGS)

# The exported Ascend C judged by CANN's own headers (tools/check_cann.py, docs/ascendc.md): every
# package of its programs compiled in Ascend C's CPU-debug mode against a toolkit's ascendc/include
# (CANN_HOME: the toolkit root, e.g. .../ascend-toolkit/8.1.RC1; CANN_VERSION=8|9 picks the API
# spelling). Without CANN_HOME it says where the public headers are and skips. Not in `make test`.
check-cann: build
	$(PY) tools/check_cann.py --cann-home "$(CANN_HOME)" --cann-version "$(CANN_VERSION)"

# Rewrites the hashes of the golden model tests (tests/lit/golden: the fusion, schedule and C++
# autofuse-opt prints for the benchmark models' graphs) after a change meant to change them.
golden-update: build
	$(PY) tests/lit/golden/update_golden.py

format:
	clang-format -i $$(find src tools tests/unit python/bindings -name '*.cpp' -o -name '*.h')

clean:
	rm -rf build $(STAMPS)

# The cuda target on a GPU machine (issue 44; never part of `make test`): builds into that
# machine's own python3 (no venv, no network), runs the cuda tests and a fuzz slice against eager
# on the GPU and times bench-models' five models (tools/gpu_check.sh; about 8 minutes on one H100
# or H200). Where there is no GPU the tests skip with the reason and the benchmark says why.
gpu-check:
	tools/gpu_check.sh
