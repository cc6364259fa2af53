"""Memory per GPU of a training layout (model states and activations) or of a serving instance
(weights and KV cache; ``infer.py`` works it out): docs/workload.md, "Memory per GPU".

**Model states**, as Megatron-LM keeps them with Adam (docs/source/api-guide/dist_optimizer.md):
bf16 weights (2 bytes per parameter), fp32 gradients (4) and fp32 weights, momentum and variance
(12: ZeRO's K, Rajbhandari et al., SC'20, arXiv:1910.02054, section 3.1), 18 bytes in all (fp16
weights: 2 + 2 + 16; fp32: 4 + 4 + 8). ZeRO stage 1 shards the optimizer state over the
``dp x cp`` ranks, stage 2 the gradients as well, stage 3 (FSDP) the weights as well. ``tp``
splits every weight and a pipeline stage holds its ``ceil(L / pp)`` layers' share, the first stage
the input embedding (``vocab x h``) as well and the last the output layer (as many, untied as the
presets' are); routed experts split over ``ep`` more, and shard over the ``dp / ep`` ranks holding
the same experts (Megatron-Core's expert-data-parallel group, as ``ibcalc train``'s edp- phases).

**Activations** (Korthikanti et al., "Reducing Activation Recomputation in Large Transformer
Models", MLSys 2023, arXiv:2205.05198, section 4 and table 2), per layer and micro-batch in units
of ``s b h`` bytes for 16-bit activations: 10 units a tensor-parallel group leaves whole without
sequence parallelism, and split over it the queries (2), keys and values (``4 kv_heads / heads``),
the output projection's input (2) and the MLP (:func:`mlp_units`: 16 for GPT's 4h GeLU MLP); GPT's
layer is the paper's 34 units. ``--recompute none`` adds the attention scores, ``5 a s / h``
(FlashAttention, Dao et al. 2022, arXiv:2205.14135, and selective recomputation leave them out:
the default), ``full`` keeps the layer's input alone, ``2 s b h`` (split along the sequence with
sequence parallelism). Context parallelism splits ``s`` over ``cp``. In 1F1B the first stage holds
the activations of ``min(pp, M)`` micro-batches for its ``ceil(L / pp)`` layers (section 4.2.3),
a model's dense layers first. The last stage keeps one micro-batch's output layer besides:
``4 s b h / t (1 + v / h)`` with sequence parallelism (section 4.3: the final layer norm's and the
output projection's inputs, and the logits in fp32 for the cross-entropy loss, ``4 s b v / t``).

Not counted: the input embedding's dropout mask (``s b h p / t`` bytes, section 4.3, and none in
Llama's recipe), the weights ZeRO-3 gathers for one layer at a time, the CUDA context, NCCL's
buffers and the allocator's fragmentation.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable
from enum import StrEnum
from typing import TYPE_CHECKING, NamedTuple

from ibcalc.memo import IdentityMemo
from ibcalc.units import GiB, KiB, MiB, format_share, memory_size

if TYPE_CHECKING:
    from ibcalc.catalogue.models import System
    from ibcalc.engine.types import DType
    from ibcalc.workload.model import ModelSpec
    from ibcalc.workload.train import TrainSpec

__all__ = [
    "ADAM_STATE_BYTES_PER_PARAM",
    "FP32_MASTER_BYTES_PER_PARAM",
    "OUT_OF_MEMORY",
    "TIGHT",
    "TIGHT_FRACTION",
    "GpuMemory",
    "Recompute",
    "ServingMemory",
    "TrainMemory",
    "activation_bytes_per_layer",
    "apart_sizes",
    "busiest_candidates",
    "candidate_stages",
    "capacity_size",
    "excess_words",
    "gpu_capacity",
    "in_flight",
    "judge_fit",
    "memory_size",
    "mlp_units",
    "output_layer_bytes",
    "percent",
    "stage_layers",
    "stage_params",
    "train_memory",
    "weights_per_gpu",
]

#: fp32 master weights + Adam momentum + variance: 4 + 4 + 4 bytes per parameter (ZeRO, 3.1).
ADAM_STATE_BYTES_PER_PARAM = 12
#: The fp32 master copy's share of that: none is kept when the weights are fp32 already.
FP32_MASTER_BYTES_PER_PARAM = 4
#: Gradient and optimizer-state bytes per parameter by the weights' type, as Megatron-LM keeps
#: them with Adam (docs/source/api-guide/dist_optimizer.md, "Data flow": 18 bytes per parameter
#: for bf16 weights with fp32 gradients, 20 for fp16 with fp16 gradients and an fp32 copy of them
#: in the optimizer, 16 for fp32): bf16 weights accumulate fp32 gradients (its default for bf16),
#: and the optimizer holds fp32 weights, momentum and variance (12 bytes, ZeRO section 3.1's K).
#: The gradients on the wire are ``--grad-dtype``'s, a separate choice.
_STATE_BYTES: dict[str, tuple[int, int]] = {
    "bf16": (4, ADAM_STATE_BYTES_PER_PARAM),
    "fp16": (2, ADAM_STATE_BYTES_PER_PARAM + 4),
    "fp32": (4, ADAM_STATE_BYTES_PER_PARAM - FP32_MASTER_BYTES_PER_PARAM),
}
#: Korthikanti et al.'s activation bytes assume 16-bit activations (2 bytes per element).
_PAPER_ACT_BYTES = 2
#: The cross-entropy loss keeps the logits in fp32, whatever the activations' type (Korthikanti
#: et al., section 4.3, ``4 s b v / t``; Megatron's vocab-parallel cross entropy casts them).
_LOGIT_BYTES = 4
#: Past this share of the GPU's memory a layout is called tight: what is not counted (the CUDA
#: context, NCCL's buffers, fragmentation) has less than a tenth of the memory left.
#: A policy for the warning, not a measured figure: "fits" is a necessary condition only.
TIGHT_FRACTION = 0.9
#: How :func:`judge_fit`'s two warnings start, for those who tell them apart (``--compare``)
OUT_OF_MEMORY, TIGHT = "out of memory", "memory is tight"


class Recompute(StrEnum):
    """Which activations the backward pass recomputes instead of storing."""

    NONE = "none"
    SELECTIVE = "selective"
    FULL = "full"


#: Korthikanti et al.'s per-layer activations in units of ``s b h`` bytes (16-bit): the parts a
#: tensor-parallel group does not split without sequence parallelism, two layer norms' inputs (4),
#: the attention's and the MLP's inputs (2 + 2) and their dropout masks (1 + 1) ...
_UNSPLIT_UNITS = 10
#: ... of which the two dropout masks, which a model trained without dropout does not store
_DROPOUT_MASK_UNITS = 2
#: Without recompute, the attention scores per ``a s / h``: the softmax output (2), its dropout
#: mask (1) and the dropout's output (2), Korthikanti et al.'s ``5 a s / h``; without dropout
#: the softmax output alone feeds the product with the values
_SCORE_UNITS = {True: 5, False: 2}
#: ... and the attention parts it splits: queries (2), the output projection's input (2); keys
#: and values add ``2 x 2 x kv_heads / heads`` (4 with one key/value head per query head)
_ATTENTION_SPLIT_UNITS = 4
#: A GPT MLP of width ``f`` stores its GeLU's input and the second matrix's input: ``2 x 2 f / h``
#: units (16 at f = 4h). A gated (SwiGLU) MLP stores its first matrices' output, ``2f`` wide, and
#: the second matrix's input: ``3 x 2 f / h``. Megatron-Core's fused SwiGLU keeps only the first
#: of those for its backward pass and recomputes the SiLU and the product there
#: (megatron/core/fusions/fused_bias_swiglu.py, on by default with --swiglu).
_MLP_UNITS_PER_WIDTH = {False: 4, True: 6}


def mlp_units(model: ModelSpec, *, moe: bool) -> float:
    """The MLP's activations a tensor-parallel group splits, in ``s b h`` units: GPT's 16 at
    width 4h; for a mixture-of-experts layer, every expert a token passes (top-k routed and the
    shared ones) and the token's top-k copies dispatched to them (``2 x top_k``)."""
    assert model.hidden is not None
    per_width = _MLP_UNITS_PER_WIDTH[model.gated_mlp]
    if not moe:
        width = model.ffn_hidden or 4 * model.hidden
        return per_width * width / model.hidden
    top_k = model.top_k or 1
    width = model.moe_ffn_hidden or model.ffn_hidden or 4 * model.hidden
    experts = top_k + model.shared_experts
    return experts * per_width * width / model.hidden + 2 * top_k


