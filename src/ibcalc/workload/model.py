"""What a model is, as far as its communication goes: parameter count and the shapes traffic needs.

A :class:`ModelSpec` holds the numbers the formulas of ``docs/workload.md`` read: the parameter
count (gradients, weights, checkpoints), layers and hidden size (tensor- and pipeline-parallel
activations), attention heads, key/value heads and head dimension (the KV cache), experts and
top-k (expert-parallel all-to-all). Fields not given stay ``None``; a formula that needs one
raises :class:`~ibcalc.errors.WorkloadError` naming it.

Presets hold only what their papers state (each preset lists its source):

* Llama 3 8B/70B/405B: Dubey et al., "The Llama 3 Herd of Models", arXiv:2407.21783, Table 3
  (layers, model dimension, attention heads, key/value heads), section 3.1 (8K-token
  pre-training context) and section 3.4.2 (context extended to 128K tokens, which the released
  models serve; taken as 128 x 1024 = 131,072, their configs' position limit).
* Mixtral 8x7B: Jiang et al., "Mixtral of Experts", arXiv:2401.04088, Table 1 and section 1
  (47B parameters, 13B active per token; 32k context, for training and serving).
* DeepSeek-V3: DeepSeek-AI, "DeepSeek-V3 Technical Report", arXiv:2412.19437, section 4.2
  (61 layers, hidden 7168, 128 heads of 128, MLA with d_c = 512 and d_h^R = 64, 256 routed experts
  with 8 active, first three layers dense, 671B total / 37B active, 4K pre-training length) and
  section 4.3 (context extended in two phases to 32K and then 128K tokens).
"""

from __future__ import annotations

import decimal
import math
from collections.abc import Callable
from typing import Any

from pydantic import ConfigDict, Field, ValidationError, ValidationInfo, field_validator

from ibcalc.booleans import NoBoolNumbers, refuse_text_or_number
from ibcalc.catalogue.load import suggest
from ibcalc.catalogue.models import Catalogue
from ibcalc.errors import UnknownNameError, WorkloadError, expect_type
from ibcalc.units import (
    as_float,
    format_bandwidth,
    format_count,
    format_number,
    format_size,
    format_time,
    parse_count,
    plural,
)

__all__ = [
    "MIN_PARAMS",
    "MODEL_PRESETS",
    "TOO_FEW_PARAMS",
    "CheckedSpec",
    "ModelSpec",
    "expect_job",
    "find_model",
    "model_from",
]

_FROZEN = ConfigDict(frozen=True, extra="forbid")


#: Field-name endings of values held in SI base units, and the unit to print after them.
_UNITS = (("_Bps", " B/s"), ("_bytes", " B"), ("_s", " s"))
#: The same fields, and the function that reads them from text ('80GB').
_READERS = (("_Bps", "parse_bandwidth"), ("_bytes", "parse_size"), ("_s", "parse_time"))
#: The same fields printed as the output prints them.
_FORMATS: tuple[tuple[str, Callable[[float], str]], ...] = (
    # a limit bare ('at least 1 MB/s'), as a typed value is
    ("_Bps", lambda bw: format_bandwidth(bw, zeros=False)),
    ("_bytes", format_size),
    (
        "_s",
        lambda s: format_time(s, zeros=False) if abs(s) >= 1e-6 else f"{format_number(s * 1e9)} ns",
    ),
)


class CheckedSpec(NoBoolNumbers):
    """A workload input model whose bad values raise :class:`~ibcalc.errors.WorkloadError`
    naming the field (``{field}``, which the CLI turns into its flag), not pydantic's
    ``ValidationError``: the first problem, with the value given. True/false is no number
    (tp=True had meant tp 1: a review)."""

    @field_validator("*", mode="before")
    @classmethod
    def _kind(cls, value: Any, info: ValidationInfo) -> Any:
        return refuse_text_or_number(cls, value, info)

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            error = exc.errors()[0]
            field = str(error["loc"][0]) if error["loc"] else None
            name = f"{{{field}}}" if field else type(self).__name__
            value = error.get("input")
            if isinstance(value, float) and not math.isfinite(value):
                raise WorkloadError(
                    f"{name} {value!r} is not a finite number", field=field
                ) from None
            if error["type"] == "int_from_float":
                # in the words of ClusterSpec, the command line and tp_whatif ('input should
                # be a valid integer, got a number with a fractional part' had been pydantic's)
                raise WorkloadError(
                    f"{name} {value!r} is not a whole number", field=field
                ) from None
            # fields in SI base units say so in a readable unit (the user may have typed GB/s
            # or ms): '--part-size 1 B: must be at least 4 KiB', not '1.0 B ... 4096 B'
            show = next((f for end, f in _FORMATS if (field or "").endswith(end)), _plain)
            bounds = error.get("ctx") or {}
            if error["type"] == "int_parsing_size" and field in type(self).model_fields:
                # a whole float past a 64-bit int (tp=1e30) fails before the bounds, in words
                # about an "input string" it never was: its field's upper bound
                info = type(self).model_fields[field]
                high = next(
                    (m.le for m in info.metadata if getattr(m, "le", None) is not None), None
                )
                bounds = {"le": high} if high is not None else bounds
            unit = next((u for end, u in _UNITS if (field or "").endswith(end)), "")
            if show is not None and isinstance(value, int | float):
                for key, words in (
                    ("ge", "at least"),
                    ("gt", "above"),
                    ("le", "at most"),
                    ("lt", "below"),
                ):
                    bound = bounds.get(key)
                    if isinstance(bound, int | float):
                        given, limit = show(value), show(bound)
                        # rounded into the bound, or to nothing ('--backward-time 1e-30s' had
                        # read '0 ns: must be at least 1 ns', as if 0 was typed: review BN)
                        if given == limit or (value and given.startswith("0 ")):
                            given, limit = f"{value:.12g}{unit}", f"{bound:.12g}{unit}"
                        raise WorkloadError(
                            f"{name} {given}: must be {words} {limit}", field=field
                        ) from None
            # a validator's own words without pydantic's 'Value error, ' before them
            msg = error["msg"].removeprefix("Value error, ").lower()
            # the unit after a number only: text or true/false given had read "part_bytes
            # '1MB' B: input should be a valid number, unable to parse string as a number B"
            number = isinstance(value, int | float) and not isinstance(value, bool)
            shown = f"{value!r}{unit}" if number else repr(value)
            reader = next((r for end, r in _READERS if (field or "").endswith(end)), None)
            parsing = error["type"] == "value_error" and isinstance(value, str)
            hint = f" (ibcalc.{reader} reads text)" if reader and parsing else ""
            raise WorkloadError(f"{name} {shown}: {msg}{hint}", field=field) from None


