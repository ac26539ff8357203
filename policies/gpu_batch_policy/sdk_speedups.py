"""Make pulumi-policy's servicer do each piece of work once, without changing a single answer.

Three costs of the SDK (pulumi-policy 1.21.0, ``pulumi_policy/policy.py``,
``_PolicyAnalyzerServicer``) grow with the stack and dominated a 1,000-team preview:

* ``AnalyzeStack`` loops over the stack policies and, inside that loop, converts *every*
  resource of the request again (``json_format.MessageToDict``, ``deserialize_properties``,
  ``unknown_checking_proxy``): 31 stack policies x 5,000 resources = 155,000 conversions of the
  same messages, and reads the options and provider of each again.  The request's resources
  are read once into plain views, and the conversions, options and provider are memoised by
  object identity for the duration of one call (the same message yields the same decoded value,
  the same read-only proxy and the same options).  Policies therefore share these objects: as
  with the SDK's read-only property proxy, a policy must not mutate what it is given.
* Every ``Analyze``/``Remediate``/``AnalyzeStack`` call re-applies the runtime settings
  (``_configure_runtime_settings``), which re-parses the whole stack config (``PULUMI_CONFIG``,
  124 KB at 1,000 teams) from the environment: ~10,000 times per preview.  The parse is cached
  per environment; the settings themselves are still applied on *every* call, in the calling
  context.  They live in context variables, and grpcio (since 1.60) runs each RPC in a fresh
  context: applying them "once per thread" only worked because pulumi's ``ContextProperty``
  happens to promote the first value set to a process-wide default.
* ``Remediate`` decodes the resource's properties before looking for a policy at remediate
  level.  The engine sends it for every registration whatever the levels (pulumi/pulumi
  ``pkg/resource/deploy/step_generator.go``, ``generateSteps``), so when no resource policy is
  configured at remediate level the answer -- an empty ``RemediateResponse`` -- is given without
  decoding.  The levels are read on every call, as the SDK's own loop reads them.

The patch is written against the exact source of pulumi-policy 1.21.0 (it reads the servicer's
private policy list); with any other version :func:`install` does nothing and the pack runs the
SDK's stock code.  ``tests/policies/test_sdk_speedups.py`` checks that every patched function
answers as the stock one on the four stacks and the broken fixtures.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from importlib import metadata
from inspect import signature
from types import SimpleNamespace
from typing import Any

# The one pulumi-policy release whose servicer this module was written against and checked with.
PATCHED_SDK_VERSION = "1.21.0"
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

    def memoise_method(self, method: Callable[..., Any]) -> Callable[..., Any]:
        """A servicer method of one request argument, memoised like :meth:`memoise`."""
        entries: dict[int, tuple[Any, Any]] = {}
        self._entries.append(entries)

        def memoised(servicer: Any, value: Any) -> Any:
            hit = entries.get(id(value))
            if hit is not None and hit[0] is value:
                return hit[1]
            result = method(servicer, value)
            entries[id(value)] = (value, result)
            return result

        memoised.__name__ = method.__name__
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


class _RuntimeSettings:
    """pulumi-policy 1.21.0's ``_configure_runtime_settings``, with the environment parsed once.

    Applied on every call, in the caller's context: the same ``set_config`` per key and the
    same ``pulumi.runtime.configure(Settings(...))`` as the SDK, from values cached per
    environment (the SDK re-parses ``PULUMI_CONFIG`` and re-inspects ``Settings`` each time).
    """

    def __init__(self, runtime: Any) -> None:
        self._runtime = runtime
        self._key: tuple[str | None, ...] | None = None
        self._config: dict[str, Any] = {}
        self._settings_args: dict[str, Any] | None = None

    def _load(self, key: tuple[str | None, ...]) -> None:
        config_env = os.environ.get("PULUMI_CONFIG")
        self._config = json.loads(config_env) if config_env is not None else {}
        self._settings_args = None
        if all(name in os.environ for name in ("PULUMI_PROJECT", "PULUMI_STACK", "PULUMI_DRY_RUN")):
            args: dict[str, Any] = {
                "project": os.environ["PULUMI_PROJECT"],
                "stack": os.environ["PULUMI_STACK"],
                "dry_run": os.environ["PULUMI_DRY_RUN"] == "true",
            }
            if "organization" in signature(self._runtime.Settings).parameters:
                args["organization"] = os.environ.get("PULUMI_ORGANIZATION", "organization")
            self._settings_args = args
        self._key = key

    def apply(self, _servicer: Any = None) -> None:
        key = tuple(os.environ.get(name) for name in _RUNTIME_ENV)
        if key != self._key:
            self._load(key)
        for name, value in self._config.items():
            self._runtime.set_config(name, value)
        if self._settings_args is not None:
            self._runtime.configure(self._runtime.Settings(**self._settings_args))


class _StackResourceView:
    """One ``AnalyzeStack`` resource with the fields the 1.21.0 servicer reads, read from the
    message once and kept as plain Python values.

    The servicer walks every resource of the request once per stack policy; on the message,
    each walk re-created the field wrappers, so nothing it derived could be memoised by
    identity.  On these views the same resource is the same object for every policy."""

    __slots__ = (
        "_message",
        "dependencies",
        "name",
        "options",
        "parent",
        "properties",
        "propertyDependencies",
        "provider",
        "type",
        "urn",
    )

    def __init__(self, message: Any) -> None:
        self._message = message
        self.type = message.type
        self.urn = message.urn
        self.name = message.name
        self.parent = message.parent
        self.properties = message.properties
        self.options = message.options
        self.provider = message.provider
        self.dependencies = list(message.dependencies)
        self.propertyDependencies = dict(message.propertyDependencies)

    def HasField(self, name: str) -> bool:  # noqa: N802 - the protobuf method it stands for
        return bool(self._message.HasField(name))


class _StackRequestView:
    """``AnalyzeStackRequest`` as the 1.21.0 servicer reads it: only ``resources``."""

    __slots__ = ("resources",)

    def __init__(self, request: Any) -> None:
        self.resources = [_StackResourceView(r) for r in request.resources]


def _stack_over_views(analyze_stack: Callable[..., Any]) -> Callable[..., Any]:
    def over_views(servicer: Any, request: Any, context: Any) -> Any:
        return analyze_stack(servicer, _StackRequestView(request), context)

    over_views.__name__ = analyze_stack.__name__
    over_views.__doc__ = analyze_stack.__doc__
    return over_views


def _remediate_only_when_configured(remediate: Callable[..., Any], sdk: Any) -> Callable[..., Any]:
    """``Remediate`` answered without decoding when no resource policy is at remediate level.

    In 1.21.0 the SDK's loop skips every policy whose level is not REMEDIATE or which is not a
    ``ResourceValidationPolicy``; if none is left its answer is an empty ``RemediateResponse``
    (after applying the runtime settings, which this keeps)."""
    remediate_level = sdk.EnforcementLevel.REMEDIATE
    resource_policy = sdk.ResourceValidationPolicy

    def fast_remediate(servicer: Any, request: Any, context: Any) -> Any:
        policies = servicer._PolicyAnalyzerServicer__policies
        if any(
            isinstance(p, resource_policy) and servicer._get_enforcement_level(p) == remediate_level
            for p in policies
        ):
            return remediate(servicer, request, context)
        servicer._configure_runtime_settings()
        return sdk.proto.RemediateResponse()

    fast_remediate.__name__ = remediate.__name__
    fast_remediate.__doc__ = remediate.__doc__
    return fast_remediate


def sdk_version() -> str | None:
    try:
        return metadata.version("pulumi-policy")
    except metadata.PackageNotFoundError:
        return None


def install() -> bool:
    """Patch the running pulumi-policy servicer; True when the speed-ups are active.

    Only pulumi-policy ``PATCHED_SDK_VERSION`` is patched; any other version runs stock."""
    if _STATE["installed"]:
        return True
    if sdk_version() != PATCHED_SDK_VERSION:
        return False
    from pulumi_policy import policy

    sdk: Any = policy
    servicer = sdk._PolicyAnalyzerServicer
    cache = _CallCache()
    # The SDK module's own `json_format` name, not protobuf's module: nothing else is affected.
    json_format = SimpleNamespace(
        **{name: getattr(sdk.json_format, name) for name in dir(sdk.json_format) if not name.startswith("__")}
    )
    json_format.MessageToDict = cache.memoise(sdk.json_format.MessageToDict)
    sdk.json_format = json_format
    sdk.deserialize_properties = cache.memoise(sdk.deserialize_properties)
    sdk.unknown_checking_proxy = cache.memoise(sdk.unknown_checking_proxy)
    servicer._configure_runtime_settings = _RuntimeSettings(sdk.pulumi.runtime).apply
    servicer.Analyze = cache.per_call(servicer.Analyze)
    servicer._get_resource_options = cache.memoise_method(servicer._get_resource_options)
    servicer._get_provider_resource = cache.memoise_method(servicer._get_provider_resource)
    servicer.AnalyzeStack = cache.per_call(_stack_over_views(servicer.AnalyzeStack))
    servicer.Remediate = _remediate_only_when_configured(servicer.Remediate, sdk)
    _STATE["installed"] = True
    return True
