"""Hugging Face model classes under torch.compile(dynamic=True), on small configs (1 layer,
hidden 64, vocab 1000): every graph compiles (no eager fallback), inference and a training step
(forward and backward) match eager at every sequence length, and after the first two lengths
nothing is compiled again: no new Dynamo graph, no C++ build.

Before, the decoders' graphs (a SymInt placeholder per symbolic size, `full`/`view` arguments
naming them, GPT-2's math.pi as an f64 input) all ran eagerly; test_dynamic.py holds the
plain-torch reductions of those causes.

Dynamo's tracing of a model costs 4-8 s per case, so `make test` runs the models whose graphs
carry the most dynamic-shape features (GPT-2: SymInt `full`/`view` arguments and the math.pi
input; Llama: rotary embeddings, grouped-query `expand`; T5: relative position buckets over
`arange`) and `make test-models` (AUTOFUSE_ALL_MODELS=1) all eight in every mode:

    AUTOFUSE_ALL_MODELS=1   every model in every test (about 3.5 minutes on 2 cores)
"""

import os
from typing import Callable, Dict, List, Sequence

import pytest
import torch

import autofuse

transformers = pytest.importorskip("transformers")

HIDDEN, HEADS, VOCAB, POSITIONS = 64, 4, 1000, 128
BATCH = 2
SEQS = (8, 13, 24, 7)  # graphs may compile at the first two lengths, never after
IMAGE, PATCH = 32, 8  # ViT: the batch is its only dynamic size


