"""Make pulumi-policy's servicer do each piece of work once, without changing a single answer.

Six costs of the SDK (pulumi-policy 1.21.0, ``pulumi_policy/policy.py``,
``_PolicyAnalyzerServicer``) grow with the stack and dominated a 1,000-team preview:

* ``AnalyzeStack`` loops over the stack policies and, inside that loop, builds *every* resource
  of the request again (``json_format.MessageToDict``, ``deserialize_properties``,
  ``unknown_checking_proxy``, options, provider, parent and dependency links): 49 stack
  policies x 5,000 resources = 245,000 builds of the same resources.  They are built once per
  call (:func:`_analyze_stack_building_resources_once`), and ``Analyze``'s conversions,
  options and provider are memoised by object identity for the duration of one call.
  Policies therefore share these objects: as with the SDK's read-only property proxy, a
  policy must not mutate what it is given.
* Every ``Analyze``/``Remediate``/``AnalyzeStack`` call re-applies the runtime settings
  (``_configure_runtime_settings``), which re-parses the whole stack config (``PULUMI_CONFIG``,
  124 KB at 1,000 teams) from the environment: ~10,000 times per preview.  The parse is cached
  per environment; the settings themselves are still applied on *every* call, in the calling
  context.  They live in context variables, and grpcio (since 1.60) runs each RPC in a fresh
  context: applying them "once per thread" only worked because pulumi's ``ContextProperty``
  happens to promote the first value set to a process-wide default.
* ``Analyze`` calls every resource policy with every resource (14 policies x 12,000 resources
  at 1,000 teams), building each policy's ``report_violation`` and arguments, though most
  policies judge a few resource types and return at once for the rest.  A policy built
  with a type predicate (``primitives/type_predicate.py``) is not called for a type it does not judge
  (:func:`_analyze_calling_only_the_policies_that_judge_the_type`).
* ``Remediate`` decodes the resource's properties before looking for a policy at remediate
  level.  The engine sends it for every registration whatever the levels (pulumi/pulumi
  ``pkg/resource/deploy/step_generator.go``, ``generateSteps``), so when no resource policy is
  configured at remediate level the answer -- an empty ``RemediateResponse`` -- is given without
  decoding.  The levels are read on every call, as the SDK's own loop reads them.
* Every resource of every call is decoded by protobuf's generic printer
  (``json_format.MessageToDict``), ~1.2 s of a 1,000-team ``AnalyzeStack`` and about half of each
  ``Analyze``'s own work.  A ``Struct`` called with no options is decoded by
  :func:`..primitives.struct_dict.struct_to_dict` instead (the same dict, value for value and key
  for key, in about 40% of the time), bounded at :data:`FAST_DECODE_DEPTH` levels; a deeper one,
  and anything else, goes to the printer, so where the SDK's decoding gives up is unchanged
  (``servicer_guard`` answers for that).
* Both per-resource loops go over all 150 policies to skip the 136 that are not resource
  policies, an abstract-class ``isinstance`` each, twice per registration; which ones are
  resource policies is read once per policy list (:class:`_ResourcePolicies`).

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

from google.protobuf import struct_pb2

from ..primitives.struct_dict import TooDeepError, struct_to_dict
from ..primitives.type_predicate import type_predicate

# The one pulumi-policy release whose servicer this module was written against and checked with.
PATCHED_SDK_VERSION = "1.21.0"
# Value levels the fast decoding reads: far above what a stack nests, and below the 120 at which
# the SDK's own decoding is known to succeed (servicer_guard.MAX_DECODABLE_DEPTH).
FAST_DECODE_DEPTH = 64
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


class _ResourcePolicies:
    """The servicer's resource policies, in the pack's order, picked out of its list once.

    Both of pulumi-policy 1.21.0's per-resource loops (``Analyze``, ``Remediate``) go over every
    policy of the pack and skip each one that is not a ``ResourceValidationPolicy`` -- an
    ``isinstance`` on an abstract class, after reading its enforcement level -- for every
    resource: 150 policies, 14 of them resource policies, twice per registration.  Which
    policies are resource policies is a fact of the list, so it is read once per list: the
    servicer's list is built once (``PolicyPack``) and never changed, and a list that is not the
    one seen (another object, or another length) is read again.  The levels are still read on
    every call, as the SDK reads them (``Configure`` may replace them between calls), but for the
    resource policies only: reading a stack policy's level has no effect either loop could see.
    """

    def __init__(self, sdk: Any) -> None:
        self._kind = sdk.ResourceValidationPolicy
        self._seen: tuple[Any, int, tuple[Any, ...]] | None = None

    def of(self, servicer: Any) -> tuple[Any, ...]:
        policies = servicer._PolicyAnalyzerServicer__policies
        seen = self._seen
        if seen is None or seen[0] is not policies or seen[1] != len(policies):
            seen = (policies, len(policies), tuple(p for p in policies if isinstance(p, self._kind)))
            self._seen = seen
        return seen[2]


def _validate(
    sdk: Any, servicer: Any, response: Any, *, policy: Any, args: Any, report_violation: Any
) -> None:
    """One policy's ``validate``, as both of pulumi-policy 1.21.0's analyze loops run it.

    An awaitable result runs on a fresh event loop; ``UnknownValueError`` becomes the SDK's
    advisory "can't run policy ... during preview" diagnostic, ``_NotApplicableError`` a
    ``not_applicable`` entry.
    """
    proto = sdk.proto
    try:
        result = policy.validate(args, report_violation)
        if sdk.isawaitable(result):
            loop = sdk.asyncio.new_event_loop()
            task = sdk.asyncio.Task(result, loop=loop)
            loop.run_until_complete(task)
            loop.close()
    except sdk.UnknownValueError as error:
        pack_name = servicer._PolicyAnalyzerServicer__policy_pack_name
        pack_version = servicer._PolicyAnalyzerServicer__policy_pack_version
        response.diagnostics.append(
            proto.AnalyzeDiagnostic(
                policyName=policy.name,
                policyPackName=pack_name,
                policyPackVersion=pack_version,
                message=(
                    f"can't run policy '{policy.name}' from policy pack "
                    f"'{pack_name}@v{pack_version}' during preview: {error.message}"
                ),
                urn="",
                description=policy.description,
                enforcementLevel=servicer._map_enforcement_level(sdk.EnforcementLevel.ADVISORY),
            )
        )
    except sdk._NotApplicableError as error:
        response.not_applicable.append(
            proto.PolicyNotApplicable(policy_name=policy.name, reason=error.reason or "")
        )


def _analyze_stack_building_resources_once(sdk: Any) -> Callable[..., Any]:
    """``AnalyzeStack`` as pulumi-policy 1.21.0 answers it, with the stack's resources built once.

    The SDK's servicer builds every ``PolicyResource`` of the request -- decoded properties,
    options, provider, parent and dependency links -- inside its loop over the stack policies:
    49 policies x 5,000 resources = 245,000 builds at 1,000 teams (~2.7 s, most of the pack's
    work after the program has finished).  Here they are built once per call, at the first
    enabled stack policy, and every policy gets its own list of the same objects.  Everything
    else is the SDK's loop, step for step: the same level handling (disabled skipped, remediate
    reported as mandatory), the same ``report_violation``, config and stack tags, awaitable
    validators run on a fresh event loop, ``UnknownValueError`` turned into the same advisory
    "can't run policy" diagnostic and ``_NotApplicableError`` into ``not_applicable``.
    Policies share the resource objects, so -- as with the SDK's read-only property proxy --
    a policy must not mutate what it is given; this pack's policies only read.
    """
    proto = sdk.proto
    levels = sdk.EnforcementLevel

    def build_resources(servicer: Any, request: Any) -> list[Any]:
        by_urn: dict[str, Any] = {}
        links: list[tuple[Any, str, list[str], dict[str, list[str]]]] = []
        for message in request.resources:
            props = sdk.unknown_checking_proxy(
                sdk.deserialize_properties(sdk.json_format.MessageToDict(message.properties))
            )
            resource = sdk.PolicyResource(
                message.type,
                props,
                message.urn,
                message.name,
                servicer._get_resource_options(message),
                servicer._get_provider_resource(message),
                None,
                [],
                {},
            )
            property_dependencies = {k: list(v.urns) for k, v in message.propertyDependencies.items()}
            links.append((resource, message.parent, list(message.dependencies), property_dependencies))
            by_urn[resource.urn] = resource
        for resource, parent, dependencies, property_dependencies in links:
            if parent is not None and parent in by_urn:
                resource.parent = by_urn[parent]
            resource.dependencies.extend(by_urn[d] for d in dependencies if d in by_urn)
            for key, urns in property_dependencies.items():
                resource.property_dependencies[key] = [by_urn[d] for d in urns if d in by_urn]
        return [resource for resource, *_ in links]

    def analyze_stack(servicer: Any, request: Any, _context: Any) -> Any:
        servicer._configure_runtime_settings()
        response = proto.AnalyzeResponse()
        resources: list[Any] | None = None
        for policy in servicer._PolicyAnalyzerServicer__policies:
            level = servicer._get_enforcement_level(policy)
            if level == levels.DISABLED or not isinstance(policy, sdk.StackValidationPolicy):
                continue
            if level == levels.REMEDIATE:
                level = levels.MANDATORY  # stack policies cannot remediate
            report_violation = servicer._create_report_violation(
                response, policy.name, policy.description, level, policy.severity
            )
            if resources is None:
                resources = build_resources(servicer, request)
            args = sdk.StackValidationArgs(
                list(resources),
                servicer._get_policy_config(policy.name),
                servicer._PolicyAnalyzerServicer__stack_tags,
            )
            _validate(sdk, servicer, response, policy=policy, args=args, report_violation=report_violation)
        return response

    analyze_stack.__name__ = "AnalyzeStack"
    return analyze_stack


def _analyze_calling_only_the_policies_that_judge_the_type(
    sdk: Any, resource_policies: _ResourcePolicies
) -> Callable[..., Any]:
    """``Analyze`` as pulumi-policy 1.21.0 answers it, without the calls that cannot report.

    The SDK's loop (``_PolicyAnalyzerServicer.Analyze``), step for step: disabled and
    non-resource policies skipped, a policy without ``validate`` reported not applicable,
    remediate reported as mandatory, the same ``report_violation``, arguments, config and stack
    tags, awaitable validators run on a fresh event loop, ``UnknownValueError`` turned into the
    same advisory "can't run policy" diagnostic and ``_NotApplicableError`` into
    ``not_applicable``.  Two differences: the loop goes over the resource policies only
    (:class:`_ResourcePolicies`; the SDK's skips the others), and a policy marked with
    ``primitives/type_predicate.py`` ``judges_only`` whose predicate refuses the request's type is
    not called, since its ``validate`` would return having done nothing.  The properties, options and provider are still decoded at the first
    policy that validates, where the SDK decodes them, so a request that cannot be decoded
    fails there as it does in the SDK (``servicer_guard`` answers for it).
    """
    proto = sdk.proto
    levels = sdk.EnforcementLevel

    def analyze(servicer: Any, request: Any, _context: Any) -> Any:
        servicer._configure_runtime_settings()
        response = proto.AnalyzeResponse()
        decoded: tuple[Any, Any, Any] | None = None
        for policy in resource_policies.of(servicer):
            level = servicer._get_enforcement_level(policy)
            if level == levels.DISABLED:
                continue
            if not policy.has_validation():
                response.not_applicable.append(
                    proto.PolicyNotApplicable(
                        policy_name=policy.name, reason="Policy does not implement validate"
                    )
                )
                continue
            if level == levels.REMEDIATE:
                level = levels.MANDATORY  # a violation after remediation is reported as mandatory
            if decoded is None:
                props = sdk.unknown_checking_proxy(
                    sdk.deserialize_properties(sdk.json_format.MessageToDict(request.properties))
                )
                decoded = (
                    props,
                    servicer._get_resource_options(request),
                    servicer._get_provider_resource(request),
                )
            judges_type = type_predicate(policy)
            if judges_type is not None and not judges_type(request.type):
                continue
            report_violation = servicer._create_report_violation(
                response, policy.name, policy.description, level, policy.severity
            )
            props, options, provider = decoded
            args = sdk.ResourceValidationArgs(
                request.type,
                props,
                request.urn,
                request.name,
                options,
                provider,
                servicer._get_policy_config(policy.name),
                servicer._PolicyAnalyzerServicer__stack_tags,
            )
            _validate(sdk, servicer, response, policy=policy, args=args, report_violation=report_violation)
        return response

    analyze.__name__ = "Analyze"
    return analyze


def _remediate_only_when_configured(
    remediate: Callable[..., Any], sdk: Any, resource_policies: _ResourcePolicies
) -> Callable[..., Any]:
    """``Remediate`` answered without decoding when no resource policy is at remediate level.

    In 1.21.0 the SDK's loop skips every policy whose level is not REMEDIATE or which is not a
    ``ResourceValidationPolicy``; if none is left its answer is an empty ``RemediateResponse``
    (after applying the runtime settings, which this keeps).  The levels are read on every call,
    of the resource policies only (:class:`_ResourcePolicies`)."""
    remediate_level = sdk.EnforcementLevel.REMEDIATE

    def fast_remediate(servicer: Any, request: Any, context: Any) -> Any:
        level_of = servicer._get_enforcement_level
        if any(level_of(p) == remediate_level for p in resource_policies.of(servicer)):
            return remediate(servicer, request, context)
        servicer._configure_runtime_settings()
        return sdk.proto.RemediateResponse()

    fast_remediate.__name__ = remediate.__name__
    fast_remediate.__doc__ = remediate.__doc__
    return fast_remediate


def _decoding_structs_directly(message_to_dict: Callable[..., Any]) -> Callable[..., Any]:
    """``json_format.MessageToDict`` with a ``Struct`` and no options decoded by the direct walk
    (module docstring); everything else, and a ``Struct`` nested deeper than
    :data:`FAST_DECODE_DEPTH`, by ``message_to_dict`` itself."""

    def decode(message: Any, *args: Any, **kwargs: Any) -> Any:
        if args or kwargs or type(message) is not struct_pb2.Struct:
            return message_to_dict(message, *args, **kwargs)
        try:
            return struct_to_dict(message, max_depth=FAST_DECODE_DEPTH)
        except TooDeepError:
            return message_to_dict(message)

    return decode


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
    json_format.MessageToDict = cache.memoise(_decoding_structs_directly(sdk.json_format.MessageToDict))
    sdk.json_format = json_format
    sdk.deserialize_properties = cache.memoise(sdk.deserialize_properties)
    sdk.unknown_checking_proxy = cache.memoise(sdk.unknown_checking_proxy)
    servicer._configure_runtime_settings = _RuntimeSettings(sdk.pulumi.runtime).apply
    resource_policies = _ResourcePolicies(sdk)
    servicer.Analyze = cache.per_call(
        _analyze_calling_only_the_policies_that_judge_the_type(sdk, resource_policies)
    )
    servicer._get_resource_options = cache.memoise_method(servicer._get_resource_options)
    servicer._get_provider_resource = cache.memoise_method(servicer._get_provider_resource)
    servicer.AnalyzeStack = cache.per_call(_analyze_stack_building_resources_once(sdk))
    servicer.Remediate = _remediate_only_when_configured(servicer.Remediate, sdk, resource_policies)
    _STATE["installed"] = True
    return True
