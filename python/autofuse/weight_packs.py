"""Weight packs kept across calls for as long as the weight provably holds what was packed.

A library's packed form of a parameter (MKL's or oneDNN's blocked layout, an fp32 copy of a bf16
weight) pays only when made once for many calls. When packing, KeptPacks takes a copy-on-write
clone of the weight (torch._lazy_clone: no copy, the two share the storage). Any write to the
weight through PyTorch, whichever tensor it goes through (the parameter, `param.data`, a
`detach()`, an optimizer, `load_state_dict`, a NumPy view made after the pack), first gives the
weight a private copy of its storage, so its address (const_data_ptr, which copies nothing)
stops matching the clone's and the next call repacks; `param.data = t` changes it too. Checking
costs two pointer reads a call; the price is paid by a writer: its first write after a pack
copies the weight once (COW); a read that takes a mutable pointer gives it a copy too, and is
told from a write by comparing the bits once (KeptPacks). Version counters would not do: `param.data` has its own, and
torch.distributed's sharding writes under _unsafe_preserve_version_counter. Not seen: a write
through a raw pointer taken before the pack (a NumPy view made earlier, ctypes), which bypasses
PyTorch; so a torch.distributed process keeps no packs (sees_every_write: its collectives write
through the backend's pointers). An inference-mode weight has no copy-on-write clone: it is
never kept (KeptPacks.get returns None).
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Hashable, Optional

import torch

_is_cow = torch._C._is_cow_tensor  # (tensor) -> whether its storage is copy-on-write


# Tensor.const_data_ptr reads an address without copying a copy-on-write storage (torch 2.13).
# The GPU machine's torch 2.11 lacks it: there no pack is kept (sees_every_write), so no
# copy-on-write clone exists and data_ptr reads the same address.
HAS_CONST_DATA_PTR = hasattr(torch.Tensor, "const_data_ptr")
read_ptr: Callable[[torch.Tensor], int] = getattr(torch.Tensor, "const_data_ptr", torch.Tensor.data_ptr)


def sees_every_write() -> bool:
    """Whether every write to a parameter in this process goes through PyTorch, where a kept
    pack's copy-on-write clone sees it: not once torch.distributed is initialized (collectives
    write through the backend's pointers; FSDP's all-gather fills unsharded parameters), nor
    where torch cannot read a pointer without copying (Tensor.const_data_ptr: torch 2.13)."""
    if not HAS_CONST_DATA_PTR:
        return False
    dist = torch.distributed
    return not (dist.is_available() and dist.is_initialized())


def holds(w: torch.Tensor, clone: torch.Tensor) -> bool:
    """Whether `w` still shares its storage with `clone` (torch._lazy_clone of it, never
    written), in the same layout: no write through PyTorch has reached `w` since the clone.
    Reads only pointers and sizes (const_data_ptr, unlike data_ptr, copies nothing)."""
    return (_is_cow(w) and w.const_data_ptr() == clone.const_data_ptr() and w.shape == clone.shape
            and w.stride() == clone.stride())


_BITS = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}  # element size -> its bits' dtype


def same_bits(w: torch.Tensor, clone: torch.Tensor) -> bool:
    """Whether `w` holds bit for bit what `clone` holds, in the same layout: a weight given a new
    storage by a read (below) still holds what was packed. Reads both tensors once."""
    if w.dtype != clone.dtype or w.shape != clone.shape or w.stride() != clone.stride():
        return False
    bits = _BITS.get(w.element_size())
    if bits is None or w.is_complex():
        return bool(torch.equal(w, clone))
    return bool(torch.equal(w.view(bits), clone.view(bits)))


def private_source(w: torch.Tensor) -> torch.Tensor:
    """`w` to pack from without touching its storage: a copy where `w` is copy-on-write. oneDNN's
    and MKL's reorders take a mutable pointer to their input, which gives a copy-on-write tensor a
    storage of its own (a copy: its address changes, as after a write), so packing a kept weight
    for a second key would end every other pack of it."""
    return w.clone() if _is_cow(w) else w


class KeptPacks:
    """One weight's packs, at most `limit` of them (one per key: a row count, an input shape),
    kept while the weight holds what they were packed from: one copy-on-write clone of the weight
    for all of them.

    Reads that take a mutable pointer (`data_ptr()`, `.numpy()`, DLPack, `torch.save`, a
    library's reorder) give a copy-on-write weight a storage of its own without changing a bit;
    then its address no longer matches and the weight is compared with the clone once (same_bits):
    equal, it is cloned again and the packs stay; else they are made anew."""

    def __init__(self, limit: int = 4):
        self._limit = limit
        self._clone: Optional[torch.Tensor] = None  # torch._lazy_clone of the weight packed
        self._packs: Dict[Hashable, Any] = {}  # key -> pack

    def get(self, w: torch.Tensor, key: Hashable, make: Callable[[torch.Tensor], Any]) -> Optional[Any]:
        """The pack of `w` for `key`: the kept one while `w` holds what it was packed from, else
        make(w or a copy of it: private_source) (kept); None for an inference-mode `w` (no clone
        to check it against)."""
        if w.is_inference():
            return None
        clone = self._clone
        if clone is not None and not holds(w, clone):
            kept = same_bits(w, clone)
            self._clone = clone = None  # frees the storage w no longer shares
            if kept:
                self._clone = clone = torch._lazy_clone(w.detach())
            else:
                self._packs.clear()
        pack = self._packs.get(key)
        if pack is not None:
            return pack
        if len(self._packs) >= self._limit:
            self._packs.clear()
        pack = make(private_source(w))
        if clone is None:
            self._clone = torch._lazy_clone(w.detach())
        self._packs[key] = pack
        return pack
