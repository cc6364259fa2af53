"""Result models whose ``model_dump(mode="json")`` is the JSON ibcalc prints.

A result keeps its numbers in SI units under names that say so (``intra_line_Bps``) and derives
the published figures (``intra_GBps``, ``busbw_factor`` ...) as ``@computed_field``\\ s. Pydantic
dumps stored fields before computed ones; where the published object interleaves the two, the
model lists its keys in :attr:`JsonModel.json_keys` and the dump follows that list: the keys and
their order are part of the contract ("keys keep their meaning across versions"), so they are
written down once, on the model, instead of in a hand-built dict beside it.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, SerializerFunctionWrapHandler, model_serializer

__all__ = ["JsonModel"]


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