class _Latent(NamedTuple):
    """Multi-head latent attention's stored activations, in ``s b h`` units (16-bit): the
    queries and output projection's input, the keys and values every head expands from the
    latent, and the latents themselves, which every tensor-parallel rank computes whole."""

    queries_out: float
    keys_values: float
    latents: float


def _latent(model: ModelSpec) -> _Latent | None:
    """DeepSeek-V2/V3's MLA (arXiv:2412.19437, section 2.1.1): each of the ``a`` heads has a
    query and key of ``d_h + d_h^R`` and a value of ``d_h``, up-projected from the latents
    ``c_Q`` (``d_c'`` wide) and ``c_KV`` (``d_c``); as Korthikanti et al. count a layer, the
    core attention stores the queries, keys and values and the output projection its input, and
    each latent's norm and up-projection store their inputs, 2 x 2 x (d_c' + d_c) bytes."""
    head = model.head_dim_or_derived
    if model.kv_lora_rank is None or not model.heads or not model.hidden or head is None:
        return None
    qk = head + (model.rope_head_dim or 0)
    per_part = 2 * model.heads / model.hidden
    return _Latent(
        queries_out=per_part * (qk + head),
        keys_values=per_part * (qk + head),
        latents=2 * 2 * ((model.q_lora_rank or 0) + model.kv_lora_rank) / model.hidden,
    )


class _Shape(NamedTuple):
    """What the memory model reads of a model, worked out once per model object (a layout
    search asks thousands of times)."""

    kv_ratio: float  # kv_heads / heads (1 where not stated)
    kv_heads: int  # 0 where not stated (for MLA: the heads, each with its own key and value)
    # MLA (kv_lora_rank stated): the attention's units by part, else None
    latent: _Latent | None
    dense_mlp: float  # mlp_units of a dense layer
    moe_mlp: float  # mlp_units of a mixture-of-experts layer (0 for a dense model)
    dense_layers: int  # the dense layers, first in the model (0 without a layer count)
    moe_layers: int  # the mixture-of-experts layers


#: id(model) -> (model, its shape): the model is kept, so that an id reused by a new object
#: after the old one died is never taken for it (as ibcalc.memo.IdentityMemo, without its
#: general key, which a layout search's thousands of lookups would pay for)
_SHAPES: dict[int, tuple[ModelSpec, _Shape]] = {}


def _shape(model: ModelSpec) -> _Shape:
    heads = model.heads
    kv_heads = model.kv_heads if model.kv_heads is not None else heads
    kv_ratio = kv_heads / heads if kv_heads is not None and heads else 1.0
    moe_layers = model.moe_layer_count() if model.is_moe and model.layers else 0
    latent = _latent(model)
    return _Shape(
        kv_ratio=kv_ratio,
        kv_heads=(heads or 0) if latent is not None else kv_heads or 0,
        latent=latent,
        dense_mlp=mlp_units(model, moe=False) if model.hidden else 0.0,
        moe_mlp=mlp_units(model, moe=True) if model.is_moe and model.hidden else 0.0,
        dense_layers=(model.layers or 0) - moe_layers,
        moe_layers=moe_layers,
    )