def expect_job(catalogue: object, spec: object, kind: type[CheckedSpec]) -> None:
    """Refuse a catalogue or a job's spec of another type with
    :class:`~ibcalc.errors.WrongTypeError` (train_step, compare_layouts, infer and checkpoint
    given None had raised AttributeError: "'NoneType' object has no attribute 'parallel'")."""
    expect_type(catalogue, Catalogue, "catalogue", "load_catalogue() makes one")
    expect_type(spec, kind, "spec", f"{kind.__name__}(...) makes one")


def _plain(value: float) -> str:
    """A count or rate without a unit as given: ``-1`` (not -1.0), ``100,000,000`` (not
    1e+08), ``0.0001``; a whole number typed as one stays whole up to 30 digits
    (``99,999,999,999,999,999,999``, which had been echoed as 1e+20)."""
    if isinstance(value, int) and len(str(abs(value))) <= 30:
        return f"{value:,}"
    if abs(value) <= 2**53 and float(value).is_integer():  # whole, and exact in a float
        return f"{int(value):,}"
    if math.isinf(as_float(value)):  # an int beyond a float: {:g} would raise OverflowError
        return f"{decimal.Decimal(value):.3e}"
    return f"{value:g}"


#: Largest count of layers, heads, experts ... accepted: beyond any published model.
_MAX_DIM = 10_000_000
#: At most 100 trillion parameters: 4 bytes of fp32 gradient each stays under the 1 PiB any
#: collective size takes (1e15 had priced a 2 PB all-reduce that --size refuses; a review).
MAX_PARAMS = 1e14
#: Fewest parameters accepted: a million. The smallest models anyone spreads over GPUs have tens
#: of millions (BERT-base 110M, GPT-2 124M); a million bf16 parameters are 2 MB, which one GPU
#: holds and moves in microseconds, so below that no communication plan is worth making and the
#: count is far likelier a missing suffix (``--params 70`` for 70B) than a model.
MIN_PARAMS = 1e6
#: What is said of a count under :data:`MIN_PARAMS`, after it.
TOO_FEW_PARAMS = (
    "is fewer than a million parameters, too small a model to plan communication for (a count "
    "takes a suffix: 70B, 350M)"
)


#: How far a parameter count may sit from what the shape holds before it is warned of: a
#: threshold, not a fit. The presets hold their counts within 1 % (Mixtral 46.7B of 47B); a
#: shape left from a preset beside another model's count is off by 4-9x (70.6B against 8B),
#: and a preset's count left beside a changed shape by what the change makes it (llama3-70b at
#: 160 layers holds 139B: 2.0x; a factor of 2 had let it pass unsaid, review BN).
_SHAPE_SLACK = 1.5
#: The same where the MLP's width is not given but guessed as GPT's 4 x hidden: public models
#: run from 2.7 x (Llama 3 8B's 14,336 of 4,096 gated, 3 matrices) to 6.7 x (Qwen2.5-32B's
#: 27,648 of 5,120 gated hold 1.71x what 4 x hidden in 2 matrices holds).
_GUESSED_SLACK = 2.0


