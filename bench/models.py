"""The Hugging Face models `make bench-models` times: built from their `transformers` config
classes with random weights (never downloaded), dropout off so compiled and eager gradients can
be compared, with example inputs of a given batch and sequence length.

MODELS are the five the benchmark's targets are stated for; EXTRA_MODELS check that the compiler
(not the benchmark) improved: other architectures, other activations, other norms;
VISION_MODELS are ResNet-50 and ConvNeXt-T (BatchNorm + ReLU, LayerNorm + GELU between
convolutions).
"""
from __future__ import annotations

import dataclasses
from typing import Callable, Dict, Tuple

import torch


@dataclasses.dataclass(frozen=True)
class ModelSpec:
    """How to build one model and its inputs."""

    build: Callable[[], torch.nn.Module]
    vocab: int = 0  # token inputs drawn from [0, vocab); 0: an image model (pixel_values)
    image: int = 0  # image side for pixel_values
    batch: int = 4  # the default (training-size) batch
    seq: int = 128  # the default sequence length


def _bert() -> torch.nn.Module:
    from transformers import BertConfig, BertModel

    return BertModel(BertConfig(num_hidden_layers=2, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0))


def _gpt2() -> torch.nn.Module:
    from transformers import GPT2Config, GPT2Model

    return GPT2Model(GPT2Config(n_layer=2, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0))


def _llama() -> torch.nn.Module:
    from transformers import LlamaConfig, LlamaModel

    return LlamaModel(LlamaConfig(hidden_size=512, intermediate_size=1376, num_hidden_layers=2,
                                  num_attention_heads=8, num_key_value_heads=2, vocab_size=32000,
                                  max_position_embeddings=2048))


def _t5() -> torch.nn.Module:
    from transformers import T5Config, T5EncoderModel

    return T5EncoderModel(T5Config(d_model=512, d_ff=2048, d_kv=64, num_layers=2, num_heads=8,
                                   dropout_rate=0.0))


def _vit() -> torch.nn.Module:
    from transformers import ViTConfig, ViTModel

    return ViTModel(ViTConfig(num_hidden_layers=2, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0))


def _qwen2() -> torch.nn.Module:
    from transformers import Qwen2Config, Qwen2Model

    return Qwen2Model(Qwen2Config(hidden_size=512, intermediate_size=1408, num_hidden_layers=2,
                                  num_attention_heads=8, num_key_value_heads=2, vocab_size=32000,
                                  max_position_embeddings=2048))


def _distilbert() -> torch.nn.Module:
    from transformers import DistilBertConfig, DistilBertModel

    return DistilBertModel(DistilBertConfig(n_layers=2, dropout=0.0, attention_dropout=0.0))


def _opt() -> torch.nn.Module:
    from transformers import OPTConfig, OPTModel

    return OPTModel(OPTConfig(hidden_size=768, ffn_dim=3072, num_hidden_layers=2, num_attention_heads=12,
                              dropout=0.0, attention_dropout=0.0, activation_dropout=0.0))


def _resnet50() -> torch.nn.Module:
    from transformers import ResNetConfig, ResNetModel

    return ResNetModel(ResNetConfig())  # the defaults are ResNet-50: bottlenecks, depths 3-4-6-3


def _convnext() -> torch.nn.Module:
    from transformers import ConvNextConfig, ConvNextModel

    return ConvNextModel(ConvNextConfig())  # the defaults are ConvNeXt-T: depths 3-3-9-3, 96-768


MODELS: Dict[str, ModelSpec] = {
    "bert": ModelSpec(_bert, vocab=30522),
    "gpt2": ModelSpec(_gpt2, vocab=50257),
    "llama": ModelSpec(_llama, vocab=32000),
    "t5": ModelSpec(_t5, vocab=32128),
    "vit": ModelSpec(_vit, image=224, batch=2),
}

EXTRA_MODELS: Dict[str, ModelSpec] = {
    "qwen2": ModelSpec(_qwen2, vocab=32000),
    "distilbert": ModelSpec(_distilbert, vocab=30522),
    "opt": ModelSpec(_opt, vocab=50272),
}

# Convolutional networks (full depth: their norms and activations between convolutions are the
# vector work): timed by default beside MODELS, their geomeans apart.
VISION_MODELS: Dict[str, ModelSpec] = {
    "resnet50": ModelSpec(_resnet50, image=224, batch=2),
    "convnext": ModelSpec(_convnext, image=224, batch=2),
}

ALL_MODELS: Dict[str, ModelSpec] = {**MODELS, **EXTRA_MODELS, **VISION_MODELS}


def family(name: str) -> str:
    """"vision" for VISION_MODELS, else "language" (ViT counts with the transformers)."""
    return "vision" if name in VISION_MODELS else "language"


def build(name: str, dtype: torch.dtype, train: bool) -> torch.nn.Module:
    """The model `name` with seeded random weights, in `dtype`, in train or eval mode."""
    torch.manual_seed(0)
    model = ALL_MODELS[name].build().to(dtype)
    return model.train(train)


def example_inputs(name: str, batch: int, seq: int, seed: int = 1) -> Dict[str, torch.Tensor]:
    """The keyword inputs of `name`'s forward: input_ids [batch, seq], or pixel_values
    [batch, 3, image, image] for an image model (seq ignored)."""
    spec = ALL_MODELS[name]
    g = torch.Generator().manual_seed(seed)
    if spec.vocab:
        return {"input_ids": torch.randint(0, spec.vocab, (batch, seq), generator=g)}
    return {"pixel_values": torch.randn(batch, 3, spec.image, spec.image, generator=g)}


def default_shape(name: str) -> Tuple[int, int]:
    """(batch, seq) the issue's numbers are stated at."""
    spec = ALL_MODELS[name]
    return spec.batch, spec.seq