def shape_of(model: ModelSpec) -> _Shape:
    """``model``'s :class:`_Shape`, memoised by identity."""
    hit = _SHAPES.get(id(model))
    if hit is not None and hit[0] is model:
        return hit[1]
    if len(_SHAPES) >= 64:
        _SHAPES.clear()
    shape = _shape(model)
    _SHAPES[id(model)] = (model, shape)
    return shape


def activation_bytes_per_layer(
    *,
    seq: int,
    micro_batch: int,
    hidden: int,
    heads: int | None,
    kv_ratio: float,
    mlp: float,
    tp: int,
    sequence_parallel: bool,
    recompute: Recompute,
    act_bytes: int,
    context: int | None = None,
    kv_split: float | None = None,
    attention: tuple[float, float, float] | None = None,
    dropout: bool = True,
) -> float | None:
    """Bytes one transformer layer stores for one micro-batch (Korthikanti et al., table 2,
    with the attention's keys and values scaled by ``kv_ratio = kv_heads / heads`` and the MLP's
    part ``mlp`` from :func:`mlp_units`; GPT's layer is ``kv_ratio`` 1 and ``mlp`` 16, 34 units).

    ``seq`` is the tokens one rank holds (after context parallelism), ``context`` the whole
    sequence its queries attend to (default ``seq``): context parallelism gathers every rank's
    keys and values (Llama 3's all-gather), and each query scores them all. ``kv_split`` is the
    keys and values over the busiest rank's share (default ``tp``; ``kv_heads / ceil(kv_heads /
    tp)``, :meth:`~ibcalc.workload.model.ModelSpec.kv_split`): past ``kv_heads`` they are
    copied. ``attention`` replaces the attention's units where they are
    not multi-head attention's: (queries and output-projection input, keys and values, units
    left whole like the 10), as latent attention (MLA) stores them; ``kv_ratio`` is then unused.
    None where the formula needs the heads (``recompute`` none) and they are not known.
    """
    sbh = float(seq) * micro_batch * hidden
    scale = act_bytes / _PAPER_ACT_BYTES
    # sequence parallelism splits over tp what tensor parallelism alone leaves whole
    whole = tp if sequence_parallel and tp > 1 else 1
    if recompute is Recompute.FULL:
        # the layer's input alone (split along the sequence with sequence parallelism)
        return 2 * sbh / whole * scale
    whole_seq = context or seq
    queries_out, kv_units, unsplit = attention or (_ATTENTION_SPLIT_UNITS, 4 * kv_ratio, 0.0)
    keys_values = kv_units * whole_seq / seq / (kv_split or tp)
    split = queries_out + mlp
    if recompute is Recompute.NONE:
        if heads is None:
            return None
        split += _SCORE_UNITS[dropout] * heads * whole_seq / hidden
    masks = 0 if dropout else _DROPOUT_MASK_UNITS
    return sbh * ((_UNSPLIT_UNITS - masks + unsplit) / whole + split / tp + keys_values) * scale


def output_layer_bytes(
    *,
    seq: int,
    micro_batch: int,
    hidden: int,
    vocab: int,
    tp: int,
    sequence_parallel: bool,
    act_bytes: int,
) -> float:
    """Bytes the output layer stores for one micro-batch of ``seq`` tokens per rank (Korthikanti
    et al., section 4.3, ``4 s b h / t (1 + v / h)`` with sequence parallelism): the final layer
    norm's input and the output projection's input, ``2 s b h`` each in 16 bits (whole on every
    tensor-parallel rank without sequence parallelism, split over it with), and the logits the
    cross-entropy loss keeps in fp32, ``4 s b v / t`` (the vocabulary split over tp). Recompute
    leaves them: it recomputes transformer layers only."""
    tokens = float(seq) * micro_batch
    whole = tp if sequence_parallel and tp > 1 else 1
    inputs = 2 * 2 * tokens * hidden / whole * act_bytes / _PAPER_ACT_BYTES
    return inputs + _LOGIT_BYTES * tokens * vocab / tp


# plain dataclasses, neither pydantic models nor frozen: a layout search builds thousands (a
# frozen one takes three times as long to build), and every value is worked out in this module,
# so there is nothing to validate; read them, do not change them
@dataclasses.dataclass(slots=True, kw_only=True)
class GpuMemory:
    """Memory one GPU needs, by part, against what it has (training's :class:`TrainMemory`,
    serving's :class:`ServingMemory`)."""

    #: one GPU's memory; None: not known (give --gpu-memory)
    capacity_bytes: float | None
    #: where the capacity comes from ("dgx-h100's 80.0 GiB per GPU", "{gpu_memory} 74.5 GiB")
    capacity_from: str | None
    #: where the capacity is not known, the largest GPU memory of the preset's variants
    #: (``dgx-a100``: 80 GiB), which a layout past it fits on none of; None: not known either
    largest_bytes: float | None = None
    #: what is counted: the sum of :meth:`parts` (worked out once, on construction)
    total_bytes: float = dataclasses.field(init=False)

    def __post_init__(self) -> None:
        self.total_bytes = self._total()

    def _total(self) -> float:
        """The sum of :meth:`parts`, without building them."""
        raise NotImplementedError

    def parts(self) -> list[tuple[str, float]]:
        """(name, bytes) of every part counted."""
        raise NotImplementedError

    @property
    def used_fraction(self) -> float | None:
        """Total over capacity; None when the capacity is not known."""
        return None if self.capacity_bytes is None else self.total_bytes / self.capacity_bytes

    @property
    def room(self) -> str:
        """``room`` (within :data:`TIGHT_FRACTION` of the GPU's memory), ``tight`` (past it,
        within the memory: what the count leaves out may not fit), ``out of memory``, or
        ``unknown`` (the GPU's memory is not known); ``train --compare`` ranks layouts in that
        order, an unknown one with those with room (nothing to move it by)."""
        used = self.used_fraction
        if used is None:
            return "out of memory" if self.past_every_variant else "unknown"
        return "room" if used <= TIGHT_FRACTION else "tight" if used <= 1 else "out of memory"

    @property
    def past_every_variant(self) -> bool:
        """True where the capacity is not known but the total is past the largest variant's
        (:attr:`largest_bytes`): out of memory on every GPU the preset is sold with."""
        return (
            self.capacity_bytes is None
            and self.largest_bytes is not None
            and self.total_bytes > self.largest_bytes
        )

    @property
    def fits(self) -> bool | None:
        """True when the total is within the GPU's memory; None when that is not known."""
        used = self.used_fraction
        if used is None:
            return False if self.past_every_variant else None
        return used <= 1.0

    def parts_words(self) -> str:
        """The parts, e.g. "weights 8.15 GiB + gradients 16.3 GiB + ...", for notes."""
        return " + ".join(f"{name} {memory_size(value)}" for name, value in self.parts())