def _build(name: str) -> torch.nn.Module:
    """The small model `name` with seeded random weights, dropout off."""
    t = transformers
    torch.manual_seed(0)
    common = dict(vocab_size=VOCAB, num_attention_heads=HEADS)
    decoder = dict(common, hidden_size=HIDDEN, intermediate_size=2 * HIDDEN, num_hidden_layers=1,
                   num_key_value_heads=2, max_position_embeddings=POSITIONS)
    encoder = dict(common, hidden_size=HIDDEN, intermediate_size=2 * HIDDEN, num_hidden_layers=1,
                   hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    if name == "gpt2":
        return t.GPT2Model(t.GPT2Config(n_layer=1, n_embd=HIDDEN, n_head=HEADS, vocab_size=VOCAB,
                                        n_positions=POSITIONS, resid_pdrop=0.0, embd_pdrop=0.0,
                                        attn_pdrop=0.0, bos_token_id=0, eos_token_id=0))
    if name == "bert":
        return t.BertModel(t.BertConfig(**encoder))
    if name == "llama":
        return t.LlamaModel(t.LlamaConfig(**decoder))
    if name == "qwen2":
        return t.Qwen2Model(t.Qwen2Config(**decoder))
    if name == "t5":
        return t.T5EncoderModel(t.T5Config(d_model=HIDDEN, d_ff=2 * HIDDEN, d_kv=HIDDEN // HEADS,
                                           num_layers=1, num_heads=HEADS, vocab_size=VOCAB,
                                           dropout_rate=0.0))
    if name == "vit":
        return t.ViTModel(t.ViTConfig(**{k: v for k, v in encoder.items() if k != "vocab_size"},
                                      image_size=IMAGE, patch_size=PATCH))
    if name == "distilbert":
        return t.DistilBertModel(t.DistilBertConfig(n_layers=1, dim=HIDDEN, n_heads=HEADS,
                                                    hidden_dim=2 * HIDDEN, vocab_size=VOCAB,
                                                    dropout=0.0, attention_dropout=0.0))
    if name == "opt":
        return t.OPTModel(t.OPTConfig(hidden_size=HIDDEN, ffn_dim=2 * HIDDEN, num_hidden_layers=1,
                                      num_attention_heads=HEADS, vocab_size=VOCAB,
                                      max_position_embeddings=POSITIONS, word_embed_proj_dim=HIDDEN,
                                      dropout=0.0, attention_dropout=0.0, activation_dropout=0.0))
    raise KeyError(name)


def _inputs(name: str, batch: int, seq: int, dtype: torch.dtype) -> Dict[str, torch.Tensor]:
    """The forward's keyword inputs: token ids [batch, seq], or ViT's pixels (seq: the batch)."""
    g = torch.Generator().manual_seed(seq)
    if name == "vit":
        return {"pixel_values": torch.randn(seq // 4 + 1, 3, IMAGE, IMAGE, generator=g).to(dtype)}
    return {"input_ids": torch.randint(0, VOCAB, (batch, seq), generator=g)}


def _forward(m: torch.nn.Module, kw: Dict[str, torch.Tensor]) -> torch.Tensor:
    return m(**kw)[0]


def _close(got: torch.Tensor, expected: torch.Tensor, tol: float, scale: float = 0.0) -> None:
    """assert_close with absolute tolerance `tol` times the larger of `scale` and the expected
    tensor's magnitude (a gradient of a key bias is rounding noise around 0 in both runs)."""
    mag = max(expected.detach().abs().max().item(), scale)
    torch.testing.assert_close(got, expected, atol=tol * mag, rtol=tol)


def _over_lengths(name: str, call: Callable[[Dict[str, torch.Tensor]], None], dtype: torch.dtype) -> List:
    """Runs `call` at every length of SEQS; asserts that no graph runs eagerly (neither from its
    compile nor after a failed run) and that lengths after the first two compile nothing (no
    Dynamo graph, no C++ build). Returns the records."""
    with autofuse.collect_records() as recs:
        for k, seq in enumerate(SEQS):
            graphs, builds = len(recs), autofuse.stats()["cxx_compiles"]
            call(_inputs(name, BATCH, seq, dtype))
            if k >= 2:
                assert len(recs) == graphs, f"seq {seq} compiled {[r.name for r in recs[graphs:]]}"
                assert autofuse.stats()["cxx_compiles"] == builds, f"seq {seq} built C++"
    assert recs and all(r.fallback == "" and r.num_kernels > 0 for r in recs), [
        (r.name, r.fallback) for r in recs]
    assert not [r.name for r in recs if r.runner.broken]  # no run fell back to eager either
    return recs


MODELS = ["gpt2", "bert", "llama", "t5", "vit", "qwen2", "distilbert", "opt"]
ALL_MODELS = os.environ.get("AUTOFUSE_ALL_MODELS") == "1"


def _models(default: Sequence[str]) -> List[str]:
    """The models a test runs: `default`, or all of them with AUTOFUSE_ALL_MODELS=1."""
    return list(MODELS if ALL_MODELS else default)


@pytest.mark.parametrize("name", _models(["gpt2", "llama", "t5"]))
def test_inference_fp32(name):
    _check_inference(name, torch.float32, 1e-4)


@pytest.mark.parametrize("name", _models(["llama"]))
def test_inference_bf16(name):
    _check_inference(name, torch.bfloat16, 2e-2)


def _check_inference(name: str, dtype: torch.dtype, tol: float) -> None:
    model = _build(name).to(dtype).eval()
    compiled = torch.compile(_forward, backend="autofuse", dynamic=True)

    def call(kw):
        with torch.no_grad():
            _close(compiled(model, kw).float(), _forward(model, kw).float(), tol)

    recs = _over_lengths(name, call, dtype)
    assert {r.tag for r in recs} == {"inference"}


@pytest.mark.parametrize("name", _models(["gpt2"]))
def test_training(name):
    model = _build(name).train()
    params = [p for p in model.parameters()]
    compiled = torch.compile(_forward, backend="autofuse", dynamic=True)

    def call(kw):
        got = compiled(model, kw)
        grad_out = torch.randn_like(got)
        grads = torch.autograd.grad(got, params, grad_out, allow_unused=True)
        expected = _forward(model, kw)
        expected_grads = torch.autograd.grad(expected, params, grad_out, allow_unused=True)
        _close(got, expected, 1e-4)
        largest = max(e.abs().max().item() for e in expected_grads if e is not None)
        for g, e in zip(grads, expected_grads):
            assert (g is None) == (e is None)
            if e is not None:
                _close(g, e, 1e-3, 1e-3 * largest)

    recs = _over_lengths(name, call, torch.float32)
    assert {r.tag for r in recs} == {"fw", "bw"}
