"""Shared fixtures of the autofuse Python tests.

The JIT cache and Inductor's caches go to a temporary directory per test session
(AUTOFUSE_CACHE_DIR, TORCHINDUCTOR_CACHE_DIR, set before any CompilerConfig is made), and Dynamo's caches are reset around every test.
AUTOFUSE_TEST_EXTENSION names another build of the extension (`make sanitize`'s, built with the
sanitizers) to test in place of the installed one. A module's ASCENDC_QUICK (substrings of test
ids) keeps only those of its ascendc-target cases in `make test`, its INDUCTOR_QUICK those of its
Inductor-frontend cases; `make fuzz` sets AUTOFUSE_ASCENDC_FULL and AUTOFUSE_INDUCTOR_FULL and
runs them all. The `frontend` fixture runs a test for both frontends.
"""

import collections
import importlib.util
import logging
import os
import shutil
import sys
import tempfile

import pytest

if os.environ.get("AUTOFUSE_TEST_EXTENSION"):
    # Imported before the package, whose `from . import _C` then finds it in sys.modules.
    _spec = importlib.util.spec_from_file_location("autofuse._C", os.environ["AUTOFUSE_TEST_EXTENSION"])
    sys.modules["autofuse._C"] = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(sys.modules["autofuse._C"])

_SESSION_CACHE = tempfile.mkdtemp(prefix="autofuse-test-cache-")
os.environ["AUTOFUSE_CACHE_DIR"] = _SESSION_CACHE
# Inductor's caches, AOTAutograd's (aot_cache.py) among them, start empty each session too.
os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(_SESSION_CACHE, "inductor")
os.environ.pop("AUTOFUSE_DUMP", None)

import torch  # noqa: E402

import autofuse  # noqa: E402
import autofuse.inductor  # noqa: E402

# Like torch's loggers, "autofuse" does not propagate (log.py); pytest's caplog listens at the
# root logger.
logging.getLogger("autofuse").propagate = True


# (id word, the module attribute listing its quick cases, the variable that runs them all)
_QUICK_SLICES = [("ascendc", "ASCENDC_QUICK", "AUTOFUSE_ASCENDC_FULL"),
                 ("inductor", "INDUCTOR_QUICK", "AUTOFUSE_INDUCTOR_FULL")]


def _quick(item):
    """Whether `make test` runs `item`: per slice whose word its id holds, one of the module's
    quick substrings (unless that slice runs in full)."""
    for word, attr, full in _QUICK_SLICES:
        quick = getattr(item.module, attr, None)
        if quick is None or os.environ.get(full) or word not in item.name:
            continue
        if not any(q in item.name for q in quick):
            return False
    return True


@pytest.fixture(params=["autofuse", "inductor"])
def frontend(request, monkeypatch):
    """Runs a test for each frontend (AUTOFUSE_FRONTEND): autofuse's own and Inductor's."""
    monkeypatch.setenv("AUTOFUSE_FRONTEND", request.param)
    return request.param


def pytest_collection_modifyitems(config, items):
    keep, drop = [], []
    for item in items:
        (keep if _quick(item) else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def pytest_sessionfinish(session, exitstatus):
    shutil.rmtree(_SESSION_CACHE, ignore_errors=True)


@pytest.fixture(autouse=True)
def _fresh_dynamo():
    torch._dynamo.reset()
    autofuse.reset_records()
    autofuse.inductor.reset_records()
    torch.manual_seed(0)
    yield
    torch._dynamo.reset()


@pytest.fixture
def pin_cpu(monkeypatch):
    """pin_cpu(avx512_bf16=True, ...): the capabilities the measured tables (cpu.capabilities)
    read, this CPU's with those features set, for one test; the tables' cached choices
    (packed_linear.libraries) are dropped before and after."""
    from autofuse import cpu, packed_linear

    def pin(**features):
        caps = collections.defaultdict(bool, {**cpu.capabilities(), **features})
        monkeypatch.setattr(cpu, "capabilities", lambda: caps)
        packed_linear.libraries.cache_clear()

    yield pin
    packed_linear.libraries.cache_clear()


@pytest.fixture
def cache_dir():
    """The session's JIT cache directory."""
    return _SESSION_CACHE
