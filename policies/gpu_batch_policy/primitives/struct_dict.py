"""A ``google.protobuf.Struct`` as Python, exactly as ``json_format.MessageToDict`` gives it, faster.

Why (issue 44): the preview's monitor (``preview/harness.py``) turns every registration's
property map into Python, and the pack's servicer every resource of every analyzer call.  The
generic printer (protobuf 5.29 ``google/protobuf/json_format.py`` ``_Printer``) looks up a field
descriptor and dispatches through ``_FieldToJsonObject`` for every ``Value``: ~2.3 s of a
1,000-team program, ~1.2 s of its ``AnalyzeStack``.  A ``Struct``'s JSON mapping is fixed, so
this walks it directly, in about 40% of the time.

In the pack (``runtime/sdk_speedups.py``) the walk is bounded: the depth at which
pulumi-policy's own decoding (``MessageToDict``, about four frames per level) gives up is part of
the answer (``runtime/servicer_guard.py`` names a resource nested past it), and this walk, at two
frames per level, would read deeper.  With ``max_depth`` it stops at that many levels
(:class:`TooDeepError`), far above what any stack nests and below where the printer can fail, and the
caller hands the ``Struct`` to the printer itself.

The answer is ``MessageToDict``'s, value for value and key for key (the ``Struct``'s map order),
following protobuf 5.29 ``json_format.py``:

* ``_StructMessageToJsonObject``: a ``dict`` of the fields, in the map's iteration order;
* ``_ListValueMessageToJsonObject``: a ``list``;
* ``_ValueMessageToJsonObject``: no kind set, or ``null_value``, is ``None``; ``number_value`` is
  the ``float`` as stored (a ``double`` field goes through ``_FieldToJsonObject`` unchanged), but
  infinity and NaN raise ``ValueError`` with the printer's own messages; ``string_value`` a
  ``str``; ``bool_value`` a ``bool``.

``tests/test_struct_dict.py`` compares the two on every repo stack's registrations and on
hand-built maps with each kind of value.
"""

from __future__ import annotations

import math
from typing import Any

from google.protobuf import struct_pb2

# protobuf 5.29 json_format.py _ValueMessageToJsonObject: what it raises for a number JSON cannot hold.
_INFINITY = "Fail to serialize Infinity for Value.number_value, which would parse as string_value"
_NAN = "Fail to serialize NaN for Value.number_value, which would parse as string_value"


class TooDeepError(Exception):
    """The ``Struct`` nests more ``Value`` levels than ``max_depth``; nothing was returned."""


def struct_to_dict(struct: struct_pb2.Struct, max_depth: int | None = None) -> dict[str, Any]:
    """``json_format.MessageToDict(struct)`` for a ``google.protobuf.Struct`` (module docstring);
    with ``max_depth``, :class:`TooDeepError` for a ``Struct`` whose values nest deeper than that."""
    if max_depth is not None:
        return {key: _bounded(value, 1, max_depth) for key, value in struct.fields.items()}
    return {key: _value(value) for key, value in struct.fields.items()}


def _value(value: struct_pb2.Value) -> Any:
    kind = value.WhichOneof("kind")
    if kind == "string_value":
        return value.string_value
    if kind == "struct_value":
        fields = value.struct_value.fields
        return {key: _value(fields[key]) for key in fields}
    if kind == "list_value":
        return [_value(item) for item in value.list_value.values]
    return _scalar(value, kind)


def _bounded(value: struct_pb2.Value, depth: int, max_depth: int) -> Any:
    """:func:`_value` at nesting ``depth`` (a top-level field's value is 1)."""
    if depth > max_depth:
        raise TooDeepError(f"more than {max_depth} levels")
    kind = value.WhichOneof("kind")
    if kind == "string_value":
        return value.string_value
    if kind == "struct_value":
        fields = value.struct_value.fields
        return {key: _bounded(fields[key], depth + 1, max_depth) for key in fields}
    if kind == "list_value":
        return [_bounded(item, depth + 1, max_depth) for item in value.list_value.values]
    return _scalar(value, kind)


def _scalar(value: struct_pb2.Value, kind: str | None) -> Any:
    if kind == "bool_value":
        return value.bool_value
    if kind == "number_value":
        number = value.number_value
        if math.isinf(number):
            raise ValueError(_INFINITY)
        if math.isnan(number):
            raise ValueError(_NAN)
        return number
    return None  # null_value, or no kind set