@dataclasses.dataclass(slots=True, kw_only=True)
class TrainMemory(GpuMemory):
    """Memory one GPU of a training layout needs, by part, against what it has."""

    params_per_gpu: float
    weights_bytes: float
    gradients_bytes: float
    optimizer_bytes: float
    #: None: the layer count, hidden size or sequence length is not known
    activations_bytes: float | None
    recompute: Recompute
    #: the output layer's activations, its inputs and fp32 logits (:func:`output_layer_bytes`):
    #: 0 but on the last pipeline stage, or where the vocabulary is not known
    output_bytes: float = 0.0
    #: the pipeline stage these are of (0: the first), the busiest
    stage: int = 0

    def _total(self) -> float:
        return _train_total(
            self.weights_bytes,
            self.gradients_bytes,
            self.optimizer_bytes,
            self.activations_bytes,
            self.output_bytes,
        )

    def parts_words(self) -> str:
        words = GpuMemory.parts_words(self)
        return words if self.activations_bytes is not None else words + " (activations not counted)"

    def parts(self) -> list[tuple[str, float]]:
        """Model states, then activations (see the module's "not counted")."""
        parts = [
            ("weights", self.weights_bytes),
            ("gradients", self.gradients_bytes),
            ("optimizer", self.optimizer_bytes),
        ]
        if self.activations_bytes is not None:
            how = "no" if self.recompute is Recompute.NONE else self.recompute.value
            parts.append((f"activations ({how} recompute)", self.activations_bytes))
        if self.output_bytes:
            parts.append(("output layer (logits)", self.output_bytes))
        return parts


def _train_total(
    weights: float, gradients: float, optimizer: float, activations: float | None, output: float
) -> float:
    """:attr:`TrainMemory.total_bytes` of those parts (:func:`train_memory` weighs the stages
    by it before building the busiest one's)."""
    return weights + gradients + optimizer + (activations or 0.0) + output


@dataclasses.dataclass(slots=True, kw_only=True)
class ServingMemory(GpuMemory):
    """Memory one GPU of a serving instance needs: its weights and its share of the KV cache."""

    weights_bytes: float
    #: None: the KV cache's size is not known (no layer count)
    kv_cache_bytes: float | None

    def _total(self) -> float:
        return self.weights_bytes + (self.kv_cache_bytes or 0.0)

    def parts_words(self) -> str:
        words = GpuMemory.parts_words(self)
        return words if self.kv_cache_bytes is not None else words + " (KV cache not counted)"

    def parts(self) -> list[tuple[str, float]]:
        """Weights, then the KV cache."""
        parts = [("weights", self.weights_bytes)]
        if self.kv_cache_bytes is not None:
            parts.append(("KV cache", self.kv_cache_bytes))
        return parts


def decimal_capacity_note(given_bytes: float | None) -> str | None:
    """A note where ``--gpu-memory`` was given in decimal GB (80GB is 74.5 GiB), which reads as a
    vendor's figure but is 7 % less than one."""
    if given_bytes is None or given_bytes % 1e9 or not given_bytes % GiB:
        return None
    # in TB where it is whole in hundredths of a TB (1TB had been restated as 1000GB and
    # 1000GiB offered for it, a review; 1024GB is not 1.024TB, a second review; 1.25TB is)
    tera = given_bytes >= 1e12 and not given_bytes % 1e10
    unit, binary, scale = ("TB", "TiB", 1e12) if tera else ("GB", "GiB", 1e9)
    value = f"{given_bytes / scale:g}"
    return (
        f"{{gpu_memory}} {value}{unit} is {memory_size(given_bytes)} ({unit} = 10^"
        f"{round(math.log10(scale))} B); a vendor's {value}{unit} GPU has {value} {binary}: "
        f"write {value}{binary} for it"
    )


#: The bytes of each unit a memory size prints in.
_MEMORY_UNITS = {"B": 1, "KiB": KiB, "MiB": MiB, "GiB": GiB}


def capacity_size(size_bytes: float) -> str:
    """One GPU's memory as :func:`memory_size` prints it, with the digits (3 to 9) it takes to
    read back as the same byte count where some do: ``--gpu-memory 54.81GiB`` had printed back
    as 54.8 GiB, a digit of the size typed lost. A size no such digits write (80GB, 74.505...
    GiB) keeps three."""
    for digits in range(3, 10):
        text = memory_size(size_bytes, digits=digits)
        number, unit = _amount(text)
        if round(number * _MEMORY_UNITS.get(unit, 0)) == round(size_bytes):
            return text
    return memory_size(size_bytes)


