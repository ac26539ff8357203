"""The pack's SDK speed-ups change no answer, hold under normal context semantics, and stay off for
any pulumi-policy other than the one they were written against.

The patch rewires pulumi-policy's servicer module, so it is exercised in child processes: a probe
for the memoisation and the version gate, and two real packs over the analyzer protocol (the stock
SDK and the patched one) whose every answer is compared.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import json_format, struct_pb2
from google.protobuf.message import Message
from gpu_batch_policy.runtime import sdk_speedups, servicer_guard
from pulumi.runtime.proto import analyzer_pb2

from preview.analyzer import PolicyPackProcess, ProviderResolver
from preview.records import RecordedResource
from preview.stack_files import stack_names
from tests.compact_crds import with_compact_crd_schemas
from tests.stack_runner import ROOT, program_records, unedited_run

POLICIES = ROOT / "policies"
FOREIGN = ROOT / "tests" / "fixtures" / "foreign_program"

PROBE = textwrap.dedent(
    """
    from google.protobuf import struct_pb2
    from pulumi_policy import policy as sdk
    from gpu_batch_policy.runtime import sdk_speedups

    assert sdk_speedups.install() and sdk_speedups.install()  # idempotent
    a, b = struct_pb2.Struct(), struct_pb2.Struct()
    a.update({"x": 1}); b.update({"x": 1})
    first = sdk.json_format.MessageToDict(a)
    assert sdk.json_format.MessageToDict(a) is first          # same message: decoded once
    assert sdk.json_format.MessageToDict(b) is not first      # another message: its own value
    assert sdk.json_format.MessageToDict(b) == first
    decoded = sdk.deserialize_properties(first)
    assert sdk.deserialize_properties(first) is decoded
    assert sdk.deserialize_properties(first, True) is not decoded   # keep-unknowns form not memoised
    proxy = sdk.unknown_checking_proxy(decoded)
    assert sdk.unknown_checking_proxy(decoded) is proxy and proxy["x"] == 1
    print("ok")
    """
)

# Runtime settings under *normal* context-variable semantics: pulumi's ContextProperty promotes the
# first value it is given to a process-wide default, which hid that a value set in one gRPC call's
# context is gone in the next.  The probe removes that promotion, then applies the settings in
# fresh contexts, as grpcio runs each call.
SETTINGS_PROBE = textwrap.dedent(
    """
    import contextvars, os
    import pulumi, pulumi.runtime
    from pulumi import _utils

    def plain_set(self, v, *_):
        return self._data.set(v)
    _utils.ContextProperty.fset = plain_set

    from pulumi_policy import policy as sdk
    from gpu_batch_policy.runtime import sdk_speedups
    assert sdk_speedups.install()
    os.environ.update(PULUMI_CONFIG='{"p:k": "v"}', PULUMI_PROJECT="p", PULUMI_STACK="s", PULUMI_DRY_RUN="true")
    configure = sdk._PolicyAnalyzerServicer._configure_runtime_settings

    def one_call():
        configure()
        return pulumi.get_stack(), pulumi.get_project(), pulumi.runtime.is_dry_run(), pulumi.Config("p").get("k")

    assert contextvars.Context().run(one_call) == ("s", "p", True, "v")
    parse = sdk_speedups.json.loads
    def refuse(*args, **kwargs):
        raise AssertionError("re-parsed an unchanged config")
    sdk_speedups.json.loads = refuse
    for _ in range(3):                                       # every call, its own fresh context
        assert contextvars.Context().run(one_call) == ("s", "p", True, "v")
    sdk_speedups.json.loads = parse
    os.environ["PULUMI_STACK"] = "other"
    assert contextvars.Context().run(one_call)[0] == "other"  # a changed environment is re-read
    print("ok")
    """
)

VERSION_GATE_PROBE = textwrap.dedent(
    """
    from pulumi_policy import policy as sdk
    from gpu_batch_policy.runtime import sdk_speedups
    stock = dict(vars(sdk._PolicyAnalyzerServicer))
    sdk_speedups.sdk_version = lambda: "1.22.0"
    assert sdk_speedups.install() is False
    assert dict(vars(sdk._PolicyAnalyzerServicer)) == stock
    assert sdk.deserialize_properties.__module__ != "gpu_batch_policy.runtime.sdk_speedups"
    print("ok")
    """
)


# Which policies are resource policies is read once per policy list: the same list (same object,
# same length) is not read again, and another list, or the same one grown, is.
RESOURCE_POLICIES_PROBE = textwrap.dedent(
    """
    from types import SimpleNamespace
    from pulumi_policy import policy as sdk
    from gpu_batch_policy.runtime import sdk_speedups
    from gpu_batch_policy.runtime.registry import ALL_POLICIES

    picked = sdk_speedups._ResourcePolicies(sdk)
    servicer = SimpleNamespace(_PolicyAnalyzerServicer__policies=list(ALL_POLICIES))
    first = picked.of(servicer)
    assert first == tuple(p for p in ALL_POLICIES if isinstance(p, sdk.ResourceValidationPolicy))
    assert 0 < len(first) < len(ALL_POLICIES)              # stack policies left out, order kept
    assert picked.of(servicer) is first                     # the same list: not read again
    stack_only = [p for p in ALL_POLICIES if not isinstance(p, sdk.ResourceValidationPolicy)]
    servicer._PolicyAnalyzerServicer__policies = stack_only
    assert picked.of(servicer) == ()                        # another list: read again
    stack_only.append(first[0])
    assert picked.of(servicer) == (first[0],)               # the same list grown: read again
    print("ok")
    """
)


def _probe(code: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=POLICIES, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def test_memoises_per_message_and_passes_other_forms_through() -> None:
    _probe(PROBE)


def test_runtime_settings_hold_in_every_fresh_context_and_are_parsed_once() -> None:
    _probe(SETTINGS_PROBE)


def test_resource_policies_are_picked_once_per_policy_list() -> None:
    _probe(RESOURCE_POLICIES_PROBE)


def test_any_other_pulumi_policy_version_runs_stock() -> None:
    _probe(VERSION_GATE_PROBE)


# --- every patched function answers as the stock SDK, over the protocol --------------------------

STOCK_MAIN = textwrap.dedent(
    f"""
    import sys
    sys.path.insert(0, {str(POLICIES)!r})
    from gpu_batch_policy.runtime import servicer_guard
    from gpu_batch_policy.runtime.registry import ALL_POLICIES
    from pulumi_policy import EnforcementLevel, PolicyPack

    servicer_guard.install()
    PolicyPack(name="gpu-batch", policies=ALL_POLICIES, enforcement_level=EnforcementLevel.MANDATORY)
    """
)


def _stock_pack_dir(root: Path) -> Path:
    """The same policies under the unpatched SDK (the real pack's entry point installs the patch).

    The servicer guard is installed in both: it is not a speed-up but the pack's secret redaction
    (``runtime/servicer_guard.py``), and a finding that quotes text also found in a secret (prod's
    resource names) must read the same in both packs."""
    root.mkdir()
    (root / "PulumiPolicy.yaml").write_text("runtime: python\ndescription: stock SDK\n")
    (root / "__main__.py").write_text(STOCK_MAIN)
    return root


def _stack_records() -> Iterator[tuple[str, list[RecordedResource]]]:
    for stack in stack_names(ROOT):
        yield stack, with_compact_crd_schemas(unedited_run(stack).resources)
    for stack in ("broken", "fixed"):
        yield f"foreign/{stack}", program_records(FOREIGN, stack)


@pytest.fixture(scope="module")
def stacks() -> list[tuple[str, list[RecordedResource]]]:
    """Every stack's registrations, run once for both cases (read only: requests are built from them)."""
    return list(_stack_records())


def _request_key(request: analyzer_pb2.AnalyzeRequest) -> bytes:
    """What the SDK decodes of a resource: its type and properties (name, URN, parent and provider
    are passed through or decoded from their own messages, see :func:`_answers`)."""
    return request.type.encode() + b"\0" + request.properties.SerializeToString(deterministic=True)


def _answers(
    pack: PolicyPackProcess, resources: Sequence[RecordedResource], compared: set[bytes]
) -> list[bytes]:
    """Every Remediate, Analyze and AnalyzeStack answer, serialised deterministically.

    ``Remediate`` and ``Analyze`` are compared once per distinct resource (:func:`_request_key`,
    remembered in ``compared`` across stacks): the same CRD of the same chart is registered by
    several stacks (dev, prod and each multiregion cluster install Kueue's), and the stock SDK
    spends minutes decoding each copy again (17 MB of requests, 2.9 MB of them distinct).  A
    repeated copy differs only in its name (each multiregion cluster's carries the cluster's
    prefix), URN, parent and provider, and adds no path through the patch: the name and URN are
    handed to the policies as they are (pulumi-policy 1.21.0 ``pulumi_policy/policy.py``,
    ``_PolicyAnalyzerServicer.Analyze``: ``ResourceValidationArgs(request.type, props,
    request.urn, request.name, ...)``), every memo of ``sdk_speedups`` is keyed by object identity
    for one call (``_CallCache``), never by content across calls, and each stack's providers and
    options are still sent with every other resource of that stack.  ``AnalyzeStack`` gets every
    resource of every stack, duplicates included."""
    resolver = ProviderResolver({r.urn: r for r in resources})
    answers = []
    for record in resources:
        request = pack.analyze_request(record, resolver)
        key = _request_key(request)
        if key in compared:
            continue
        compared.add(key)
        answers.append(pack.call("Remediate", request).SerializeToString(deterministic=True))
        answers.append(pack.call("Analyze", request).SerializeToString(deterministic=True))
    answers.append(pack.analyze_stack(resources, resolver).SerializeToString(deterministic=True))
    return answers


@pytest.mark.parametrize("levels", [None, {"all": "remediate"}], ids=["configured-levels", "all-remediate"])
def test_patched_answers_equal_the_stock_sdk(
    levels: dict[str, str] | None, stacks: list[tuple[str, list[RecordedResource]]], tmp_path: Path
) -> None:
    """Remediate (both branches of its fast path), Analyze and AnalyzeStack, byte for byte."""
    compared_patched: set[bytes] = set()
    compared_stock: set[bytes] = set()
    with (
        PolicyPackProcess(POLICIES, stack="dev") as patched,
        PolicyPackProcess(_stock_pack_dir(tmp_path / "stock"), stack="dev") as stock,
    ):
        assert patched.configure(levels) == stock.configure(levels)
        for name, resources in stacks:
            assert _answers(patched, resources, compared_patched) == _answers(
                stock, resources, compared_stock
            ), name
    # Every resource type of every stack was compared one by one, not only inside AnalyzeStack.
    assert compared_patched == compared_stock
    assert {key.split(b"\0", 1)[0].decode() for key in compared_patched} == {
        r.type for _, resources in stacks for r in resources
    }


# A pack whose policies read the runtime settings, under normal context semantics (see SETTINGS_PROBE).
READS_SETTINGS_MAIN = textwrap.dedent(
    f"""
    import sys
    sys.path.insert(0, {str(POLICIES)!r})
    import pulumi, pulumi.runtime
    from pulumi import _utils

    def plain_set(self, v, *_):
        return self._data.set(v)
    _utils.ContextProperty.fset = plain_set

    from gpu_batch_policy.runtime import sdk_speedups
    from pulumi_policy import EnforcementLevel, PolicyPack, ResourceValidationPolicy, StackValidationPolicy

    assert sdk_speedups.install()

    def seen():
        return f"stack={{pulumi.get_stack()}} project={{pulumi.get_project()}} dry_run={{pulumi.runtime.is_dry_run()}}"

    PolicyPack(
        name="reads-settings",
        enforcement_level=EnforcementLevel.ADVISORY,
        policies=[
            ResourceValidationPolicy(
                name="resource-sees-settings", description="d", validate=lambda args, report: report(seen())
            ),
            StackValidationPolicy(
                name="stack-sees-settings", description="d", validate=lambda args, report: report(seen())
            ),
        ],
    )
    """
)


def test_a_policy_reading_the_stack_and_dry_run_sees_them_on_every_call(tmp_path: Path) -> None:
    pack_dir = tmp_path / "reads-settings"
    pack_dir.mkdir()
    (pack_dir / "PulumiPolicy.yaml").write_text("runtime: python\ndescription: reads settings\n")
    (pack_dir / "__main__.py").write_text(READS_SETTINGS_MAIN)
    resources = unedited_run("dev").resources
    with PolicyPackProcess(pack_dir, stack="dev", project="gpu-batch", dry_run=True) as pack:
        result = pack.run(resources)
    messages = [d.message for d in result.diagnostics]
    assert len(messages) == len(resources) + 1  # one per Analyze, one from AnalyzeStack
    assert set(messages) == {"stack=dev project=gpu-batch dry_run=True"}


# Every kind of policy the patched loops treat differently, each reporting whenever it is called,
# in one list with stack policies between them: the rules' own fixtures leave most resource
# policies silent (no stack file breaks them), so a loop that skipped one would pass the
# comparison above; here a skipped, reordered or wrongly levelled policy changes the answer.
EVERY_KIND_MAIN = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, {policies!r})
    from gpu_batch_policy.primitives.type_predicate import judges_only
    from gpu_batch_policy.runtime import sdk_speedups
    from pulumi_policy import EnforcementLevel, PolicyPack, ResourceValidationPolicy, StackValidationPolicy

    if {patched}:  # the stock pack leaves the SDK as it is
        assert sdk_speedups.install()
    NAMESPACE = "kubernetes:core/v1:Namespace"

    def resource(name, level=None, validate=True, only=None):
        def report(args, report_violation):
            if only is None or args.resource_type == only:  # judges_only's contract
                report_violation(f"{{name}} saw {{args.resource_type}}")
        return ResourceValidationPolicy(
            name=name,
            description=name,
            enforcement_level=level,
            validate=report if validate else None,
            remediate=None if validate else (lambda args: None),  # changes nothing
        )

    def stack(name):
        return StackValidationPolicy(
            name=name, description=name, validate=lambda args, report: report(f"{{len(args.resources)}}")
        )

    PolicyPack(
        name="every-kind",
        enforcement_level=EnforcementLevel.ADVISORY,
        policies=[
            stack("stack-first"),
            resource("resource-advisory"),
            resource("resource-mandatory", EnforcementLevel.MANDATORY),
            stack("stack-between"),
            resource("resource-disabled", EnforcementLevel.DISABLED),
            judges_only(resource("resource-namespaces-only", only=NAMESPACE), lambda t: t == NAMESPACE),
            resource("resource-without-validate", validate=False),
            resource("resource-remediate", EnforcementLevel.REMEDIATE),
            stack("stack-last"),
        ],
    )
    """
)


def _every_kind_pack(root: Path, *, patched: bool) -> Path:
    root.mkdir()
    (root / "PulumiPolicy.yaml").write_text("runtime: python\ndescription: every kind of policy\n")
    (root / "__main__.py").write_text(EVERY_KIND_MAIN.format(policies=str(POLICIES), patched=patched))
    return root


@pytest.mark.parametrize(
    "levels",
    [None, {"resource-advisory": "disabled", "resource-disabled": "mandatory"}, {"all": "remediate"}],
    ids=["pack-levels", "configured-levels", "all-remediate"],
)
def test_a_pack_where_every_resource_policy_reports_answers_as_the_stock_sdk(
    levels: dict[str, str] | None, tmp_path: Path
) -> None:
    resources = unedited_run("dev").resources
    types = {r.type for r in resources}
    assert "kubernetes:core/v1:Namespace" in types and len(types) > 2  # the predicate refuses some
    with (
        PolicyPackProcess(_every_kind_pack(tmp_path / "patched", patched=True), stack="dev") as patched,
        PolicyPackProcess(_every_kind_pack(tmp_path / "stock", patched=False), stack="dev") as stock,
    ):
        assert patched.configure(levels) == stock.configure(levels)
        answers = [_answers(pack, resources, set()) for pack in (patched, stock)]
    assert answers[0] == answers[1]
    reported = {
        d.policyName
        for answer in answers[1]
        for d in analyzer_pb2.AnalyzeResponse.FromString(answer).diagnostics
    }
    # Every enabled policy with a validate reported in the stock answers, so none can go missing.
    assert {"resource-mandatory", "resource-namespaces-only", "resource-remediate"} <= reported
    assert ("resource-advisory" in reported) == (levels is None or "all" in levels)


def _nested(levels: int) -> struct_pb2.Struct:
    """A Struct whose one field nests ``levels`` Values deep, a list and a number at the bottom."""
    value: Any = [1.5, "leaf", None, True]
    for index in range(levels - 2):
        value = {f"k{index}": value}
    struct = struct_pb2.Struct()
    struct.update({"top": value})
    return struct


def test_structs_are_decoded_directly_up_to_the_bound_and_by_the_sdk_beyond() -> None:
    handed: list[object] = []

    def printer(message: object, *args: object, **kwargs: object) -> object:
        handed.append(message)
        assert isinstance(message, Message)
        return json_format.MessageToDict(message, *args, **kwargs)  # type: ignore[arg-type]

    decode = sdk_speedups._decoding_structs_directly(printer)
    shallow = _nested(sdk_speedups.FAST_DECODE_DEPTH)
    deep = _nested(sdk_speedups.FAST_DECODE_DEPTH + 1)
    assert servicer_guard.depth_of(shallow) == sdk_speedups.FAST_DECODE_DEPTH
    assert decode(shallow) == json_format.MessageToDict(shallow) and handed == []
    assert decode(deep) == json_format.MessageToDict(deep) and [id(m) for m in handed] == [id(deep)]
    request = analyzer_pb2.AnalyzeRequest(type="t")
    assert decode(request) == {"type": "t"} and id(handed[-1]) == id(request)  # not a Struct
    assert decode(shallow, preserving_proto_field_name=True) and id(handed[-1]) == id(shallow)  # options
    # Beyond the bound the printer decides, below where it is known to give up.
    assert sdk_speedups.FAST_DECODE_DEPTH < servicer_guard.MAX_DECODABLE_DEPTH
