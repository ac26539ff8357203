"""Make pulumi-policy's servicer do each piece of work once, without changing a single answer.

Two costs of the SDK grow with the stack and dominated a 1,000-team preview:

* ``AnalyzeStack`` loops over the stack policies and, inside that loop, converts *every*
  resource of the request again (``json_format.MessageToDict``, ``deserialize_properties``,
  ``unknown_checking_proxy``; pulumi_policy/policy.py ``_PolicyAnalyzerServicer.AnalyzeStack``):
  31 stack policies x 5,000 resources = 155,000 conversions of the same messages.
* Every ``Analyze``/``Remediate``/``AnalyzeStack`` call re-applies the runtime settings, which
  re-parses the whole stack config (``PULUMI_CONFIG``, 124 KB at 1,000 teams) from the
  environment: ~10,000 times per preview.

So the conversions are memoised by object identity for the duration of one call (the same
message yields the same decoded value and the same read-only proxy), and the runtime settings
are applied once per server thread (they live in context variables, i.e. per thread) and again
only if the environment changed.  The calls the engine makes, their order and their answers are
unchanged.  If a future SDK lacks a name patched here, :func:`install` does nothing and the pack
runs at the SDK's own speed.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

# Whether install() has patched the SDK in this process (a dict, so no `global` is needed).
_STATE = {"installed": False}
# What pulumi-policy's _configure_runtime_settings reads from the environment.
_RUNTIME_ENV = ("PULUMI_CONFIG", "PULUMI_PROJECT", "PULUMI_STACK", "PULUMI_DRY_RUN", "PULUMI_ORGANIZATION")


class _CallCache:
    """Results by the identity of their single argument, for one analyzer call.

    Each entry keeps its argument alive, so an id cannot be reused while it is cached.  Calls
    with more arguments (Remediate's keep-unknowns decoding) are not memoised.
    """

    def __init__(self) -> None:
        self._entries: list[dict[int, tuple[Any, Any]]] = []

    def clear(self) -> None:
        for entries in self._entries:
            entries.clear()

    def memoise(self, function: Callable[..., Any]) -> Callable[..., Any]:
        entries: dict[int, tuple[Any, Any]] = {}
        self._entries.append(entries)

        def memoised(value: Any, *args: Any, **kwargs: Any) -> Any:
            if args or kwargs:
                return function(value, *args, **kwargs)
            hit = entries.get(id(value))
            if hit is not None and hit[0] is value:
                return hit[1]
            result = function(value)
            entries[id(value)] = (value, result)
            return result

        return memoised

    def per_call(self, method: Callable[..., Any]) -> Callable[..., Any]:
        def wrapped(servicer: Any, request: Any, context: Any) -> Any:
            self.clear()
            try:
                return method(servicer, request, context)
            finally:
                self.clear()

        wrapped.__name__ = method.__name__
        wrapped.__doc__ = method.__doc__
        return wrapped


def _once_per_thread(configure: Callable[[Any], None]) -> Callable[[Any], None]:
    applied = threading.local()

    def configure_once(servicer: Any) -> None:
        key = tuple(os.environ.get(name) for name in _RUNTIME_ENV)
        if getattr(applied, "key", None) != key:
            configure(servicer)
            applied.key = key

    return configure_once


def install() -> bool:
    """Patch the running pulumi-policy servicer; True when the speed-ups are active."""
    if _STATE["installed"]:
        return True
    try:
        from pulumi_policy import policy
    except ImportError:
        return False
    sdk: Any = policy
    servicer = getattr(sdk, "_PolicyAnalyzerServicer", None)
    needed = ("json_format", "deserialize_properties", "unknown_checking_proxy")
    methods = ("Analyze", "AnalyzeStack", "_configure_runtime_settings")
    if servicer is None or not all(hasattr(sdk, n) for n in needed):
        return False
    if not all(callable(getattr(servicer, m, None)) for m in methods):
        return False

    cache = _CallCache()
    # The SDK module's own `json_format` name, not protobuf's module: nothing else is affected.
    json_format = SimpleNamespace(
        **{name: getattr(sdk.json_format, name) for name in dir(sdk.json_format) if not name.startswith("__")}
    )
    json_format.MessageToDict = cache.memoise(sdk.json_format.MessageToDict)
    sdk.json_format = json_format
    sdk.deserialize_properties = cache.memoise(sdk.deserialize_properties)
    sdk.unknown_checking_proxy = cache.memoise(sdk.unknown_checking_proxy)
    servicer._configure_runtime_settings = _once_per_thread(servicer._configure_runtime_settings)
    servicer.Analyze = cache.per_call(servicer.Analyze)
    servicer.AnalyzeStack = cache.per_call(servicer.AnalyzeStack)
    _STATE["installed"] = True
    return True
