"""`python -m autofuse doctor` passes on this machine and, with a missing compiler, names it,
says what to fix and exits non-zero."""
import os
import subprocess
import sys


def doctor(**env):
    environ = dict(os.environ, **env)
    return subprocess.run([sys.executable, "-m", "autofuse", "doctor"], capture_output=True, text=True,
                          env=environ, timeout=300)


def test_doctor_passes_here():
    r = doctor()
    assert r.returncode == 0, r.stdout + r.stderr
    for what in ("C++ compiler", "runtime headers", "SLEEF", "cache dir", "kernel ISA", "threads", "kernel"):
        assert any(line.startswith("ok") and what in line for line in r.stdout.splitlines()), (what, r.stdout)
    assert "all checks passed" in r.stdout


def test_doctor_names_a_missing_compiler():
    r = doctor(CXX="/nonexistent")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "/nonexistent" in r.stdout and "fix: install g++" in r.stdout, r.stdout
    assert "problem(s)" in r.stdout
