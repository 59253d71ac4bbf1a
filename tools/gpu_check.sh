#!/usr/bin/env bash
# make gpu-check (issue 44): the cuda target on a GPU machine. That machine has CUDA 13, a
# python3 holding torch (cu130) with nanobind, scikit-build-core, CMake, ninja, pytest and
# transformers, and no network: autofuse is built into that python (no venv, nothing
# downloaded), the cuda tests run (tests/python/test_cuda_gpu.py, its fuzz slice included, and
# test_cuda_source.py) against eager on the GPU, then bench/bench_gpu.py times bench-models'
# five models, eager vs Inductor vs autofuse. Sized for about 8 minutes on one H100 or H200.
# GPU_PYTHON picks the python; GPU_CHECK_OUT where the logs go (build/gpu-check).
set -uo pipefail
PY=${GPU_PYTHON:-python3}
OUT_DIR=${GPU_CHECK_OUT:-build/gpu-check}
mkdir -p "$OUT_DIR"
t0=$SECONDS
step() { echo "== $1 ($((SECONDS - t0)) s)"; }

step "machine"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
"$PY" -c "import sys, torch; print('python', sys.version.split()[0], '| torch', torch.__version__, '| cuda', torch.version.cuda, torch.cuda.is_available())" || exit 1

step "build"
PIP_NO_INDEX=1 PIP_BREAK_SYSTEM_PACKAGES=1 "$PY" -m pip install -q --disable-pip-version-check \
  --no-build-isolation --no-deps -e . 2>&1 | tail -20
"$PY" -c "from autofuse import _C; print('cuda target:', _C.cuda_unavailable() or 'ready', '| NVRTC', _C.nvrtc())" || exit 1

step "tests"
status=0
AUTOFUSE_GPU_FUZZ_CASES=${AUTOFUSE_GPU_FUZZ_CASES:-25} "$PY" -m pytest -q -p no:cacheprovider -n 4 -rs \
  tests/python/test_cuda_gpu.py tests/python/test_cuda_source.py 2>&1 | tee "$OUT_DIR/tests.log" || status=1

step "bench"
BENCH_GPU_TOTAL_S=${BENCH_GPU_TOTAL_S:-240} PYTHONUNBUFFERED=1 "$PY" bench/bench_gpu.py 2>&1 | tee "$OUT_DIR/bench.log"
cp build/bench/gpu.md "$OUT_DIR/" 2>/dev/null || true

step "done (tests $([ $status = 0 ] && echo passed || echo FAILED))"
exit $status
