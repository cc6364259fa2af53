"""An estimate with the figures nccl-tests prints, as one JSON object.

:class:`~ibcalc.engine.types.Estimate` is the engine's result: sizes, the chosen cost and its
alternatives. :class:`EstimateResult` is the same estimate with the derived figures people read
(``time_s``, ``algbw_GBps``, ``busbw_GBps``, ``busbw_factor`` ...) as computed fields, so that its
``model_dump(mode="json")`` is what ``ibcalc allreduce --format json`` prints. Bandwidths are
GB/s = 10^9 B/s (the nccl-tests unit).
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field, computed_field, field_serializer

from ibcalc.engine.types import Algorithm, Cost, Estimate, Protocol, busbw_factor
from ibcalc.errors import expect_type
from ibcalc.jsonmodel import JsonModel
from ibcalc.units import GB

__all__ = ["CostResult", "EstimateResult"]


def _algbw_Bps(size_bytes: float, time_s: float) -> float:
    """nccl-tests' algorithm bandwidth S / t (0 for a zero time, which no cost has)."""
    return size_bytes / time_s if time_s > 0 else 0.0


class CostResult(BaseModel):
    """One (algorithm, protocol) costed for an estimate's size, in nccl-tests units.

    The JSON of one runner-up in an estimate's ``alternatives``.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    cost: Cost = Field(exclude=True)
    size_bytes: float = Field(exclude=True)
    factor: float = Field(exclude=True, description="nccl-tests busbw factor F(n).")

    @computed_field  # type: ignore[prop-decorator]
    @property
    def algorithm(self) -> Algorithm:
        """The algorithm costed."""
        return self.cost.algorithm

    @computed_field  # type: ignore[prop-decorator]
    @property
    def protocol(self) -> Protocol:
        """The protocol costed."""
        return self.cost.protocol

    @computed_field  # type: ignore[prop-decorator]
    @property
    def time_s(self) -> float:
        """Predicted time: latency + transfer."""
        return self.cost.time_s

    @computed_field  # type: ignore[prop-decorator]
    @property
    def latency_s(self) -> float:
        """The latency term."""
        return self.cost.latency_s

    @computed_field  # type: ignore[prop-decorator]
    @property
    def transfer_s(self) -> float:
        """The bandwidth term."""
        return self.cost.transfer_s

    @computed_field  # type: ignore[prop-decorator]
    @property
    def fill_s(self) -> float:
        """The pipeline fill (the first chunk crossing every stage)."""
        return self.cost.fill_s

    @computed_field  # type: ignore[prop-decorator]
    @property
    def one_operation_s(self) -> float:
        """One operation alone: latency + transfer + fill. ``time_s`` differs where nccl-tests'
        back-to-back iterations overlap (a one-way chain) or wait on the host (``-g``)."""
        return self.cost.single_s

    @computed_field  # type: ignore[prop-decorator]
    @property
    def algbw_GBps(self) -> float:
        """Algorithm bandwidth S / t in GB/s."""
        return _algbw_Bps(self.size_bytes, self.cost.time_s) / GB

    @computed_field  # type: ignore[prop-decorator]
    @property
    def busbw_GBps(self) -> float:
        """Bus bandwidth algbw x F(n) in GB/s."""
        return _algbw_Bps(self.size_bytes, self.cost.time_s) * self.factor / GB

    @computed_field  # type: ignore[prop-decorator]
    @property
    def busbw_equivalent(self) -> bool:
        """True when busbw is an equivalent figure (in-network reduction ...), not a wire rate."""
        return self.cost.equivalent_busbw


class EstimateResult(Estimate, JsonModel):
    """An :class:`Estimate` whose JSON carries the chosen cost's figures and its runners-up.

    Build one with :meth:`of`. The chosen cost's fields are flattened into the object
    (``algorithm``, ``time_s``, ``busbw_GBps`` ...); ``alternatives`` are :class:`CostResult`.
    """

    #: frozen but holding lists: unhashable (docs/architecture.md, "Naming and style")
    __hash__: ClassVar[None] = None  # type: ignore[assignment]

    json_keys: ClassVar[tuple[str, ...]] = (
        "collective",
        "size_bytes",
        "dtype",
        "count",
        "nodes",
        "gpus_per_node",
        "ranks",
        "domains",
        "intra",
        "inter",
        "nics_per_node",
        "requested_size_bytes",
        "sharp",
        "oversubscription",
        "cross_leaf_fraction",
        "neighbour_cross_leaf_fraction",
        "unaligned_cross_leaf_fraction",
        "sites",
        "wan",
        "wan_links",
        "wan_latency_s",
        "gpus_per_process",
        "host_pcie",
        "tuner_constants",
        "algorithm",
        "protocol",
        "time_s",
        "time_s_range",
        "range_covers",
        "range_reaches",
        "range_wire_floor_s",
        "latency_s",
        "transfer_s",
        "fill_s",
        "one_operation_s",
        "measurement",
        "algbw_GBps",
        "busbw_GBps",
        "busbw_GBps_range",
        "busbw_equivalent",
        "busbw_factor",
        "bottleneck",
        "formula",
        "assumptions",
        "alternatives",
    )

    @classmethod
    def of(cls, estimate: Estimate) -> EstimateResult:
        """``estimate`` with its published figures (no copy when it already is one)."""
        if isinstance(estimate, EstimateResult):
            return estimate
        # anything else had failed as pydantic's many-line ValidationError (review CB)
        expect_type(estimate, Estimate, "estimate", "estimate_on() makes one")
        return cls.model_validate(estimate, from_attributes=True)

    def _cost(self, cost: Cost) -> CostResult:
        return CostResult(cost=cost, size_bytes=self.size_bytes, factor=self.busbw_factor)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def busbw_factor(self) -> float:
        """nccl-tests bus-bandwidth factor F(n) of this collective and rank count."""
        return busbw_factor(self.collective, self.ranks)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def algorithm(self) -> Algorithm:
        """The chosen algorithm."""
        return self.best.algorithm

    @computed_field  # type: ignore[prop-decorator]
    @property
    def protocol(self) -> Protocol:
        """The chosen protocol."""
        return self.best.protocol

    @computed_field  # type: ignore[prop-decorator]
    @property
    def time_s(self) -> float:
        """Predicted time of the chosen algorithm."""
        return self.best.time_s

    @computed_field  # type: ignore[prop-decorator]
    @property
    def latency_s(self) -> float:
        """The chosen cost's latency term."""
        return self.best.latency_s

    @computed_field  # type: ignore[prop-decorator]
    @property
    def transfer_s(self) -> float:
        """The chosen cost's bandwidth term."""
        return self.best.transfer_s

    @computed_field  # type: ignore[prop-decorator]
    @property
    def fill_s(self) -> float:
        """The chosen cost's pipeline fill (the first chunk crossing every stage)."""
        return self.best.fill_s

    @computed_field  # type: ignore[prop-decorator]
    @property
    def one_operation_s(self) -> float:
        """The chosen algorithm's one operation alone: latency + transfer + fill (the terms
        add up to it; ``time_s`` is what nccl-tests prints per iteration)."""
        return self.best.single_s

    @computed_field  # type: ignore[prop-decorator]
    @property
    def measurement(self) -> str:
        """How ``time_s`` follows from one operation (back-to-back overlap, the host's launch
        floor), or that it is one operation's time."""
        return self.best.measure_note or "one operation's time (no overlap across iterations)"

    @computed_field  # type: ignore[prop-decorator]
    @property
    def algbw_GBps(self) -> float:
        """Algorithm bandwidth S / t in GB/s."""
        return self._cost(self.best).algbw_GBps

    @computed_field  # type: ignore[prop-decorator]
    @property
    def busbw_GBps(self) -> float:
        """Bus bandwidth algbw x F(n) in GB/s."""
        return self._cost(self.best).busbw_GBps

    @computed_field  # type: ignore[prop-decorator]
    @property
    def busbw_GBps_range(self) -> tuple[float, float] | None:
        """The busbw (GB/s) a measurement is likely to show: the error band of the time."""
        bounds = self.busbw_Bps_range
        return None if bounds is None else (bounds[0] / GB, bounds[1] / GB)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def busbw_equivalent(self) -> bool:
        """True when busbw is an equivalent figure, not a wire rate (see the assumptions)."""
        return self.best.equivalent_busbw

    @computed_field  # type: ignore[prop-decorator]
    @property
    def bottleneck(self) -> str:
        """What limits the chosen cost."""
        return self.best.bottleneck

    @computed_field  # type: ignore[prop-decorator]
    @property
    def formula(self) -> str:
        """The chosen cost's formula, for reading the model."""
        return self.best.formula

    @field_serializer("size_bytes")
    def _size_bytes(self, size_bytes: float) -> int:
        # a whole number of elements (count x the type's bytes), printed as sweep JSON prints
        # it: 1000000000, not 1000000000.0
        return int(size_bytes)

    @field_serializer("requested_size_bytes")
    def _requested_size_bytes(self, size_bytes: float | None) -> int | float | None:
        # the size asked for, whole bytes as the CLI takes them (1001, not 1001.0); a library
        # caller's fractional size stays as given
        if size_bytes is not None and float(size_bytes).is_integer():
            return int(size_bytes)
        return size_bytes

    @field_serializer("alternatives")
    def _alternatives(self, costs: list[Cost]) -> list[CostResult]:
        return [self._cost(cost) for cost in costs]
