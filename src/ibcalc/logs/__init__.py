"""Parse nccl-tests / rccl-tests results (text logs and JSON) into frozen records.

A pure library piece: no printing, no CLI. :func:`parse_log` reads text, :func:`parse_file` a
regular file of at most 64 MiB; both return a :class:`ParsedLog` holding one :class:`Run` per
nccl-tests invocation, or raise :class:`~ibcalc.errors.LogParseError`. :func:`read_log` reads a
file, or a stream the caller passes for ``-``, and keeps the text with what was parsed
(:class:`LogInput`). See :mod:`ibcalc.logs.parse` for what the reader
tolerates and :mod:`ibcalc.logs.infer` for how missing facts are inferred.
"""

from __future__ import annotations

from ibcalc.errors import LogParseError
from ibcalc.logs.parse import MAX_LOG_BYTES, LogInput, parse_file, parse_log, read_log
from ibcalc.logs.records import Inference, ParsedLog, Row, Run, Timing

__all__ = [
    "MAX_LOG_BYTES",
    "Inference",
    "LogInput",
    "LogParseError",
    "ParsedLog",
    "Row",
    "Run",
    "Timing",
    "parse_file",
    "parse_log",
    "read_log",
]