def gpu_capacity(
    given_bytes: float | None, system: System | None
) -> tuple[float | None, str | None]:
    """One GPU's memory and where it comes from: the one given (``{gpu_memory}``), else the
    system preset's; (None, None) when neither states one."""
    if given_bytes is not None:
        return given_bytes, f"{{gpu_memory}} {capacity_size(given_bytes)}"
    if system is not None and system.gpu_memory_bytes is not None:
        size = capacity_size(system.gpu_memory_bytes)
        return system.gpu_memory_bytes, f"{system.id}'s {size} per GPU"
    return None, None


def judge_fit(
    memory: GpuMemory,
    system: System | None,
    *,
    remedies: Callable[[], str],
    uncounted: str,
    warnings: list[str],
    notes: list[str],
) -> None:
    """A warning where ``memory`` does not fit (with ``remedies()``, what would shrink it) or is
    tight (past :data:`TIGHT_FRACTION`; ``uncounted`` names what is left out), a note where the
    GPU's memory is not known."""
    used = memory.used_fraction
    if used is not None and used <= TIGHT_FRACTION:
        return  # fits with room: nothing to say (the common case of a layout search)
    # near 100 % one more digit, so that 80.05 GiB does not read as 80 GiB against 80 GiB
    need = memory_size(memory.total_bytes, digits=4 if used and 0.995 <= used < 1.005 else 3)
    if used is None and memory.past_every_variant and system is not None:
        # more than the largest variant holds: out of memory whichever variant it is (a search
        # on dgx-a100 had ranked first a layout of 172 GiB per GPU: review CN)
        need, largest = apart_sizes(memory.total_bytes, system.gpu_memory_largest_bytes or 0.0)
        warnings.append(
            f"{OUT_OF_MEMORY} on every variant: {need} per GPU, more than the largest "
            f"{system.id} GPU's {largest} ({system.gpu}); {remedies()}"
        )
    elif used is None:
        why = (
            f"{system.id} does not state one GPU memory ({system.gpu})"
            if system is not None
            else "no system preset states the GPUs' memory"
        )
        notes.append(f"memory fit not checked: {why}; give {{gpu_memory}} (needs {need} per GPU)")
    elif used > 1:
        warnings.append(
            f"{OUT_OF_MEMORY} ({percent(used)}{excess_words(memory, need)}): {need} per GPU "
            f"against {memory.capacity_from}; {remedies()}"
        )
    else:
        warnings.append(
            f"{TIGHT} ({percent(used)}{excess_words(memory, need)}): {need} per GPU of "
            f"{memory.capacity_from}, leaving less than a tenth for what is not counted "
            f"({uncounted})"
        )


def excess_words(memory: GpuMemory, need: str) -> str:
    """``", 2.94 MiB over"`` (``", 1 B to spare"``) where ``need``, the total as printed, reads
    the same number as the capacity but is not it, else "": "54.80 GiB per GPU against
    --gpu-memory 54.8 GiB" had not said why it was out of memory (a review)."""
    if memory.capacity_bytes is None:
        return ""
    gap = memory.total_bytes - memory.capacity_bytes
    if not gap or _amount(need) != _amount(capacity_size(memory.capacity_bytes)):
        return ""
    return f", {memory_size(abs(gap))} {'over' if gap > 0 else 'to spare'}"


def apart_sizes(need_bytes: float, largest_bytes: float) -> tuple[str, str]:
    """Two memory sizes, the first past the second, printed with the digits (3 to 9) it takes
    for them to read apart: 80 GiB had read more than the largest variant's 80 GiB (reviews CQ,
    CR). Apart means the numbers printed differ, not their text: with trailing zeros kept,
    "80.00 GiB" past "80.0 GiB" reads as the same size (80.0004 GiB had stopped there)."""
    for digits in range(3, 10):
        need, largest = memory_size(need_bytes, digits=digits), memory_size(largest_bytes)
        if _amount(need) != _amount(largest):
            return need, largest
    return need, largest


def _amount(size: str) -> tuple[float, str]:
    """The number and unit a memory size prints (``1,350 GiB`` -> ``(1350.0, 'GiB')``)."""
    number, _, unit = size.rpartition(" ")
    return float(number.replace(",", "")), unit


def percent(fraction: float) -> str:
    """A share of the GPU's memory: as every share prints below 99.5 % (:func:`format_share`:
    whole percent from 10 %, two figures below; a 10M-parameter model's 172 MiB of 288 GiB had
    read "0%"), whole percent past 100.5 %, and one decimal between (where 99.6 % fits and
    100.4 % does not), rounded away from 100 % there, so that a share that fits never reads
    100.0 % over and one that does not never reads 100.0 % (99.96 % is 99.9 %, 100.04 % 100.1 %;
    exactly 1 fits, 100.0 %). A share over by less than the float guard below gets the
    decimals it takes to read over: 1 B past 54.8 GiB is 100.000000002 %."""
    if fraction < 0.995:
        return format_share(fraction)
    if fraction >= 1.005:
        return f"{fraction:,.0%}"  # 20,954,808%: a share far past the GPU has separators
    tenths = round(fraction * 1000, 6)  # 0.997 x 1000 is 996.9999...: float noise, not a tenth
    shown = math.floor(tenths) if fraction <= 1 else math.ceil(tenths)
    if fraction > 1 and shown <= 1000:
        # over by a byte had read "out of memory (100.0%)" (a review): its first figure,
        # rounded up, written out so that no float sum loses it
        excess = (fraction - 1) * 100  # percentage points
        decimals = -math.floor(math.log10(excess))
        units = math.ceil(excess * 10**decimals)  # 1 to 10
        if units == 10:  # 9.6e-9 up is 1e-8: 100.00000001 %, not 100.000000010 %
            decimals, units = decimals - 1, 1
        return f"100.{units:0{decimals}d}%"
    return f"{shown / 10:.1f}%"


