"""Plain values out of the policy SDK's property proxies, with unknowns kept as markers.

Why this module exists: ``args.props`` is an ``unknown_checking_proxy`` (a ``Mapping`` /
``Sequence`` wrapper, not a ``dict``/``list``) and *reading* an unknown raises
``UnknownValueError`` — even ``"k" in props`` and ``props.get("k")`` do (pulumi.md §2.5).  If a
rule let that escape, the servicer would drop the whole rule for the resource.  So the model first
copies the props into plain Python values, iterating keys (safe) and reading each item under
``try``: an unknown becomes an :class:`Unknown` marker that remembers its path, and rules decide
per piece whether they can still judge.

The same conversion accepts raw wire form (as recorded by the offline preview or written in tests):
the engine's unknown sentinel strings become :class:`Unknown` and secret wrappers
``{SIG: SECRET_SIG, "value": v}`` are unwrapped, as the servicer itself does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from pulumi_policy import proxy as sdk_proxy
from pulumi_policy.proxy import UnknownValueError

from .quantity import QuantityError, parse_int_or_string, shown

# The engine's typed unknown sentinels (pulumi_policy/proxy.py; rpc.UNKNOWN is the string one).
UNKNOWN_SENTINELS: frozenset[str] = frozenset(
    {
        "1c4a061d-8072-4f0a-a4cb-0ff528b18fe7",  # boolean
        "3eeb2bf0-c639-47a8-9e75-3b44932eb421",  # number
        "04da6b54-80e4-46f7-96ec-b56ff0331ba9",  # string
        "6a19a0b0-7e62-4c92-b797-7f8e31da9cc2",  # array
        "030794c1-ac77-496b-92df-f27374a8bd58",  # asset
        "e48ece36-62e2-4504-bad9-02848725956a",  # archive
        "dd056dcd-154b-4c76-9bd3-c8f88648b5ff",  # object
    }
)
SECRET_SIG_KEY = "4dabf18193072939515e22adb298388d"
SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270"


@dataclass(frozen=True)
class Unknown:
    """A value the engine cannot know until apply (preview). ``path`` is where it sat."""

    path: str

    def __str__(self) -> str:
        return f"(unknown until apply: {self.path or '.'})"


def is_unknown(value: object) -> bool:
    return isinstance(value, Unknown)


def _join(path: str, key: object) -> str:
    return f"{path}[{key}]" if isinstance(key, int) else (f"{path}.{key}" if path else str(key))


# pulumi-policy 1.21.0 ``pulumi_policy/proxy.py``: the classes ``unknown_checking_proxy`` builds,
# each holding a plain dict / list (of scalars, sentinels and further proxies) that it hands out
# under the key ``"__target"``.  None under a release without them: every proxy is then read
# item by item.
_DICT_PROXY: type | None = getattr(sdk_proxy, "_DictProxy", None)
_LIST_PROXY: type | None = getattr(sdk_proxy, "_ListProxy", None)


def plain(value: Any, path: str = "") -> Any:
    """Deep-copy ``value`` (proxy, dict, list or scalar) into plain dict/list/scalars.

    Unknowns (raised by the proxy or written as sentinels) become :class:`Unknown`; wire secrets
    are unwrapped.  Never raises ``UnknownValueError``.

    An SDK proxy is read through the container it wraps (:data:`_DICT_PROXY`): the proxy raises
    ``UnknownValueError`` exactly where that container holds a sentinel, which the plain path turns
    into the same :class:`Unknown` at the same path, without a ``try`` and a path list per item
    (most of the pack's model building, issue 44).  One difference, in this direction only: a
    property literally named ``__target`` is read as itself, where the proxy would hand back its
    own container for it.
    """
    kind = type(value)
    if kind is dict and SECRET_SIG_KEY not in value:
        return _plain_dict(value, path)
    if kind is list:
        return _plain_list(value, path)
    if kind is _DICT_PROXY or kind is _LIST_PROXY:
        target = value["__target"]
        if type(target) is list:
            return _plain_list(target, path)
        if type(target) is dict and SECRET_SIG_KEY not in target:
            return _plain_dict(target, path)
    if isinstance(value, str):
        return Unknown(path) if value in UNKNOWN_SENTINELS else value
    if isinstance(value, Mapping):
        keys = list(value.keys())  # iterating keys is safe on the proxy
        if SECRET_SIG_KEY in keys:
            try:
                sig = value[SECRET_SIG_KEY]
            except UnknownValueError:
                sig = None
            if sig == SECRET_SIG:
                try:
                    return plain(value["value"], path)
                except UnknownValueError:
                    return Unknown(path)
        out: dict[str, Any] = {}
        for key in keys:
            sub = _join(path, key)
            try:
                item = value[key]
            except UnknownValueError:
                out[str(key)] = Unknown(sub)
                continue
            out[str(key)] = plain(item, sub)
        return out
    if isinstance(value, Sequence) and not isinstance(value, (bytes, bytearray)):
        items: list[Any] = []
        for i in range(len(value)):
            sub = _join(path, i)
            try:
                item = value[i]
            except UnknownValueError:
                items.append(Unknown(sub))
                continue
            items.append(plain(item, sub))
        return items
    # pulumi_policy.secret.Secret (only in Remediate) carries .value
    if type(value).__name__ == "Secret" and hasattr(value, "value"):
        return plain(value.value, path)
    return value


# Leaves a plain dict or list holds as they are (a str only when it is no sentinel).
_AS_IS: frozenset[type] = frozenset({int, float, bool, type(None), Decimal})


def _plain_dict(value: dict[Any, Any], path: str) -> dict[str, Any]:
    """:func:`plain` of a plain ``dict`` (wire form, or already plain): nothing raises on reading,
    so no ``try`` per item, and a child's path is only built for what may need it.  The model
    copies every resource's props, a one-team stack's CRDs included (~0.5 M values), several times
    per preview (the report, the what-if, the cost), so this is most of the model's cost."""
    out: dict[str, Any] = {}
    for key, item in value.items():
        kind = type(item)
        if kind in _AS_IS or (kind is str and item not in UNKNOWN_SENTINELS):
            out[key if type(key) is str else str(key)] = item
        else:
            out[key if type(key) is str else str(key)] = plain(item, _join(path, key))
    return out


def _plain_list(value: list[Any], path: str) -> list[Any]:
    """:func:`plain` of a plain ``list`` (:func:`_plain_dict`'s fast path for lists)."""
    items: list[Any] = []
    for i, item in enumerate(value):
        kind = type(item)
        if kind in _AS_IS or (kind is str and item not in UNKNOWN_SENTINELS):
            items.append(item)
        else:
            items.append(plain(item, _join(path, i)))
    return items


def dig(value: Any, *keys: str | int) -> Any:
    """Follow ``keys`` through nested dicts/lists of plain values.

    Returns ``None`` when a step is missing or of the wrong shape, and the :class:`Unknown` marker
    when a step is unknown (an unknown parent makes every child unknown).
    """
    cur = value
    for key in keys:
        if isinstance(cur, Unknown):
            return Unknown(_join(cur.path, key))
        if isinstance(key, int):
            if not isinstance(cur, list) or not -len(cur) <= key < len(cur):
                return None
            cur = cur[key]
        else:
            if not isinstance(cur, dict):
                return None
            cur = cur.get(key)
    return cur


def as_str(value: Any) -> str | Unknown | None:
    """A string, or None when absent/not a string; Unknown stays Unknown."""
    if isinstance(value, Unknown):
        return value
    return value if isinstance(value, str) else None


def as_bool(value: Any) -> bool | Unknown | None:
    if isinstance(value, Unknown):
        return value
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    return None


def as_int(value: Any) -> int | Unknown | None:
    """Numbers arrive as floats over protobuf (pulumi.md §2.5): 10.0 → 10. Non-integral → None."""
    if isinstance(value, Unknown):
        return value
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            return None
    return None


def as_dict(value: Any) -> dict[str, Any] | Unknown | None:
    if isinstance(value, Unknown):
        return value
    return value if isinstance(value, dict) else None


def as_list(value: Any) -> list[Any] | Unknown | None:
    if isinstance(value, Unknown):
        return value
    return value if isinstance(value, list) else None


def str_map(value: Any) -> dict[str, str | Unknown]:
    """A label/annotation map: string values only (unknown values kept as markers)."""
    if not isinstance(value, dict):
        return {}
    return {k: v for k, v in value.items() if isinstance(v, (str, Unknown))}


def unknowns_in(value: Any) -> list[Unknown]:
    """Every :class:`Unknown` marker inside ``value`` (depth-first)."""
    if isinstance(value, Unknown):
        return [value]
    if isinstance(value, dict):
        return [u for v in value.values() for u in unknowns_in(v)]
    if isinstance(value, list):
        return [u for v in value for u in unknowns_in(v)]
    return []


@dataclass(frozen=True)
class Quantity:
    """A Kubernetes int-or-string quantity, parsed by :mod:`.quantity` (the API server's grammar).

    Exactly one state holds: ``unknown`` (preview), ``error`` (not a quantity: the API server
    would reject it), or ``value`` (a finite ``Decimal``).  ``raw`` keeps what was written.
    """

    raw: Any
    value: Decimal | None = None
    unknown: bool = False
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.value is not None

    def __str__(self) -> str:
        if self.unknown:
            return "(unknown)"
        if isinstance(self.raw, float) and self.raw.is_integer():
            return str(int(self.raw))
        return str(self.raw)


def quantity(raw: Any) -> Quantity:
    if isinstance(raw, Unknown):
        return Quantity(raw=raw, unknown=True)
    try:
        return Quantity(raw=raw, value=parse_int_or_string(raw))
    except QuantityError as exc:
        return Quantity(raw=raw, error=f"{shown(raw)} is not a quantity ({exc})")


def fmt_num(value: Decimal | float | int) -> str:
    """Human number: 10.0 → '10', Decimal('0.500') → '0.5'."""
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, Decimal):
        normal = value.normalize()
        return format(normal, "f") if normal == normal.to_integral_value() else str(normal)
    return str(value)
