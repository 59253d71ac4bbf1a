"""Large kernel outputs are recycled only when nothing but the executor holds them."""

import pytest
import torch

from helpers import compile_fn


def fn(x, s, b):
    return torch.sigmoid(x) * s + b


def inputs(k: float):
    torch.manual_seed(int(k))
    return torch.randn(512, 1024) * k, torch.randn(1024), torch.randn(1024)  # 2 MiB output


def test_held_outputs_are_never_overwritten():
    cf = compile_fn(fn)
    args = [inputs(k) for k in (1.0, 2.0, 3.0, 4.0)]
    held = [cf(*a) for a in args]  # all alive: each call needs its own buffer
    assert len({t.data_ptr() for t in held}) == len(held)
    for got, a in zip(held, args):
        torch.testing.assert_close(got, fn(*a))


def test_a_view_keeps_its_buffer_alive():
    cf = compile_fn(fn)
    a1, a2 = inputs(1.0), inputs(2.0)
    view = cf(*a1)[100:]  # the output tensor dies, its storage lives on in the view
    for _ in range(3):
        torch.testing.assert_close(cf(*a2), fn(*a2))
    torch.testing.assert_close(view, fn(*a1)[100:])


def test_dropped_outputs_are_recycled():
    cf = compile_fn(fn)
    a = inputs(1.0)
    first = cf(*a).data_ptr()
    assert cf(*a).data_ptr() == first  # the previous result was dropped: its buffer is reused
    torch.testing.assert_close(cf(*a), fn(*a))


def check_saved_for_backward(train_fn, w, xs):
    """Two forwards alive at once, then their backwards: each matches eager's gradient, so
    neither forward's saved activations were recycled by the other."""
    cf = compile_fn(train_fn)
    losses = [cf(x) for x in xs]  # both forward graphs hold their saved activations
    grads = []
    for loss in losses:
        w.grad = None
        loss.backward()
        grads.append(w.grad.clone())
    for x, g in zip(xs, grads):
        w.grad = None
        train_fn(x).backward()
        torch.testing.assert_close(g, w.grad)


def test_outputs_saved_for_backward_are_not_recycled():
    w = torch.randn(1024, requires_grad=True)
    xs = [inputs(k)[0] for k in (1.0, 2.0)]
    check_saved_for_backward(lambda x: torch.sigmoid(x * w).sum(), w, xs)


def test_dynamic_outputs_are_recycled_while_sizes_repeat_and_never_while_held():
    torch._dynamo.reset()
    cf = torch.compile(fn, backend="autofuse", dynamic=True)
    a = inputs(1.0)
    cf(*inputs(2.0))  # compile
    first = cf(*a).data_ptr()
    assert cf(*a).data_ptr() == first  # same sizes, result dropped: reused
    held = [cf(*a) for _ in range(3)]
    assert len({t.data_ptr() for t in held}) == 3
    small = (torch.randn(8, 1024), a[1], a[2])  # 32 KiB: below the pool's size, never pooled
    torch.testing.assert_close(cf(*small), fn(*small))
    torch.testing.assert_close(cf(*a), fn(*a))  # back to the pooled size
    for got in held:
        torch.testing.assert_close(got, fn(*a))


def mm_fn(x, w, b):
    y = x @ w  # ATen mm, run with out= into an executor buffer
    return y, torch.relu(y) + b


def mm_inputs(k: float):
    torch.manual_seed(int(k))
    return torch.randn(512, 256) * k, torch.randn(256, 1024), torch.randn(1024)  # 2 MiB mm


def test_matmul_results_are_pooled_like_kernel_outputs():
    cf = compile_fn(mm_fn)
    a = mm_inputs(1.0)
    first = cf(*a)[0].data_ptr()
    assert cf(*a)[0].data_ptr() == first  # dropped: the mm's buffer is recycled
    held = [cf(*mm_inputs(k)) for k in (1.0, 2.0, 3.0)]
    assert len({y.data_ptr() for y, _ in held}) == 3
    for (y, z), k in zip(held, (1.0, 2.0, 3.0)):
        ey, ez = mm_fn(*mm_inputs(k))
        assert torch.equal(y, ey)  # the out= overload runs the same kernel
        torch.testing.assert_close(z, ez)


def test_dynamic_matmul_results_match_eager_at_every_size():
    torch._dynamo.reset()
    cf = torch.compile(mm_fn, backend="autofuse", dynamic=True)
    for rows in (512, 3, 512, 700, 1):  # pooled, fresh, pooled again, resized, 0/1-specialised
        a = (torch.randn(rows, 256), torch.randn(256, 1024), torch.randn(1024))
        (y, z), (ey, ez) = cf(*a), mm_fn(*a)
        assert torch.equal(y, ey), rows
        torch.testing.assert_close(z, ez)


def test_matmul_results_saved_for_backward_are_not_recycled():
    w = torch.randn(256, 1024, requires_grad=True)
    xs = [mm_inputs(k)[0] for k in (1.0, 2.0)]
    check_saved_for_backward(lambda x: torch.relu(x @ w).sum(), w, xs)


