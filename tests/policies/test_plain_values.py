"""``plain``'s fast path for plain dicts and lists (issue 44): the same values, unknowns with the
same paths and wire secrets unwrapped, as the general path gives for the same data behind a
``Mapping`` / ``Sequence`` that is not a dict or list."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from decimal import Decimal
from typing import Any

import pytest
from gpu_batch_policy.primitives.values import SECRET_SIG, SECRET_SIG_KEY, Unknown, plain

STRING_UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"
BOOL_UNKNOWN = "1c4a061d-8072-4f0a-a4cb-0ff528b18fe7"


class _Map(Mapping[Any, Any]):
    """A mapping that is not a dict: :func:`plain` takes its general path."""

    def __init__(self, data: Mapping[Any, Any]) -> None:
        self._data = data

    def __getitem__(self, key: Any) -> Any:
        return wrapped(self._data[key])

    def __iter__(self) -> Iterator[Any]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)


class _Seq(Sequence[Any]):
    def __init__(self, data: Sequence[Any]) -> None:
        self._data = data

    def __getitem__(self, index: Any) -> Any:
        return wrapped(self._data[index])

    def __len__(self) -> int:
        return len(self._data)


def wrapped(value: Any) -> Any:
    """``value`` behind a ``Mapping`` / ``Sequence`` that is neither a dict, a list nor an SDK proxy."""
    if isinstance(value, Mapping):
        return _Map(value)
    if isinstance(value, Sequence) and not isinstance(value, str):
        return _Seq(value)
    return value


WIRE: list[Any] = [
    {"a": 1, "b": 2.5, "c": True, "d": None, "e": Decimal("1.5"), "f": "text"},
    {"spec": {"name": STRING_UNKNOWN, "items": [1, BOOL_UNKNOWN, {"deep": STRING_UNKNOWN}]}},
    {"password": {SECRET_SIG_KEY: SECRET_SIG, "value": {"inner": STRING_UNKNOWN}}},
    {"password": {SECRET_SIG_KEY: SECRET_SIG, "value": "hunter2"}},
    {1: "int key", "list": [[STRING_UNKNOWN], ("tuple", STRING_UNKNOWN)]},
    [{"x": STRING_UNKNOWN}, "y"],
]


@pytest.mark.parametrize("value", WIRE)
def test_plain_dicts_and_lists_read_as_any_mapping_does(value: Any) -> None:
    fast = plain(value, "root")
    general = plain(wrapped(value), "root")
    assert fast == general
    assert repr(fast) == repr(general)  # the same types too: 1 is not 1.0, a key is a str


def test_unknowns_keep_their_paths() -> None:
    assert plain(WIRE[1]) == {
        "spec": {
            "name": Unknown("spec.name"),
            "items": [1, Unknown("spec.items[1]"), {"deep": Unknown("spec.items[2].deep")}],
        }
    }


def test_the_copy_is_not_the_input() -> None:
    value = {"a": {"b": [1]}}
    copied = plain(value)
    copied["a"]["b"].append(2)
    assert value == {"a": {"b": [1]}}


# --- the SDK's own proxies (pulumi_policy.proxy.unknown_checking_proxy) ----------------------------


SDK_PROPS: list[Any] = [
    *[w for w in WIRE if isinstance(w, dict) and all(isinstance(k, str) for k in w)],
    {"spec": {"containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": BOOL_UNKNOWN}}}]}},
    {"list": [STRING_UNKNOWN, [STRING_UNKNOWN, {"k": [BOOL_UNKNOWN]}]], "empty": {}, "none": []},
    {"outer": {"password": {SECRET_SIG_KEY: SECRET_SIG, "value": [STRING_UNKNOWN, "x"]}}},
]


@pytest.mark.parametrize("props", SDK_PROPS)
def test_sdk_proxies_read_through_their_container_as_item_by_item(props: dict[str, Any]) -> None:
    from gpu_batch_policy.primitives import values
    from pulumi_policy.proxy import unknown_checking_proxy

    proxy = unknown_checking_proxy(props)
    assert values._DICT_PROXY is not None and type(proxy) is values._DICT_PROXY  # the fast path runs
    fast = plain(proxy, "root")
    general = plain(wrapped(proxy), "root")  # item by item, as every proxy was read before
    assert fast == general
    assert repr(fast) == repr(general)