class ModelSpec(CheckedSpec):
    """A model's communication-relevant shape; ``None`` means "not given"."""

    model_config = _FROZEN

    id: str | None = None
    name: str | None = None
    params: float = Field(gt=0, le=MAX_PARAMS, description="Total parameters.")
    active_params: float | None = Field(
        default=None,
        gt=0,
        le=MAX_PARAMS,
        description="Parameters used per token (MoE); default all.",
    )
    layers: int | None = Field(default=None, ge=1, le=_MAX_DIM)
    hidden: int | None = Field(default=None, ge=1, le=_MAX_DIM)
    heads: int | None = Field(default=None, ge=1, le=_MAX_DIM)
    kv_heads: int | None = Field(default=None, ge=1, le=_MAX_DIM)
    head_dim: int | None = Field(default=None, ge=1, le=_MAX_DIM)
    kv_elements_per_layer: int | None = Field(
        default=None,
        ge=1,
        le=_MAX_DIM,
        description="Cached elements per token per layer, when not 2 x kv_heads x head_dim (MLA).",
    )
    seq_len: int | None = Field(default=None, ge=1, le=_MAX_DIM, description="Training length.")
    max_context: int | None = Field(
        default=None,
        ge=1,
        le=1_000_000_000,
        description="Longest context (prompt + output tokens) the released model serves.",
    )
    experts: int | None = Field(default=None, ge=1, le=_MAX_DIM, description="Routed experts.")
    top_k: int | None = Field(default=None, ge=1, le=_MAX_DIM, description="Experts per token.")
    moe_layers: int | None = Field(default=None, ge=1, le=_MAX_DIM)
    ffn_hidden: int | None = Field(
        default=None,
        ge=1,
        le=_MAX_DIM,
        description="Inner width of the dense MLP (default: 4 x hidden, GPT's).",
    )
    moe_ffn_hidden: int | None = Field(
        default=None, ge=1, le=_MAX_DIM, description="Inner width of each expert's MLP (MoE)."
    )
    shared_experts: int = Field(
        default=0, ge=0, le=_MAX_DIM, description="Experts every token passes (MoE)."
    )
    gated_mlp: bool = Field(
        default=False, description="A gated MLP (SwiGLU: three matrices) rather than GPT's two."
    )
    dropout: bool = Field(
        default=True,
        description="Dropout after attention and MLP (GPT's, whose masks the activations "
        "count); Llama 3, Mixtral and DeepSeek-V3 train without (their released config.json "
        "files set attention_dropout 0.0 and no hidden dropout; recalled, not re-read).",
    )
    q_lora_rank: int | None = Field(
        default=None,
        ge=1,
        le=_MAX_DIM,
        description="Latent attention (MLA): width of the queries' low-rank compression.",
    )
    kv_lora_rank: int | None = Field(
        default=None,
        ge=1,
        le=_MAX_DIM,
        description="Latent attention (MLA): width of the keys' and values' joint latent; set, "
        "the model uses MLA.",
    )
    rope_head_dim: int | None = Field(
        default=None,
        ge=1,
        le=_MAX_DIM,
        description="Latent attention (MLA): decoupled rotary dimensions per query and key head.",
    )
    vocab: int | None = Field(
        default=None,
        ge=1,
        le=_MAX_DIM,
        description="Vocabulary: rows of the input embedding and of the (untied) output layer.",
    )
    #: a tuple: the presets are shared, and a list had let find_model(...).sources.append(...)
    #: change every later find_model's
    sources: tuple[str, ...] = ()

    def __init__(self, **data: Any) -> None:
        super().__init__(**data)
        for field in ("params", "active_params"):
            value = getattr(self, field)
            if value is not None and value < MIN_PARAMS:
                raise WorkloadError(f"{{{field}}} {value:g} {TOO_FEW_PARAMS}", field=field)
        if self.top_k is not None and self.experts is None:
            # a dense model routes nothing: top-k would be read by nothing and change nothing
            raise WorkloadError(
                "{top_k} is for a mixture-of-experts model: give its {experts} too", field="top_k"
            )
        if self.experts is not None and self.top_k is None:
            # experts without a routing degree had been served, silently, as a dense model
            raise WorkloadError(
                "{experts} makes a mixture-of-experts model: give its {top_k} too (the experts "
                "each token is routed to)",
                field="experts",
            )
        if self.hidden is not None and self.heads is not None and self.hidden < self.heads:
            raise WorkloadError(
                f"{{hidden}} {self.hidden} is smaller than {{heads}} {self.heads}: each attention "
                "head takes at least one dimension of the hidden state",
                field="hidden",
                value=str(self.hidden),
                others={"heads": str(self.heads)},
            )
        if (
            self.hidden is not None
            and self.heads is not None
            and self.head_dim is None
            and self.hidden % self.heads
        ):
            # the head size is hidden / heads unless the model gives its own: --hidden 8191
            # on 64 heads had priced a model no framework builds (a hostile-input review)
            raise WorkloadError(
                f"{{hidden}} {self.hidden} does not divide among {{heads}} {self.heads}: each "
                "attention head takes hidden / heads dimensions",
                field="hidden",
                value=str(self.hidden),
                others={"heads": str(self.heads)},
            )
        if self.top_k is not None and self.experts is not None and self.top_k > self.experts:
            raise WorkloadError(
                f"{{top_k}} {self.top_k} is more than {{experts}} {self.experts}",
                field="top_k",
                value=str(self.top_k),
                others={"experts": str(self.experts)},
            )
        if self.kv_heads is not None and self.heads is not None and self.kv_heads > self.heads:
            # grouped-query attention shares each key/value head among heads / kv_heads query
            # heads (Ainslie et al., arXiv:2305.13245): there are never more KV heads than heads
            raise WorkloadError(
                f"{{kv_heads}} {self.kv_heads} is more than {{heads}} {self.heads} "
                "(each key/value head serves one or more query heads)",
                field="kv_heads",
                value=str(self.kv_heads),
                others={"heads": str(self.heads)},
            )
        if self.kv_heads is not None and self.heads is not None and self.heads % self.kv_heads:
            # each key/value head serves the same number of query heads (GQA groups are equal)
            raise WorkloadError(
                f"{{heads}} {self.heads} does not divide into {{kv_heads}} {self.kv_heads} "
                "groups (each key/value head serves heads / kv_heads query heads)",
                field="kv_heads",
                others={"heads": str(self.heads), "kv_heads": str(self.kv_heads)},
            )
        if self.embedding_params and 2 * self.embedding_params >= self.params:
            assert self.vocab is not None
            assert self.hidden is not None
            # plain words for the vocabulary and width: a preset's, not flags the user gave
            shown = format_count(float(f"{2 * self.embedding_params:.3g}"))
            raise WorkloadError(
                f"the embedding and output layer, 2 x vocabulary {self.vocab:,} x hidden "
                f"{self.hidden:,} = {shown} parameters, are not fewer than {{params}} "
                f"{format_count(self.params)}",
                field="vocab",
            )
        if (
            self.layers is not None
            and self.moe_layers is not None
            and self.moe_layers > self.layers
        ):
            raise WorkloadError(
                f"moe_layers {self.moe_layers} is more than {{layers}} {self.layers}",
                field="layers",
            )

    @property
    def label(self) -> str:
        """The preset id, or the parameter count (``70B model``, ``350M model``)."""
        if self.id is not None:
            return self.id
        return f"{format_count(self.params)} model"

    @property
    def embedding_params(self) -> float:
        """Parameters of the input embedding, ``vocab x hidden``; the output layer (untied, as
        the presets' are) has as many. 0 where the vocabulary or hidden size is not known."""
        return float(self.vocab * self.hidden) if self.vocab and self.hidden else 0.0

    @property
    def matmul_params(self) -> float:
        """Parameters a token's forward pass multiplies with (:attr:`flops_params`) less the
        input embedding, a lookup: Kaplan et al. 2020 (arXiv:2001.08361, section 2.1) count
        non-embedding parameters, Narayanan et al. 2021 (arXiv:2104.04473, section 5.1) the
        output layer's matmul but no input embedding. Where the embedding would be half of them
        or more (a small model with a large vocabulary given by hand), none is taken off."""
        active, embedding = self.flops_params, self.embedding_params
        return active - embedding if 2 * embedding < active else active

    @property
    def is_moe(self) -> bool:
        """True for a mixture-of-experts model (experts and top-k given)."""
        return self.experts is not None and self.experts > 1

    @property
    def expert_params(self) -> float | None:
        """Parameters in the routed experts, from the model's own counts: a token uses
        ``top_k / experts`` of them, so ``params - active = E (1 - top_k / experts)`` and
        ``E = (params - active) / (1 - top_k / experts)`` (Mixtral 8x7B: 46.7B total and 12.9B
        active, Jiang et al. arXiv:2401.04088, give E = 45.1B of experts and 1.6B shared; the
        preset's rounded 47B and 13B give 45.3B).
        None for a dense model or when a count is missing."""
        if not self.is_moe or self.active_params is None or self.top_k is None:
            return None
        assert self.experts is not None
        used = self.top_k / self.experts
        if used >= 1 or self.active_params >= self.params:
            return None
        experts = (self.params - self.active_params) / (1 - used)
        return experts if 0 < experts <= self.params else None

    @property
    def expert_share_unknown(self) -> str | None:
        """Why :attr:`expert_params` is None for a mixture-of-experts model (None otherwise)."""
        if not self.is_moe or self.expert_params is not None:
            return None
        assert self.experts is not None
        if self.active_params is None or self.top_k is None:
            return "the model states no active parameter count"
        if self.top_k >= self.experts:
            return f"every token uses all {self.experts} experts (top-{self.top_k})"
        return "its counts give no expert share (active parameters not below the total)"

    @property
    def flops_params(self) -> float:
        """Parameters a token's forward pass multiplies with: active ones for MoE."""
        return self.active_params if self.active_params is not None else self.params

    def check_stages(self, pp: int) -> None:
        """Refuse more pipeline stages than the model has layers (each stage holds one or more)."""
        if self.layers is not None and pp > self.layers:
            raise WorkloadError(
                f"{{pp}} {pp} is more than the model's {plural(self.layers, 'layer')}: every "
                "pipeline stage holds at least one layer",
                field="pp",
                value=str(pp),
            )

    def check_heads(self, tp: int) -> None:
        """Refuse a tensor-parallel degree that does not divide the attention heads: Megatron-LM
        splits the heads over the tp group and refuses such a layout, as ``--compare`` leaves it
        out; a model without a head count is not checked."""
        if self.heads is not None and self.heads % tp:
            raise WorkloadError(
                f"{{tp}} {tp} does not divide the model's {self.heads} attention heads: "
                "Megatron-LM splits them over the tp group",
                field="tp",
                value=str(tp),
            )

    def check_context(self, prompt_tokens: int, output_tokens: int) -> None:
        """Refuse a request longer than the model serves (prompt and output share the
        context window); a model without a stated context is not checked."""
        tokens = prompt_tokens + output_tokens
        if self.max_context is not None and tokens > self.max_context:
            raise WorkloadError(
                f"{{prompt_tokens}} {prompt_tokens:,} + {{output_tokens}} {output_tokens:,} = "
                f"{tokens:,} tokens is more than the {self.max_context:,}-token context of "
                f"{self._display_name()}",
                field="prompt_tokens",
                value=f"{prompt_tokens:,}",
                others={"output_tokens": f"{output_tokens:,}"},
            )

    def context_warnings(self, seq_len: int) -> list[str]:
        """A training length beyond the context the released model serves: allowed (a
        context-extension run trains past it), but said, as a mistyped length would be."""
        if self.max_context is None or seq_len <= self.max_context:
            return []
        return [
            f"{{seq_len}} {seq_len:,} tokens is more than the {self.max_context:,}-token "
            f"context of {self._display_name()}: every activation buffer follows the length "
            "given (a context-extension run?)"
        ]

    def _display_name(self) -> str:
        # a preset changed field by field is no longer the preset: name it by its id
        modified = self.id is not None and self.id.endswith("(modified)")
        return (self.id if modified else self.name or self.id) or "the model"

    def check_experts(self, ep: int) -> None:
        """Refuse an expert-parallel degree above 1 on a dense model, or one that does not
        divide the model's experts (each EP rank holds experts / ep of them)."""
        if ep <= 1:
            return
        if not self.is_moe:
            raise WorkloadError(
                "{ep} above 1 needs a mixture-of-experts model ({experts}, {top_k})", field="ep"
            )
        assert self.experts is not None
        if self.experts % ep:
            raise WorkloadError(
                f"{{ep}} {ep} does not divide the model's {self.experts} experts",
                field="ep",
                value=str(ep),
            )

    def tp_warnings(self, tp: int) -> list[str]:
        """What is odd about splitting the attention over ``tp`` GPUs: heads that do not
        divide, or fewer key/value heads than GPUs (each then replicated)."""
        warnings: list[str] = []
        if self.heads is not None and self.heads % tp:
            warnings.append(
                f"tp {tp} does not divide the model's {self.heads} attention heads "
                "(Megatron needs it to)"
            )
        if self.kv_heads is not None and tp > self.kv_heads:
            warnings.append(
                f"tp {tp} is more than the model's {self.kv_heads} key/value heads: "
                "each KV head is replicated over tp / kv_heads GPUs"
            )
        return warnings

    @property
    def mlp_matrices(self) -> int:
        """Weight matrices of ``h x width`` in one MLP: 2 (GPT's), 3 gated (SwiGLU)."""
        return 3 if self.gated_mlp else 2

    @property
    def shape_params(self) -> float | None:
        """Parameters a dense model's shape holds: per layer the attention's query and output
        projections (``2 h^2``), its key and value projections (``2 h x kv_heads x head_dim``,
        ``2 h^2`` without grouped-query attention) and the MLP (``2 h x ffn``, ``3 h x ffn``
        gated), plus the embedding and output layer; a mixture of experts' MoE layers hold an
        MLP of ``moe_ffn_hidden`` for each routed and shared expert and a router (``h x
        experts``) instead. None for an MLA model or where the layers or hidden size are not
        known. Llama 3 70B: 80 x (134.2M + 16.8M + 704.6M) + 2.1B = 70.6B (Meta's 70B);
        Mixtral 8x7B: 32 x (33.6M + 8.4M + 8 x 176.2M + 32.8K) + 0.26B = 46.7B (Mistral's
        46.7B)."""
        if self.hidden is None:
            return None
        ffn = self.ffn_hidden if self.ffn_hidden is not None else 4 * self.hidden
        width = self.moe_ffn_hidden if self.moe_ffn_hidden is not None else ffn
        return self._held(ffn, width)

    def _held(self, ffn: int, width: int) -> float | None:
        """What the shape holds with a dense MLP of ``ffn`` and experts of ``width``."""
        if self.layers is None or self.hidden is None or self.kv_lora_rank:
            return None
        h = self.hidden
        head_dim = self.head_dim_or_derived
        kv_width = (
            self.kv_heads * head_dim if self.kv_heads is not None and head_dim is not None else h
        )
        attention = 2 * h * h + 2 * h * kv_width
        dense = self.layers * (attention + self.mlp_matrices * h * ffn)
        if self.is_moe:
            assert self.experts is not None
            moe_layers = min(self.moe_layers or self.layers, self.layers)
            experts = self.experts + self.shared_experts
            moe = attention + experts * self.mlp_matrices * h * width + h * self.experts
            dense = (self.layers - moe_layers) * (
                attention + self.mlp_matrices * h * ffn
            ) + moe_layers * moe
        return float(dense) + 2 * self.embedding_params

    def shape_warnings(self) -> list[str]:
        """A parameter count the shape does not hold, by more than a factor of 1.5 either way
        (2 where the MLP's width is guessed; for a mixture of experts whose expert width is not
        known, a count under the floor the rest of its shape makes, by 1.5x with its key/value
        heads given, else 2x) (``--params 8B`` on a 70B preset): the tensor- and
        pipeline-parallel traffic follows the shape, the gradients and weights the count, so the
        two describe different models.
        And on a preset changed field by field (not latent attention), heads whose head size
        spans another width than the hidden size (``--heads 60`` on Llama 3 70B: 7,680 of
        8,192)."""
        said = []
        held = self.shape_params
        # a count on a guessed MLP width (4 x hidden, where no ffn_hidden is given: the command
        # line has no flag for it) keeps the wider slack; an expert's width is not guessed at
        # (Qwen2.5-32B given by its flags had been warned of at 1.71x, Qwen3-30B-A3B at 6.8x:
        # review BP)
        moe_layers = (
            min(self.moe_layers or self.layers or 0, self.layers or 0) if self.is_moe else 0
        )
        guessed = self.ffn_hidden is None and (self.layers or 0) > moe_layers
        unknown = self.is_moe and self.moe_ffn_hidden is None and self.ffn_hidden is None
        slack = _GUESSED_SLACK if guessed or unknown else _SHAPE_SLACK
        at_least = ""
        if unknown:
            # experts of unknown width: what the rest holds is a floor, said only past it
            # (Mixtral made 200 layers of 16,384 had held at least 2.45x its 47B unsaid:
            # review BQ), by the 1.5x of a known shape where the key/value heads are given
            # (a 1B count under a 1.61B floor had passed: review BR), else by 2x (a guessed
            # grouping counts the keys and values as wide as the queries)
            held = self._held(0, 0)
            floor_slack = _SHAPE_SLACK if self.kv_heads is not None else _GUESSED_SLACK
            if held is not None and held <= floor_slack * self.params:
                held = None
            slack, at_least = floor_slack, "at least "
        if held is not None and not (self.params / slack <= held <= slack * self.params):
            shape = f"{plural(self.layers or 0, 'layer')} of hidden {self.hidden:,}"
            if self.is_moe:
                shape += f" and {plural(self.experts or 0, 'expert')}"
            one = self.layers == 1 and not self.is_moe
            said.append(
                f"{shape} {'holds' if one else 'hold'} {at_least or 'about '}"
                f"{format_count(float(f'{held:.3g}'))} parameters, not the "
                f"model's {format_count(self.params)} ({{params}}): activations and tensor- and "
                "pipeline-parallel messages follow the shape, gradients and weights the count "
                "(give the shape of the model meant: {layers}, {hidden}"
                + (", {experts})" if self.is_moe else ")")
            )
        modified = self.id is not None and self.id.endswith("(modified)")
        if (
            modified
            and self.kv_lora_rank is None  # latent attention's heads are not hidden / heads
            and self.head_dim is not None
            and self.hidden is not None
            and self.heads is not None
            and self.heads * self.head_dim != self.hidden
        ):
            # a preset's head size is kept under a new hidden size or head count, as
            # Megatron-LM's --kv-channels allows, but said: --hidden 8190 or --heads 60 on
            # llama3-70b had been priced without a word (a review; refusing them had refused
            # shapes such as 96 heads of 128 within 16,384, a second review)
            said.append(
                f"{self.heads} heads of head size {self.head_dim} span "
                f"{self.heads * self.head_dim:,} dimensions, not the hidden size's "
                f"{self.hidden:,}: a shape the preset does not have (a preset keeps its head "
                "size under a new hidden size or head count); check it is the model meant"
            )
        return said

    def need(self, field: str, why: str) -> int:
        """The integer field ``field``, or a WorkloadError saying ``why`` it is needed."""
        value = getattr(self, field)
        if value is None:
            raise WorkloadError(
                f"{why} needs the model's {{{field}}} (or a preset with {{model}})", field=field
            )
        return int(value)

    @property
    def head_dim_or_derived(self) -> int | None:
        """Head dimension as given, else hidden / heads when both are known."""
        if self.head_dim is not None:
            return self.head_dim
        if self.hidden is not None and self.heads is not None and self.hidden % self.heads == 0:
            return self.hidden // self.heads
        return None

    def attention_flops_per_token(self, context: int) -> float | None:
        """Training FLOPs (forward and backward) of the attention's score and value products per
        token at ``context`` tokens, which ``6 x params`` leaves out: ``6 x layers x heads x
        (d_qk + d_v) x context``, PaLM's ``12 L H Q T`` (Chowdhery et al. 2022, arXiv:2204.02311,
        appendix B; Narayanan et al. 2021, arXiv:2104.04473, section 5.1 count the same) with
        queries and keys ``d_h + d_h^R`` wide under MLA (arXiv:2412.19437, section 2.1.1). The
        whole score matrix is counted, as model-FLOPs utilisation figures count it (a causal
        kernel computes about half of it). None without layers, heads and a head dimension."""
        head = self.head_dim_or_derived
        if self.layers is None or self.heads is None or head is None:
            return None
        qk = head + (self.rope_head_dim or 0)
        return 6.0 * self.layers * self.heads * (qk + head) * context

    def kv_elements(self, why: str = "the KV cache") -> int:
        """Cached key/value elements per token per layer: 2 x kv_heads x head_dim, or the
        stated ``kv_elements_per_layer`` (DeepSeek-V3's MLA caches d_c + d_h^R = 576). ``why``
        says what needs them where they are not known (serving's KV cache; training has none,
        its context parallelism all-gathers the keys and values)."""
        if self.kv_elements_per_layer is not None:
            return self.kv_elements_per_layer
        kv_heads = self.kv_heads if self.kv_heads is not None else self.heads
        if kv_heads is None:
            # the query heads give both the key/value heads and, with the hidden size, the head
            # size: naming the key/value heads had led to a second refusal for the head size
            raise WorkloadError(
                f"{why} needs the model's {{heads}} (one key/value head per query head "
                "unless {kv_heads} gives fewer; or a preset with {model})",
                field="heads",
            )
        head_dim = self.head_dim_or_derived
        if head_dim is None:
            raise WorkloadError(
                f"{why} needs the model's {{head_dim}} (or {{hidden}} and {{heads}})",
                field="head_dim",
            )
        return 2 * kv_heads * head_dim

    def kv_split(self, tp: int) -> float:
        """The keys and values over the busiest of ``tp`` ranks' share of them: a rank holds
        whole KV heads, ``ceil(kv_heads / tp)`` on the busiest, so ``kv_heads / ceil(kv_heads /
        tp)`` (``tp`` where it divides them; ``kv_heads`` past them, the heads copied); 1 for a
        latent cache (MLA), which every tensor-parallel rank keeps whole. 8 KV heads on tp 3:
        3 on the busiest rank, 3/8 of the cache, where an even split had given 1/3."""
        if self.kv_elements_per_layer is not None:
            return 1.0
        kv_heads = self.kv_heads if self.kv_heads is not None else self.heads
        if kv_heads is None:
            return float(tp)
        return kv_heads / -(-kv_heads // tp)

    def kv_bytes_per_token(self, dtype_bytes: int) -> float:
        """KV-cache bytes per token: layers x kv_elements x bytes (docs/workload.md)."""
        layers = self.need("layers", "the KV cache")
        return float(layers * self.kv_elements() * dtype_bytes)

    def moe_layer_count(self) -> int:
        """Layers with an MoE block: ``moe_layers`` if given, else every layer."""
        if self.moe_layers is not None:
            return self.moe_layers
        return self.need("layers", "expert parallelism")


_LLAMA3 = (
    "Dubey et al. 2024, The Llama 3 Herd of Models, arXiv:2407.21783, Table 3 (FFN dimension, "
    "SwiGLU; vocabulary 128,000, of which the released config.json's vocab_size counts 128,256 "
    "with the special tokens, untied: huggingface.co/meta-llama), 3.1 and 3.4.2"
)
_MIXTRAL = (
    "Jiang et al. 2024, Mixtral of Experts, arXiv:2401.04088, Table 1 (hidden_dim 14336, "
    "vocab_size 32000) and section 2 (SwiGLU experts)"
)
_DSV3 = (
    "DeepSeek-AI 2024, DeepSeek-V3 Technical Report, arXiv:2412.19437, sections 2.1.1 (MLA) and "
    "4.2 (1 shared and 256 routed experts of width 2048, the first three layers dense; MLA with "
    "128 heads of 128, d_c = 512, d_c' = 1536, d_h^R = 64) and 4.3; the dense "
    "layers' width 18432 and the vocabulary, 129,280 (the report's 128K), from its released "
    "config.json (intermediate_size, vocab_size; huggingface.co/deepseek-ai/DeepSeek-V3)"
)

#: Public models by the numbers their papers state.
MODEL_PRESETS: dict[str, ModelSpec] = {
    m.id or "": m
    for m in (
        ModelSpec(
            id="llama3-8b",
            name="Llama 3 8B",
            params=8e9,
            layers=32,
            hidden=4096,
            heads=32,
            kv_heads=8,
            head_dim=128,
            seq_len=8192,
            max_context=128 * 1024,
            ffn_hidden=14336,
            gated_mlp=True,
            dropout=False,
            vocab=128256,
            sources=(_LLAMA3,),
        ),
        ModelSpec(
            id="llama3-70b",
            name="Llama 3 70B",
            params=70e9,
            layers=80,
            hidden=8192,
            heads=64,
            kv_heads=8,
            head_dim=128,
            seq_len=8192,
            max_context=128 * 1024,
            ffn_hidden=28672,
            gated_mlp=True,
            dropout=False,
            vocab=128256,
            sources=(_LLAMA3,),
        ),
        ModelSpec(
            id="llama3-405b",
            name="Llama 3 405B",
            params=405e9,
            layers=126,
            hidden=16384,
            heads=128,
            kv_heads=8,
            head_dim=128,
            seq_len=8192,
            max_context=128 * 1024,
            ffn_hidden=53248,
            gated_mlp=True,
            dropout=False,
            vocab=128256,
            sources=(_LLAMA3,),
        ),
        ModelSpec(
            id="mixtral-8x7b",
            name="Mixtral 8x7B",
            params=47e9,
            active_params=13e9,
            layers=32,
            hidden=4096,
            heads=32,
            kv_heads=8,
            head_dim=128,
            seq_len=32768,
            max_context=32768,
            experts=8,
            top_k=2,
            moe_ffn_hidden=14336,
            gated_mlp=True,
            dropout=False,
            vocab=32000,
            sources=(_MIXTRAL,),
        ),
        ModelSpec(
            id="deepseek-v3",
            name="DeepSeek-V3",
            params=671e9,
            active_params=37e9,
            layers=61,
            hidden=7168,
            heads=128,
            head_dim=128,
            kv_elements_per_layer=512 + 64,
            seq_len=4096,
            max_context=128 * 1024,
            experts=256,
            top_k=8,
            moe_layers=61 - 3,
            ffn_hidden=18432,
            moe_ffn_hidden=2048,
            shared_experts=1,
            gated_mlp=True,
            dropout=False,
            q_lora_rank=1536,
            kv_lora_rank=512,
            rope_head_dim=64,
            vocab=129280,
            sources=(_DSV3,),
        ),
    )
}


def _spelling(name: str) -> str:
    """``name`` without case or separators: ``Llama-3-70B`` and ``llama3_70b`` are ``llama370b``
    (the model cards' and papers' spellings of a preset)."""
    return name.lower().translate(_SEPARATORS)


_SEPARATORS = str.maketrans("", "", "-_ \t")


def find_model(name: str) -> ModelSpec:
    """The preset called ``name`` (case-insensitive; dashes, underscores and spaces aside, so
    ``llama-3-70b`` is llama3-70b), or UnknownNameError with suggestions."""
    if not isinstance(name, str):
        # None or a number had failed on "'NoneType' object has no attribute 'strip'"; as
        # find_link says of one
        raise UnknownNameError("model", str(name), list(MODEL_PRESETS), close=False)
    key = name.strip().lower()
    if key in MODEL_PRESETS:
        return MODEL_PRESETS[key]
    spelt = [m for m in MODEL_PRESETS.values() if _spelling(m.id or "") == _spelling(key)]
    if len(spelt) == 1:
        return spelt[0]
    close = suggest(key, list(MODEL_PRESETS))
    # five presets: with none close, name them all ('--model gpt4' had said only "unknown")
    raise UnknownNameError("model", name, close or list(MODEL_PRESETS), close=bool(close))


def model_from(
    preset: str | None = None,
    *,
    params: str | float | None = None,
    **shape: int | None,
) -> ModelSpec:
    """A model from a preset and/or a parameter count (``"70B"``), with ``shape`` overriding.

    ``shape`` takes the integer fields of :class:`ModelSpec` (layers, hidden, heads, kv_heads,
    head_dim, seq_len, experts, top_k, moe_layers, ffn_hidden, moe_ffn_hidden, shared_experts,
    vocab);
    ``None`` values are ignored. A preset's MLP widths are dropped with a new ``hidden``; a new
    ``layers`` keeps the preset's dense layers, and the rest are MoE layers.
    """
    given = {k: v for k, v in shape.items() if v is not None}
    unknown = sorted(set(given) - set(ModelSpec.model_fields))
    if unknown:
        raise WorkloadError(f"unknown model field {unknown[0]!r}", field=None)
    count = (
        None if params is None else parse_count(params, what="parameter count", limit=MAX_PARAMS)
    )
    if preset is not None:
        base = find_model(preset)
        data = base.model_dump()
        # a value restating the preset's own changes nothing (Mixtral's --experts 8 or --params
        # 47B keeps its active count and its name)
        given = {k: v for k, v in given.items() if data.get(k) != v}
        if count == base.params:
            count = None
        ignored = [k for k in ("kv_heads", "head_dim") if k in given]
        if base.kv_elements_per_layer is not None and ignored:
            # a latent cache's size is its own (d_c + d_h^R); --kv-heads and --head-dim had been
            # taken, the model labelled modified, and every number left as it was
            fields = " and ".join(f"{{{k}}}" for k in ignored)
            raise WorkloadError(
                f"{base.id} caches a latent of {base.kv_elements_per_layer} elements per token "
                f"a layer (multi-head latent attention), not keys and values per head: {fields} "
                f"would change nothing",
                field=ignored[0],
            )
        if given or count is not None:
            data["id"] = f"{base.id} (modified)"
    elif count is None:
        raise WorkloadError("give the model: {params} (e.g. 70B) or {model}", field="params")
    else:
        data = {}
    if count is not None:
        data["params"] = count
        if preset is not None:
            data["active_params"] = None
    if preset is not None and ("experts" in given or "top_k" in given):
        # the preset's active count belongs to its own experts and routing
        data["active_params"] = None
    if preset is not None and "hidden" in given:
        # the preset's MLP widths belong to its own hidden size
        data["ffn_hidden"] = data["moe_ffn_hidden"] = None
    if (
        preset is not None
        and "layers" in given
        and "moe_layers" not in given
        and data.get("moe_layers") is not None
    ):
        # a preset's dense layers stay as many (DeepSeek-V3's first three); the rest are MoE
        dense = data["layers"] - data["moe_layers"]
        data["moe_layers"] = max(1, given["layers"] - dense)
    data.update(given)
    try:
        return ModelSpec(**data)
    except WorkloadError as exc:
        if preset is None:
            raise
        # a value the preset gave is named as the preset's: '--kv-heads 8 is more than --heads
        # 7' had named a flag nobody gave (llama3-70b's 8 KV heads)
        template = exc.template
        stated = {*given, *(("params",) if count is not None else ())}
        for name in exc.fields:
            if name not in stated and data.get(name) is not None:
                template = template.replace(f"{{{name}}}", f"{base.id}'s {{{name}}}", 1)
        if template == exc.template:
            raise
        raise WorkloadError(template, field=exc.field, value=exc.value, others=exc.others) from None