def test_records_do_not_keep_dropped_programs_alive():
    # A record (autofuse.compiled_graphs) outlives its graph; the pools and packed weights of a
    # graph torch has dropped must go with it.
    import gc
    import weakref

    import autofuse

    def g(x, s, b):
        return torch.sigmoid(x) * s + b

    cf = compile_fn(g)
    with autofuse.collect_records() as recs:
        cf(*inputs(1.0))
    pools = [step[3][0][4] for step in recs[0].runner._steps if step[0] == 0]
    assert pools and pools[0] is not None and pools[0].buffers
    buffer = weakref.ref(pools[0].buffers[0])
    del cf, pools
    torch._dynamo.reset()
    gc.collect()
    assert recs[0].runner is None and buffer() is None


# Every way a user can keep an output's storage without keeping the tensor: the pool must see
# each as a holder. (torch 2.13 keeps a storage's Python object alive as long as any tensor
# uses the storage, so the Python object adds one use count whether the user holds it or not:
# only its Python reference count tells.)
def _untyped(out):
    return out.untyped_storage()


def _typed(out):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # TypedStorage is deprecated, not gone
        return out.storage()


def _set_onto(out):
    return torch.tensor([]).set_(out.untyped_storage())


def _storage_slice(out):
    return out.untyped_storage()[: 1 << 20]  # a storage of its own, on the output's bytes


def _in_a_container(out):
    return {"storage": [out.untyped_storage()]}


def _of_a_view(out):
    return out[100:].untyped_storage()


def _bytes(storage: torch.UntypedStorage) -> bytes:
    """A storage's bytes, through a uint8 tensor on it (bytes(storage) reads them one by one in
    Python: seconds for 2 MiB)."""
    return torch.empty(0, dtype=torch.uint8).set_(storage).numpy().tobytes()


def _read(held):
    """The held bytes, read through the holder itself."""
    if isinstance(held, dict):
        held = held["storage"][0]
    if isinstance(held, torch.Tensor):
        held = held.untyped_storage()
    if not isinstance(held, torch.UntypedStorage):
        held = held.untyped()  # TypedStorage
    return _bytes(held)


@pytest.mark.parametrize("hold", [_untyped, _typed, _set_onto, _storage_slice, _in_a_container, _of_a_view],
                         ids=lambda h: h.__name__.strip("_"))
def test_a_held_storage_is_never_overwritten(hold):
    cf = compile_fn(fn)
    a1, a2 = inputs(1.0), inputs(2.0)
    held = hold(cf(*a1))  # the output tensor dies at once; its storage lives on in `held`
    before = _read(held)
    assert before[:4096] == fn(*a1).numpy().tobytes()[:4096]
    for _ in range(3):
        torch.testing.assert_close(cf(*a2), fn(*a2))
    assert _read(held) == before


def test_a_storage_held_across_many_calls_and_then_dropped():
    # Held while later results come and go (each dropped at once), then let go: from then on the
    # pool recycles again.
    cf = compile_fn(fn)
    a1, a2 = inputs(1.0), inputs(2.0)
    st = cf(*a1).untyped_storage()
    before, held_ptr = _bytes(st), st.data_ptr()
    ptrs = {cf(*a2).data_ptr() for _ in range(5)}
    assert held_ptr not in ptrs
    assert len(ptrs) == 1  # the other buffer is recycled meanwhile
    assert _bytes(st) == before
    del st
    ptrs = [cf(*a2).data_ptr() for _ in range(5)]
    assert len(set(ptrs[1:])) == 1
    torch.testing.assert_close(cf(*a2), fn(*a2))


def test_outputs_whose_storage_was_looked_at_are_still_recycled():
    # Asking for an output's storage (and dropping it) leaves torch's Python object on the
    # storage for as long as the pool holds it; that alone must not stop the recycling.
    cf = compile_fn(fn)
    a = inputs(1.0)
    out = cf(*a)
    first = out.data_ptr()
    assert out.untyped_storage().nbytes() == out.numel() * 4
    assert _typed(out).size() == out.numel()
    del out
    for _ in range(3):
        out = cf(*a)
        assert out.data_ptr() == first
        out.untyped_storage()
        del out
    torch.testing.assert_close(cf(*a), fn(*a))


def _receive(queue, got, go, verdict):
    """Another process: takes a tensor, says so, waits for `go`, then says whether the tensor
    still holds the same values."""
    t = queue.get()
    before = t.clone()
    got.set()
    go.wait()
    verdict.put(bool(torch.equal(t, before)))


def test_an_output_sent_to_another_process_is_never_overwritten():
    # torch.multiprocessing moves the storage to shared memory, which the receiver maps: no use
    # count in this process shows that holder.
    import torch.multiprocessing as mp

    ctx = mp.get_context("spawn")
    queue, verdict, got, go = ctx.Queue(), ctx.Queue(), ctx.Event(), ctx.Event()
    receiver = ctx.Process(target=_receive, args=(queue, got, go, verdict), daemon=True)
    receiver.start()
    try:
        cf = compile_fn(fn)
        a1, a2 = inputs(1.0), inputs(2.0)
        out = cf(*a1)
        queue.put(out)
        assert got.wait(120)
        del out
        for _ in range(3):
            torch.testing.assert_close(cf(*a2), fn(*a2))
        go.set()
        assert verdict.get(timeout=120)
    finally:
        receiver.join(30)
        if receiver.is_alive():
            receiver.kill()
