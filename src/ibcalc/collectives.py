"""The collectives, named as NCCL and nccl-tests name them: the one list of them.

Kept apart from :mod:`ibcalc.engine.types` (which re-exports :class:`Collective`) because it
needs nothing but the standard library: the command line lists one command per collective in
``ibcalc --help`` without loading the engine or pydantic.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["Collective"]


class Collective(StrEnum):
    """Collectives, named as NCCL and nccl-tests name them (``all_reduce`` of ``all_reduce_perf``).

    This enum is the one list of collectives: CLI command names (:attr:`command`), design-file
    keys and JSON Schema enums are derived from it.
    """

    ALL_REDUCE = "all_reduce"
    REDUCE_SCATTER = "reduce_scatter"
    ALL_GATHER = "all_gather"
    BROADCAST = "broadcast"
    REDUCE = "reduce"
    ALL_TO_ALL = "alltoall"
    SEND_RECV = "sendrecv"

    @property
    def command(self) -> str:
        """The CLI command and design-file key: the name without underscores (``allreduce``)."""
        return self.value.replace("_", "")

    @property
    def per_rank_buffer(self) -> bool:
        """True when nccl-tests' size is the total buffer split over ranks (AG, RS, all-to-all)."""
        return self in (Collective.ALL_GATHER, Collective.REDUCE_SCATTER, Collective.ALL_TO_ALL)

    @property
    def description(self) -> str:
        """What an estimate of it is, as a noun phrase with the size convention (the CLI's help).

        The size a caller gives is marked ``{size_bytes}`` (see :func:`ibcalc.errors.fill_fields`).
        """
        return _DESCRIPTIONS[self]

    @classmethod
    def lookup(cls, name: str) -> Collective | None:
        """The collective a user's name means (``allreduce``, ``all_reduce``, ``all-reduce``,
        any case), or None: underscores and hyphens are not read, so ``all_to_all`` and
        ``send_recv``, which nccl-tests and the enum's member names write, are all-to-all and
        send/recv (they had been refused, where ``all-reduce`` was read: review DR)."""
        key = name.strip().lower().replace("-", "").replace("_", "")
        for member in cls:
            if key in (member.value.replace("_", ""), member.command.replace("_", "")):
                return member
        return None


#: :attr:`Collective.description` of each collective.
_DESCRIPTIONS: dict[Collective, str] = {
    Collective.ALL_REDUCE: "an all-reduce (nccl-tests all_reduce_perf)",
    Collective.REDUCE_SCATTER: (
        "a reduce-scatter; {size_bytes} is the total buffer (nccl-tests convention)"
    ),
    Collective.ALL_GATHER: (
        "an all-gather; {size_bytes} is the total gathered buffer (nccl-tests convention)"
    ),
    # the size convention each rank's buffer, as every other command's help gives its own: algbw
    # is --size over the time, and the help had not said which size
    Collective.BROADCAST: "a broadcast; {size_bytes} is each rank's buffer (nccl-tests convention)",
    Collective.REDUCE: "a reduce; {size_bytes} is each rank's buffer (nccl-tests convention)",
    Collective.ALL_TO_ALL: "an all-to-all; {size_bytes} is each rank's send buffer",
    Collective.SEND_RECV: "nccl-tests sendrecv (ring shift of S per rank)",
}
