"""Helpers shared by the autofuse tests."""

import torch

import autofuse


def compile_fn(fn, config=None, **kwargs):
    """torch.compile(fn) with autofuse and static shapes (each test shape is its own graph)."""
    backend = autofuse.get_backend(config) if config is not None else "autofuse"
    return torch.compile(fn, backend=backend, dynamic=False, **kwargs)


def only_record():
    """The one graph compiled since the test began (fails when there are several or none)."""
    recs = autofuse.compiled_graphs()
    assert len(recs) == 1, [(r.name, r.tag, r.fallback) for r in recs]
    return recs[0]


def kernel_steps(rec):
    """The kernel steps of a record: (name, ops, inputs, outputs)."""
    return [(s[1], s[2], s[3], s[4]) for s in rec.steps if s[0] == "kernel"]
