"""Weight packs kept across calls for as long as the weight provably holds what was packed.

A library's packed form of a parameter (MKL's or oneDNN's blocked layout, an fp32 copy of a bf16
weight) pays only when made once for many calls. When packing, KeptPacks takes a copy-on-write
clone of the weight (torch._lazy_clone: no copy, the two share the storage). Any write to the
weight through PyTorch, whichever tensor it goes through (the parameter, `param.data`, a
`detach()`, an optimizer, `load_state_dict`, a NumPy view made after the pack), first gives the
weight a private copy of its storage, so its address (const_data_ptr, which copies nothing)
stops matching the clone's and the next call repacks; `param.data = t` changes it too. Checking
costs two pointer reads a call; the price is paid by a writer: its first write after a pack
copies the weight once (COW). Version counters would not do: `param.data` has its own, and
torch.distributed's sharding writes under _unsafe_preserve_version_counter. Not seen: a write
through a raw pointer taken before the pack (a NumPy view made earlier, ctypes), which bypasses
PyTorch; so a torch.distributed process keeps no packs (sees_every_write: its collectives write
through the backend's pointers). An inference-mode weight has no copy-on-write clone: it is
never kept (KeptPacks.get returns None).
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Hashable, Optional, Tuple

import torch

_is_cow = torch._C._is_cow_tensor  # (tensor) -> whether its storage is copy-on-write


def sees_every_write() -> bool:
    """Whether every write to a parameter in this process goes through PyTorch, where a kept
    pack's copy-on-write clone sees it: not once torch.distributed is initialized (collectives
    write through the backend's pointers; FSDP's all-gather fills unsharded parameters)."""
    dist = torch.distributed
    return not (dist.is_available() and dist.is_initialized())


def holds(w: torch.Tensor, clone: torch.Tensor) -> bool:
    """Whether `w` still shares its storage with `clone` (torch._lazy_clone of it, never
    written), in the same layout: no write through PyTorch has reached `w` since the clone.
    Reads only pointers and sizes (const_data_ptr, unlike data_ptr, copies nothing)."""
    return (_is_cow(w) and w.const_data_ptr() == clone.const_data_ptr() and w.shape == clone.shape
            and w.stride() == clone.stride())


class KeptPacks:
    """One weight's packs, at most `limit` of them (one per key: a row count, an input shape),
    each kept while the weight holds what it was packed from."""

    def __init__(self, limit: int = 4):
        self._limit = limit
        self._packs: Dict[Hashable, Tuple[torch.Tensor, Any]] = {}  # key -> (clone of W, pack)

    def get(self, w: torch.Tensor, key: Hashable, make: Callable[[], Any]) -> Optional[Any]:
        """The pack of `w` for `key`: the kept one while `w` holds it, else make() (kept);
        None for an inference-mode `w` (no clone to check it against)."""
        if w.is_inference():
            return None
        held = self._packs.get(key)
        if held is not None and holds(w, held[0]):
            return held[1]
        if len(self._packs) >= self._limit:
            self._packs.clear()
        pack = make()
        self._packs[key] = (torch._lazy_clone(w.detach()), pack)
        return pack
