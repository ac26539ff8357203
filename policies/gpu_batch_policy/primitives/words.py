"""What a value is, in the words of the YAML or JSON the user wrote (issue 31).

A finding is read by someone who wrote YAML (or a Pulumi program that becomes JSON on the wire),
so a type is named as YAML 1.2's core schema and JSON name it -- null, boolean, number, string,
mapping, list -- never as Python does (``NoneType``, ``dict``, ``Decimal``), and an error is
described, never named by its Python exception class.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any


def type_word(value: Any) -> str:
    """``null``, ``boolean``, ``number``, ``string``, ``mapping``, ``list``; anything else is a
    ``value unknown until apply`` (the pack's Unknown marker) or, failing all, ``value``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float, Decimal)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "mapping"
    if isinstance(value, (list, tuple)):
        return "list"
    if type(value).__name__ == "Unknown":
        return "value unknown until apply"
    return "value"
