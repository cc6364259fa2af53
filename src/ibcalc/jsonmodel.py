"""Result models whose ``model_dump(mode="json")`` is the JSON ibcalc prints.

A result keeps its numbers in SI units under names that say so (``intra_line_Bps``) and derives
the published figures (``intra_GBps``, ``busbw_factor`` ...) as ``@computed_field``\\ s. Pydantic
dumps stored fields before computed ones; where the published object interleaves the two, the
model lists its keys in :attr:`JsonModel.json_keys` and the dump follows that list: the keys and
their order are part of the contract ("keys keep their meaning across versions"), so they are
written down once, on the model, instead of in a hand-built dict beside it.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

from pydantic import BaseModel, SerializerFunctionWrapHandler, model_serializer

__all__ = ["JsonModel", "json_text"]


class JsonModel(BaseModel):
    """A model whose dump is its published JSON object.

    With :attr:`json_keys` empty the dump is pydantic's own (stored fields, then computed ones,
    minus fields declared ``exclude=True``); otherwise exactly the keys listed, in that order.
    """

    #: The published keys, in order; empty: every field pydantic dumps.
    json_keys: ClassVar[tuple[str, ...]] = ()

    @model_serializer(mode="wrap")
    def _published(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if not self.json_keys:
            return data
        # `if key in data`: a caller's own include/exclude still narrows the dump.
        return {key: data[key] for key in self.json_keys if key in data}


def json_text(data: Any, *, ensure_ascii: bool = True) -> str:
    """``data`` as the indented JSON text every ``--format json`` prints, made safe for strict
    parsers at this one boundary: a byte count held as a whole float (a key with ``bytes`` as
    one of its words: ``weights_bytes``, ``kv_bytes_per_token``, ``bytes``) is written as an
    integer, as ``size_bytes`` is (``17500000000``, not ``17500000000.0``, which Go's int64
    and serde's u64 refuse); ``-0.0`` is written ``0.0`` (``--cross-leaf -0.0`` had been echoed
    as ``-0.0``); NaN and infinities, which json.dumps writes bare and jq refuses, raise
    ValueError rather than print. No value changes."""
    return json.dumps(_strict(data), indent=2, ensure_ascii=ensure_ascii, allow_nan=False) + "\n"


def _strict(value: Any, key: str = "") -> Any:
    """``value`` as :func:`json_text` writes it; ``key`` the name it is held under (a list's
    items are held under the list's)."""
    if isinstance(value, float):
        if value.is_integer() and "bytes" in key.split("_"):
            return int(value)
        return 0.0 if value == 0 else value
    if isinstance(value, dict):
        return {name: _strict(item, str(name)) for name, item in value.items()}
    if isinstance(value, list | tuple):
        return [_strict(item, key) for item in value]
    return value