def stage_layers(model: ModelSpec, pp: int, stage: int, virtual: int = 1) -> tuple[int, int]:
    """(dense, mixture-of-experts) layers of pipeline stage ``stage`` (0 first): every stage but
    the last holds ``ceil(L / pp)`` layers, and a model's dense layers come first (DeepSeek-V3's
    three). With ``virtual`` model chunks per stage (interleaved 1F1B) the layers split into
    ``pp x virtual`` equal chunks and stage k holds chunks k, k + pp, k + 2 pp ... (Megatron-LM's
    virtual pipeline; the caller has checked that they divide)."""
    assert model.layers is not None
    dense = shape_of(model).dense_layers
    size = _chunk_layers(model.layers, pp, virtual)
    if virtual == 1:
        low, high = stage * size, min(model.layers, (stage + 1) * size)
        in_stage = max(0, high - low)
        dense_in_stage = max(0, min(high, dense) - low)
        return dense_in_stage, in_stage - dense_in_stage
    lows = [(stage + j * pp) * size for j in range(virtual)]
    dense_in_stage = sum(max(0, min(low + size, dense) - low) for low in lows)
    return dense_in_stage, size * virtual - dense_in_stage


def _chunk_layers(layers: int, pp: int, virtual: int) -> int:
    """Layers in one model chunk: ``ceil(L / pp)`` a stage (the last may hold fewer), or
    ``L / (pp v)`` interleaved, which the caller has checked divides."""
    return -(-layers // pp) if virtual == 1 else layers // (pp * virtual)


def busiest_candidates(model: ModelSpec, pp: int, virtual: int = 1) -> list[int]:
    """The pipeline stages one of which needs the most memory: the first (the most micro-batches
    in flight, the input embedding), the first holding no dense layer (a MoE model's dense
    layers come first and weigh less), and the last (the output layer); the first alone without
    a layer count."""
    stages = [0]
    if model.layers is None:
        return stages
    first_moe = -(-shape_of(model).dense_layers // _chunk_layers(model.layers, pp, virtual))
    stages += [first_moe] if 0 < first_moe < pp else []
    stages += [pp - 1] if pp - 1 not in stages else []
    return stages


def in_flight(pp: int, stage: int, microbatches: int, virtual: int = 1) -> float:
    """Micro-batches whose activations stage ``stage`` holds at its peak, in units of all its
    layers: ``min(pp - k, M)`` in 1F1B (Narayanan et al., SC'21, section 2.2.1). Interleaved over
    ``virtual`` = v chunks, Megatron-LM's schedule runs ``2 (pp - k - 1) + (v - 1) pp`` chunk
    forwards before its first backward and holds one more, each a ``1 / v`` share of the stage's
    layers (at most all ``v M``): on the first stage ``pp (1 + (pp - 1) / (pp v))`` micro-batches,
    Korthikanti et al.'s factor (arXiv:2205.05198, section 4.2.3)."""
    if virtual == 1:
        return min(pp - stage, microbatches)
    chunks = min(2 * (pp - stage - 1) + (virtual - 1) * pp + 1, virtual * microbatches)
    return chunks / virtual


def weights_per_gpu(
    model: ModelSpec,
    *,
    tp: int,
    pp: int,
    ep: int,
    layers: tuple[int, int] | None,
    notes: list[str],
    stage: int = 0,
) -> tuple[float, float]:
    """(shared, routed-expert) parameters one GPU of pipeline stage ``stage`` holds: ``tp``
    splits them, the stage holds its ``layers`` (dense, MoE) share of the transformer layers'
    (``1 / pp`` of every parameter without a layer count), the first stage the input embedding
    and the last the output layer, ``vocab x hidden`` each (Megatron's vocab-parallel embedding
    and output layer split over tp too), and the routed experts split over ``ep`` more. The
    routed experts go with the MoE layers; a dense layer's MLP (``ffn_hidden`` wide) and a MoE
    layer's shared experts with their layers, and the rest of the non-expert parameters
    (attention, norms, routers) evenly with every layer. Where the expert share is unknown,
    every parameter is counted as shared (an upper bound with ``ep > 1``, said in ``notes``)."""
    experts = model.expert_params
    total_layers = model.layers
    if layers is not None and total_layers:
        share = sum(layers) / total_layers
        embedding = model.embedding_params
    else:
        share, embedding = 1 / pp, 0.0
    if model.vocab is not None and not model.hidden:
        notes.append(
            "memory: {vocab} is not used without {hidden}: the embedding and output layer "
            "(vocab x hidden parameters each) are not told apart from the other parameters"
        )
    # the input embedding on the first stage, the output layer on the last (one stage: both)
    ends = embedding * ((stage == 0) + (stage == pp - 1))
    body = model.params - 2 * embedding
    if experts is None:
        if model.is_moe and ep > 1:
            notes.append(
                "memory: every parameter counted on each of the ep ranks (an upper bound; the "
                f"expert share is unknown: {model.expert_share_unknown})"
            )
        return (body * share + ends) / tp, 0.0
    shape = shape_of(model)
    moe_share = layers[1] / shape.moe_layers if layers is not None and shape.moe_layers else 1 / pp
    shared = (body - experts) * share
    dense_mlp, moe_mlp = _mlp_params(model)
    if layers is not None and total_layers and (dense_mlp or moe_mlp):
        # what every layer has alike: the non-expert parameters less the MLPs that differ
        common = body - experts - shape.dense_layers * dense_mlp - shape.moe_layers * moe_mlp
        if common > 0:
            shared = common * share + layers[0] * dense_mlp + layers[1] * moe_mlp
    return (shared + ends) / tp, experts * moe_share / (tp * ep)


def _mlp_params(model: ModelSpec) -> tuple[float, float]:
    """Parameters of a dense layer's MLP and of a MoE layer's shared experts: 2 matrices of
    ``h x width`` (GPT's), 3 gated (SwiGLU); 0 where the width or hidden size is not stated."""
    if not model.hidden:
        return 0.0, 0.0
    matrices = model.mlp_matrices
    dense = matrices * model.hidden * model.ffn_hidden if model.ffn_hidden else 0
    width = model.moe_ffn_hidden or model.ffn_hidden
    moe = model.shared_experts * matrices * model.hidden * width if width else 0
    return float(dense), float(moe)


def stage_params(
    model: ModelSpec, *, tp: int, pp: int, ep: int, stage: int, virtual: int = 1
) -> tuple[tuple[int, int] | None, float, float, tuple[str, ...]]:
    """Pipeline stage ``stage``'s (dense, MoE) layers (None without a layer count), its
    (shared, routed) parameters per GPU (:func:`weights_per_gpu`) and the notes those gave, for
    training and serving alike, memoised: a layout search asks for the same few thousands of
    times."""

    def make() -> tuple[tuple[int, int] | None, float, float, tuple[str, ...]]:
        layers = stage_layers(model, pp, stage, virtual) if model.layers is not None else None
        said: list[str] = []
        shared, routed = weights_per_gpu(
            model, tp=tp, pp=pp, ep=ep, layers=layers, notes=said, stage=stage
        )
        return layers, shared, routed, tuple(said)

    return _STAGE_PARAMS.get((id(model), tp, pp, ep, stage, virtual), (model,), make)


#: :func:`stage_params`'s values by (model id, its inputs), the model matched by identity; the
#: preset searches of benchmarks/engine_speed.py ask for 1,220 (degrees and stages of 5 models)
_STAGE_PARAMS: IdentityMemo[tuple[tuple[int, int] | None, float, float, tuple[str, ...]]] = (
    IdentityMemo(size=4096)
)

#: A pipeline stage and its :func:`stage_params`
StageParams = tuple[int, tuple[int, int] | None, float, float, tuple[str, ...]]


def candidate_stages(
    model: ModelSpec, *, tp: int, pp: int, ep: int, virtual: int = 1
) -> tuple[StageParams, ...]:
    """Each of :func:`busiest_candidates` with its :func:`stage_params`, memoised as a whole: a
    layout search asks for a layout's candidates twice (its memory, its gradient exchange's
    gating stage), for thousands of layouts."""

    def make() -> tuple[StageParams, ...]:
        return tuple(
            (stage, *stage_params(model, tp=tp, pp=pp, ep=ep, stage=stage, virtual=virtual))
            for stage in busiest_candidates(model, pp, virtual)
        )

    return _CANDIDATE_STAGES.get((id(model), tp, pp, ep, virtual), (model,), make)


#: :func:`candidate_stages`' values by (model id, its inputs), the model matched by identity
_CANDIDATE_STAGES: IdentityMemo[tuple[StageParams, ...]] = IdentityMemo(size=4096)


@functools.lru_cache(maxsize=16)
def _fp32_gradients_note(held: DType, wire: DType) -> str:
    """:func:`train_memory`'s note on gradients held in fp32 and exchanged in ``wire``, for
    ``held`` weights (cached: a layout search says it for nearly every layout)."""
    return (
        f"memory: gradients held in fp32 (Megatron-LM accumulates {held.value} "
        f"training's in fp32) but exchanged in {wire.value} ({{grad_dtype}}): Megatron-LM "
        "reduces the fp32 buffer itself unless told to reduce in bf16; {grad_dtype} fp32 "
        "prices that, twice the data-parallel bytes"
    )


def train_memory(
    spec: TrainSpec,
    *,
    seq: int | None,
    microbatches: int,
    capacity_bytes: float | None,
    capacity_from: str | None,
    notes: list[str],
) -> TrainMemory:
    """The memory one GPU of ``spec``'s layout needs, on its busiest pipeline stage: stage k
    holds ``min(pp - k, M)`` micro-batches in flight (1F1B), so the first is the busiest unless
    its dense layers are lighter than the MoE layers of a stage after it.

    ``seq`` is the sequence length (None: not known), ``microbatches`` M per step. Notes on what
    was assumed are appended to ``notes``.
    """
    par, model = spec.parallel, spec.model
    # read once: a pydantic model's attribute loads are not specialised, and a search reads
    # these for each candidate stage of thousands of layouts
    tp, pp, dp, ep, cp = par.tp, par.pp, par.dp, par.ep, par.cp
    zero, virtual_stages = spec.zero, spec.virtual_stages
    if spec.param_dtype not in _STATE_BYTES:
        notes.append(
            f"memory: {spec.param_dtype.value} weights: gradients and Adam's state counted as for "
            "bf16 weights (Megatron-LM's table has bf16, fp16 and fp32)"
        )
    # a DType is a str: it finds its name's entry
    grad_bytes, optimizer_bytes = _STATE_BYTES.get(spec.param_dtype, _STATE_BYTES["bf16"])
    wire = spec.grad_dtype
    if grad_bytes == 4 and wire.bytes == 2 and dp * cp > 1:
        # held in fp32 and sent in 16 bits, unsaid, had read as one consistent choice while the
        # held type's default exchange doubles the data-parallel bytes (a QA pass: Llama 3 70B
        # on 8 x DGX H100, 4.5 GB in 92 ms hidden, 9.0 GB in 185 ms with 5.7 ms exposed)
        notes.append(_fp32_gradients_note(spec.param_dtype, wire))
    weight_bytes = spec.param_dtype.bytes
    shards = (dp * cp, max(1, dp // ep) * cp)  # (shared, experts)
    per_layer: tuple[float, float] | None = None
    output = 0.0
    if model.layers is not None and seq is not None and model.hidden is not None:
        per_layer, output = _per_layer(spec, seq, notes)
    # each candidate stage's parts and total; only the busiest's memory is built (a search
    # weighs two or three stages for each of its thousands of layouts)
    busiest: tuple[float, int, float, float, float, float, float | None, float] | None = None
    for stage, layers, shared, routed, said in candidate_stages(
        model, tp=tp, pp=pp, ep=ep, virtual=virtual_stages
    ):
        notes += said if not stage else ()
        # parameters a state is held for: all of them, or the GPU's shard from the ZeRO stage
        # that shards it on (1 the optimizer state, 2 the gradients, 3 the weights)
        whole, shard = shared + routed, shared / shards[0] + routed / shards[1]

        activations: float | None = None
        if per_layer is not None and layers is not None:
            held = in_flight(pp, stage, microbatches, virtual_stages)
            activations = (layers[0] * per_layer[0] + layers[1] * per_layer[1]) * held
        weights = (shard if zero >= 3 else whole) * weight_bytes
        gradients = (shard if zero >= 2 else whole) * grad_bytes
        optimizer = (shard if zero >= 1 else whole) * optimizer_bytes
        # the last stage runs one micro-batch's forward and backward pass at a time (1F1B)
        out = output if stage == pp - 1 else 0.0
        total = _train_total(weights, gradients, optimizer, activations, out)
        if busiest is None or total > busiest[0]:
            busiest = (total, stage, whole, weights, gradients, optimizer, activations, out)
    assert busiest is not None
    _, stage, whole, weights, gradients, optimizer, activations, out = busiest
    best = TrainMemory(
        params_per_gpu=whole,
        weights_bytes=weights,
        gradients_bytes=gradients,
        optimizer_bytes=optimizer,
        activations_bytes=activations,
        recompute=spec.recompute,
        output_bytes=out,
        stage=stage,
        capacity_bytes=capacity_bytes,
        capacity_from=capacity_from,
    )
    if best.stage and best.output_bytes:
        notes.append(
            f"memory: the last pipeline stage (of {pp}) is the busiest, for its output "
            f"layer's {memory_size(best.output_bytes)} of activations (the logits)"
        )
    elif best.stage:
        notes.append(
            f"memory: pipeline stage {best.stage + 1} (of {pp}) is the busiest, its MoE "
            "layers outweighing the first stage's dense ones"
        )
    if best.activations_bytes is None:
        missing = [
            flag
            for flag, value in (
                ("{layers}", model.layers),
                ("{hidden}", model.hidden),
                ("{seq_len}", seq),
                ("{heads}", model.heads if spec.recompute is Recompute.NONE else 1),
            )
            if value is None
        ]
        notes.append(f"memory: activations not counted (give {' and '.join(missing)})")
    return best


def _per_layer(
    spec: TrainSpec, seq: int, notes: list[str]
) -> tuple[tuple[float, float] | None, float]:
    """Activation bytes of one (dense, MoE) layer for one micro-batch (None without the heads
    ``--recompute none`` needs), and of the output layer (:func:`output_layer_bytes`; 0 where
    the vocabulary is not known, said in ``notes``)."""
    par, model = spec.parallel, spec.model
    assert model.hidden is not None
    shape = shape_of(model)
    if model.ffn_hidden is None and shape.dense_layers:
        notes.append("memory: the dense MLP's width is not stated; GPT's 4h GeLU MLP assumed")
    if shape.moe_layers and model.moe_ffn_hidden is None and model.ffn_hidden is None:
        notes.append("memory: the experts' width is not stated; GPT's 4h GeLU MLP assumed")
    if model.vocab is None:
        notes.append(
            "memory: the output layer's logits not counted, and the embedding and output layer "
            "counted as transformer layers (give {vocab})"
        )
    # the layouts of a search share a few tensor-parallel degrees: one value per set of inputs
    key: tuple[object, ...] = (id(model), seq, par.tp, par.cp, spec.micro_batch)
    key += (spec.sequence_parallel, spec.recompute, spec.act_dtype)
    return _PER_LAYER.get(key, (model,), lambda: _layer_bytes(spec, seq, shape))


#: :func:`_per_layer`'s values by (model id, its inputs), the model matched by identity
_PER_LAYER: IdentityMemo[tuple[tuple[float, float] | None, float]] = IdentityMemo()


def _layer_bytes(
    spec: TrainSpec, seq: int, shape: _Shape
) -> tuple[tuple[float, float] | None, float]:
    par, model = spec.parallel, spec.model
    assert model.hidden is not None
    output = 0.0
    if model.vocab is not None:
        output = output_layer_bytes(
            seq=seq // par.cp,
            micro_batch=spec.micro_batch,
            hidden=model.hidden,
            vocab=model.vocab,
            tp=par.tp,
            sequence_parallel=spec.sequence_parallel,
            act_bytes=spec.act_dtype.bytes,
        )
    out = [0.0, 0.0]
    for i, (mlp, count) in enumerate(
        ((shape.dense_mlp, shape.dense_layers), (shape.moe_mlp, shape.moe_layers))
    ):
        if not count:
            continue
        value = activation_bytes_per_layer(
            seq=seq // par.cp,
            micro_batch=spec.micro_batch,
            hidden=model.hidden,
            heads=model.heads,
            kv_ratio=shape.kv_ratio,
            mlp=mlp,
            tp=par.tp,
            sequence_parallel=spec.sequence_parallel,
            recompute=spec.recompute,
            act_bytes=spec.act_dtype.bytes,
            context=seq,
            kv_split=shape.kv_heads / -(-shape.kv_heads // par.tp) if shape.kv_heads else par.tp,
            attention=shape.latent,
            dropout=model.dropout,
        )
        if value is None:
            return None, output
        out[i] = value
    return (out[0], out[1]), output
