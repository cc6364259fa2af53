"""Parse nccl-tests / rccl-tests results (text logs and JSON) into frozen records.

A pure library piece: no printing, no CLI. :func:`parse_log` reads text (the CLI reads stdin or
a file and passes the text), :func:`parse_file` reads a regular file of at most 64 MiB. Both
return a :class:`ParsedLog` holding one :class:`Run` per nccl-tests invocation, or raise
:class:`~ibcalc.errors.LogParseError`. See :mod:`ibcalc.logs.parse` for what the reader
tolerates and :mod:`ibcalc.logs.infer` for how missing facts are inferred.
"""

from __future__ import annotations

from ibcalc.errors import LogParseError
from ibcalc.logs.parse import MAX_LOG_BYTES, parse_file, parse_log
from ibcalc.logs.records import Inference, ParsedLog, Row, Run, Timing

__all__ = [
    "MAX_LOG_BYTES",
    "Inference",
    "LogParseError",
    "ParsedLog",
    "Row",
    "Run",
    "Timing",
    "parse_file",
    "parse_log",
]
