"""Memory per GPU of one training layout: model states and activations (docs/workload.md, "Memory").

**Model states** (Rajbhandari et al., "ZeRO", SC'20, arXiv:1910.02054, section 3.1 and figure 1):
mixed-precision Adam holds, per parameter, the weights and their gradients in the 16-bit training
type (2 + 2 bytes) and 12 bytes of optimizer state (an fp32 copy of the weights, Adam's momentum
and variance); 8 bytes where the weights are fp32 already. ZeRO stage 1 shards the optimizer state
over the data-parallel ranks, stage 2 the gradients as well, stage 3 (FSDP) the weights as well.

Parameters per GPU: tensor and pipeline parallelism split every weight over ``tp x pp`` GPUs
(Shoeybi et al. 2019; Narayanan et al. 2021); with expert parallelism the routed experts split
over ``ep`` more, and their data-parallel group is the ``dp / ep`` ranks holding the same experts
(Megatron-Core's expert-data-parallel group, as ``ibcalc train``'s edp- phases). Sharding runs
over ``dp x cp`` ranks (context parallelism replicates the weights as data parallelism does).

**Activations** (Korthikanti et al., "Reducing Activation Recomputation in Large Transformer
Models", MLSys 2023, arXiv:2205.05198, section 4 and table 2), per transformer layer and
micro-batch of ``b`` sequences of ``s`` tokens, hidden size ``h``, ``a`` heads, ``t = tp``, for
16-bit activations:

* ``--recompute none``: ``s b h (10 + 24/t + 5 a s / (h t))``; with sequence parallelism
  ``s b h (34/t + 5 a s / (h t))``. The ``5 a s / h`` term is the attention scores, softmax and
  its dropout mask;
* ``selective`` (the default): the same without that term, as FlashAttention (Dao et al. 2022,
  arXiv:2205.14135) or Megatron's selective recomputation leave it: ``s b h (10 + 24/t)``, with
  sequence parallelism ``34 s b h / t``;
* ``full``: ``2 s b h``, the layer's input alone, the rest recomputed in the backward pass.

Context parallelism splits ``s`` over ``cp``. In 1F1B the first pipeline stage holds the
activations of ``min(pp, M)`` micro-batches for its ``ceil(L / pp)`` layers (section 4.2.3):
about ``L`` layers' worth, whatever the pipeline depth. Activations in another type scale by its
bytes over 2.

Not counted: the embedding and output layer's activations (the logits), the weights ZeRO-3
gathers for one layer at a time, the CUDA context, NCCL's buffers and the allocator's
fragmentation; the MLP is the 4h GeLU MLP of the paper's GPT layer (a SwiGLU MLP of about
3.5h, as Llama's, stores more), and a mixture-of-experts layer is costed as one dense MLP.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from enum import StrEnum
from typing import TYPE_CHECKING

from ibcalc.units import format_size

if TYPE_CHECKING:
    from ibcalc.catalogue.models import System
    from ibcalc.workload.train import TrainSpec

__all__ = [
    "ADAM_STATE_BYTES_PER_PARAM",
    "FP32_MASTER_BYTES_PER_PARAM",
    "TIGHT_FRACTION",
    "GpuMemory",
    "Recompute",
    "ServingMemory",
    "TrainMemory",
    "activation_bytes_per_layer",
    "gpu_capacity",
    "judge_fit",
    "memory_size",
    "train_memory",
]

#: fp32 master weights + Adam momentum + variance: 4 + 4 + 4 bytes per parameter (ZeRO, 3.1).
ADAM_STATE_BYTES_PER_PARAM = 12
#: The fp32 master copy's share of that: none is kept when the weights are fp32 already.
FP32_MASTER_BYTES_PER_PARAM = 4
#: Korthikanti et al.'s activation bytes assume 16-bit activations (2 bytes per element).
_PAPER_ACT_BYTES = 2
#: Past this share of the GPU's memory a layout is called tight: what is not counted (the CUDA
#: context, NCCL's buffers, fragmentation, the logits) has less than a tenth of the memory left.
TIGHT_FRACTION = 0.9


def memory_size(size_bytes: float) -> str:
    """A memory size in decimal units, three digits (``104.8e9`` -> ``105 GB``), as GPU memory
    is sold."""
    if 1e9 <= size_bytes < 999.5e9:  # the usual case, without format_size's search of units
        return f"{size_bytes / 1e9:.3g} GB"
    return format_size(size_bytes, decimal=True, digits=3)


class Recompute(StrEnum):
    """Which activations the backward pass recomputes instead of storing."""

    NONE = "none"
    SELECTIVE = "selective"
    FULL = "full"


def activation_bytes_per_layer(
    *,
    seq: int,
    micro_batch: int,
    hidden: int,
    heads: int | None,
    tp: int,
    sequence_parallel: bool,
    recompute: Recompute,
    act_bytes: int,
) -> float | None:
    """Bytes one transformer layer stores for one micro-batch (Korthikanti et al., table 2).

    ``seq`` is the tokens one rank holds (after context parallelism). None where the formula
    needs the heads (``recompute`` none) and they are not known.
    """
    sbh = float(seq) * micro_batch * hidden
    scale = act_bytes / _PAPER_ACT_BYTES
    if recompute is Recompute.FULL:
        return 2 * sbh * scale
    sp = sequence_parallel and tp > 1
    per = 34 / tp if sp else 10 + 24 / tp
    if recompute is Recompute.NONE:
        if heads is None:
            return None
        per += 5 * heads * seq / (hidden * tp)
    return sbh * per * scale


# plain dataclasses, neither pydantic models nor frozen: a layout search builds thousands (a
# frozen one takes three times as long to build), and every value is worked out in this module,
# so there is nothing to validate; read them, do not change them
@dataclasses.dataclass(slots=True, kw_only=True)
class GpuMemory:
    """Memory one GPU needs, by part, against what it has (training's :class:`TrainMemory`,
    serving's :class:`ServingMemory`)."""

    #: one GPU's memory; None: not known (give --gpu-memory)
    capacity_bytes: float | None
    #: where the capacity comes from ("dgx-h100's 80 GB per GPU", "{gpu_memory}")
    capacity_from: str | None
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
    def fits(self) -> bool | None:
        """True when the total is within the GPU's memory; None when that is not known."""
        used = self.used_fraction
        return None if used is None else used <= 1.0

    def parts_words(self) -> str:
        """The parts, e.g. "weights 17.5 GB + gradients 17.5 GB + ... ", for notes."""
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

    def _total(self) -> float:
        states = self.weights_bytes + self.gradients_bytes + self.optimizer_bytes
        return states + (self.activations_bytes or 0.0)

    def parts(self) -> list[tuple[str, float]]:
        """Model states, then activations (see the module's "not counted")."""
        parts = [
            ("weights", self.weights_bytes),
            ("gradients", self.gradients_bytes),
            ("optimizer", self.optimizer_bytes),
        ]
        if self.activations_bytes is not None:
            parts.append(
                (f"activations ({self.recompute.value} recompute)", self.activations_bytes)
            )
        return parts


@dataclasses.dataclass(slots=True, kw_only=True)
class ServingMemory(GpuMemory):
    """Memory one GPU of a serving instance needs: its weights and its share of the KV cache."""

    weights_bytes: float
    #: None: the KV cache's size is not known (no layer count)
    kv_cache_bytes: float | None

    def _total(self) -> float:
        return self.weights_bytes + (self.kv_cache_bytes or 0.0)

    def parts(self) -> list[tuple[str, float]]:
        """Weights, then the KV cache."""
        parts = [("weights", self.weights_bytes)]
        if self.kv_cache_bytes is not None:
            parts.append(("KV cache", self.kv_cache_bytes))
        return parts


def gpu_capacity(
    given_bytes: float | None, system: System | None
) -> tuple[float | None, str | None]:
    """One GPU's memory and where it comes from: the one given (``{gpu_memory}``), else the
    system preset's; (None, None) when neither states one."""
    if given_bytes is not None:
        return given_bytes, "{gpu_memory}"
    if system is not None and system.gpu_memory_bytes is not None:
        size = memory_size(system.gpu_memory_bytes)
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
    need = memory_size(memory.total_bytes)
    if used is None:
        why = (
            f"{system.id} does not state one GPU memory ({system.gpu})"
            if system is not None
            else "no system preset states the GPUs' memory"
        )
        notes.append(
            f"memory fit not checked: {why}; give {{gpu_memory}} (needs {need} per GPU: "
            f"{memory.parts_words()})"
        )
    elif used > 1:
        warnings.append(
            f"does not fit in memory: {need} per GPU against {memory.capacity_from} "
            f"({used:.0%}); {remedies()}"
        )
    elif used > TIGHT_FRACTION:
        warnings.append(
            f"memory is tight: {need} per GPU is {used:.0%} of {memory.capacity_from}, leaving "
            f"less than a tenth for what is not counted ({uncounted})"
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
    """The memory one GPU of ``spec``'s layout needs (the busiest: the first pipeline stage).

    ``seq`` is the sequence length (None: not known), ``microbatches`` M per step. Notes on what
    was assumed are appended to ``notes``.
    """
    par, model = spec.parallel, spec.model
    shards = par.dp * par.cp
    experts = model.expert_params if par.ep > 1 else None
    if experts is None:
        params = model.params / (par.tp * par.pp)
        # (params, ZeRO shards) for every parameter
        groups = [(params, shards)]
        if model.is_moe and par.ep > 1:
            notes.append(
                "memory: every parameter counted on each of the ep ranks (an upper bound; the "
                f"expert share is unknown: {model.expert_share_unknown})"
            )
    else:
        dense = (model.params - experts) / (par.tp * par.pp)
        routed = experts / (par.tp * par.pp * par.ep)
        params = dense + routed
        groups = [(dense, shards), (routed, max(1, par.dp // par.ep) * par.cp)]
    weight_bytes = spec.param_dtype.bytes
    optimizer_per_param = ADAM_STATE_BYTES_PER_PARAM - (
        FP32_MASTER_BYTES_PER_PARAM if weight_bytes >= FP32_MASTER_BYTES_PER_PARAM else 0
    )

    def held(per_param: float, stage: int) -> float:
        """Bytes of a state ZeRO shards from ``stage`` on."""
        if spec.zero < stage:
            return params * per_param
        return sum(n * per_param / k for n, k in groups)

    activations: float | None = None
    if seq is not None and model.layers is not None and model.hidden is not None:
        per_layer = activation_bytes_per_layer(
            seq=seq // par.cp,
            micro_batch=spec.micro_batch,
            hidden=model.hidden,
            heads=model.heads,
            tp=par.tp,
            sequence_parallel=spec.sequence_parallel,
            recompute=spec.recompute,
            act_bytes=spec.act_dtype.bytes,
        )
        if per_layer is not None:
            layers = math.ceil(model.layers / par.pp)
            activations = per_layer * layers * min(par.pp, microbatches)
    if activations is None:
        notes.append(
            "memory: activations not counted (they need the layers, hidden size and sequence "
            "length"
            + (", and the heads with {recompute} none" if model.heads is None else "")
            + ")"
        )
    return TrainMemory(
        params_per_gpu=params,
        weights_bytes=held(weight_bytes, 3),
        # the gradients are held in the weights' type (ZeRO's 2 Psi); --grad-dtype is the wire's
        gradients_bytes=held(weight_bytes, 2),
        optimizer_bytes=held(optimizer_per_param, 1),
        activations_bytes=activations,
        recompute=spec.recompute,
        capacity_bytes=capacity_bytes,
        capacity_from=capacity_from,
    )
