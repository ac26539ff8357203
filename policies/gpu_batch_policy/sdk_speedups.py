"""Decode each resource once per analyzer call, not once per stack policy.

pulumi-policy's ``AnalyzeStack`` loops over the stack policies and, inside that loop, converts
*every* resource of the request again (``json_format.MessageToDict`` then
``deserialize_properties``, pulumi_policy/policy.py ``_PolicyAnalyzerServicer.AnalyzeStack``).
With 31 stack policies and 5,000 resources that is 155,000 conversions of the same messages, and
it was 35 of the 52 seconds of a 1,000-team preview.

This module memoises both conversions, and the read-only proxy the SDK wraps around the
result, for the duration of one ``Analyze``/``AnalyzeStack`` call:
the same message object yields the same decoded value, which the SDK only wraps in a read-only
proxy.  The calls the engine makes, their order and their answers are unchanged.  If a future
SDK no longer has the names patched here, :func:`install` does nothing and the pack runs at the
SDK's own speed.
"""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

# Whether install() has patched the SDK in this process (a dict, so no `global` is needed).
_STATE = {"installed": False}


class _CallCache:
    """Decoded values by the identity of the object they came from, for one analyzer call.

    Each entry keeps its source object alive, so an id cannot be reused while it is cached.
    """

    def __init__(self) -> None:
        self.messages: dict[int, tuple[Any, Any]] = {}
        self.decoded: dict[int, tuple[Any, Any]] = {}
        self.proxies: dict[int, tuple[Any, Any]] = {}

    def clear(self) -> None:
        self.messages.clear()
        self.decoded.clear()
        self.proxies.clear()


def install() -> bool:
    """Patch the running pulumi-policy servicer; True when the speed-up is active."""
    if _STATE["installed"]:
        return True
    try:
        from pulumi_policy import policy
    except ImportError:
        return False
    sdk: Any = policy
    servicer = getattr(sdk, "_PolicyAnalyzerServicer", None)
    json_format = getattr(sdk, "json_format", None)
    deserialize = getattr(sdk, "deserialize_properties", None)
    make_proxy = getattr(sdk, "unknown_checking_proxy", None)
    if servicer is None or json_format is None or deserialize is None or make_proxy is None:
        return False
    if not all(callable(getattr(servicer, m, None)) for m in ("Analyze", "AnalyzeStack")):
        return False

    cache = _CallCache()
    message_to_dict: Callable[..., Any] = json_format.MessageToDict

    def cached_message_to_dict(message: Any, *args: Any, **kwargs: Any) -> Any:
        if args or kwargs:
            return message_to_dict(message, *args, **kwargs)
        hit = cache.messages.get(id(message))
        if hit is not None and hit[0] is message:
            return hit[1]
        value = message_to_dict(message)
        cache.messages[id(message)] = (message, value)
        return value

    def cached_deserialize(props: Any, *args: Any, **kwargs: Any) -> Any:
        # Only the plain form is memoised; Remediate's keep-unknowns call goes straight through.
        if args or kwargs:
            return deserialize(props, *args, **kwargs)
        hit = cache.decoded.get(id(props))
        if hit is not None and hit[0] is props:
            return hit[1]
        value = deserialize(props)
        cache.decoded[id(props)] = (props, value)
        return value

    def cached_proxy(value: Any) -> Any:
        # The proxy is a read-only view of the decoded value; one per value is enough.
        hit = cache.proxies.get(id(value))
        if hit is not None and hit[0] is value:
            return hit[1]
        proxy = make_proxy(value)
        cache.proxies[id(value)] = (value, proxy)
        return proxy

    def per_call(method: Callable[..., Any]) -> Callable[..., Any]:
        def wrapped(self: Any, request: Any, context: Any) -> Any:
            cache.clear()
            try:
                return method(self, request, context)
            finally:
                cache.clear()

        wrapped.__name__ = method.__name__
        wrapped.__doc__ = method.__doc__
        return wrapped

    # The SDK module's own `json_format` name, not protobuf's module: nothing else is affected.
    patched = SimpleNamespace(
        **{name: getattr(json_format, name) for name in dir(json_format) if not name.startswith("__")}
    )
    patched.MessageToDict = cached_message_to_dict
    sdk.json_format = patched
    sdk.deserialize_properties = cached_deserialize
    sdk.unknown_checking_proxy = cached_proxy
    servicer.Analyze = per_call(servicer.Analyze)
    servicer.AnalyzeStack = per_call(servicer.AnalyzeStack)
    _STATE["installed"] = True
    return True
