"""Run a CrossGuard policy pack the way ``pulumi preview --policy-pack`` does: as its own process,
over the engine's analyzer gRPC protocol.

Why a separate process and the real protocol (pulumi.md §2.4, §2.6 b/c): that is the only way the
pack runs under the CLI, so the offline preview exercises exactly what users run — the
``PolicyPack`` server, its config handling (``Configure`` replaces the stored config; a policy
without an ``enforcementLevel`` silently drops to ADVISORY, §2.7), the SDK's unknown/secret
decoding and its "can't run policy during preview" advisories.

Call order (the engine's ``NewPolicyAnalyzer`` / ``installAndLoadPolicyPlugins``):
launch ``python -u -m pulumi.policy 127.0.0.1:0 .`` with cwd = the pack and the engine's
``PULUMI_*`` environment, read the port from the first stdout line, ``Handshake`` (the Python SDK
answers UNIMPLEMENTED, which the engine tolerates), ``ConfigureStack``, ``GetAnalyzerInfo``,
reconcile the policy config like ``ReconcilePolicyPackConfig`` and ``Configure`` (a level for
every policy), then ``Remediate`` + ``Analyze`` per registration (inputs) and one ``AnalyzeStack``
(planned outputs, parents, dependencies, property dependencies), and terminate the process.

Records are :class:`preview.records.RecordedResource`: property maps already in wire JSON form
(unknown sentinels, secret wrappers), so they become protobuf ``Struct``s directly.
"""

from __future__ import annotations

import errno
import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, Self, cast

import grpc
import jsonschema  # type: ignore[import-untyped]  # no stubs pinned; used for validate() only
from google.protobuf import empty_pb2, json_format, struct_pb2
from gpu_batch_policy.primitives.struct_dict import struct_to_dict
from pulumi.runtime.proto import analyzer_pb2, analyzer_pb2_grpc

from preview import property_depth
from preview.engine_grpc import pack_environment
from preview.process_figures import process_cpu_s, process_status_kib
from preview.records import RecordedResource

DEFAULT_PACK_DIR = Path(__file__).resolve().parent.parent / "policies"
# No fixed deadline.  The engine sets none on analyzer calls: pulumi/pulumi
# sdk/go/common/resource/plugin/analyzer_plugin.go, ``(*analyzer).Analyze`` and ``AnalyzeStack``
# call the client with ``a.ctx.Request()``, a context that is cancelled only when the whole
# operation is, never by a timer.  So a slow or busy machine makes a preview slow, never wrong.
# What stays is a hang guard where a hang is certainly a bug: a pack that answers no call within
# far more time than the call's work can take.  It scales with the stack: the pack spends about
# 2 ms per resource in AnalyzeStack (1,000 teams, benchmarks/scale.py), the guard half a second
# per resource, over a floor that covers starting the pack on a loaded machine.
HANG_GUARD_FLOOR_S = 600.0
HANG_GUARD_PER_RESOURCE_S = 0.5
# Starting the pack (its port, Handshake, ConfigureStack, GetAnalyzerInfo) does not grow with the
# stack: one fixed guard, far beyond the seconds it takes on a loaded machine.
START_GUARD_S = 600.0

Level = Literal["advisory", "mandatory", "remediate", "disabled"]
LEVELS: tuple[Level, ...] = ("advisory", "mandatory", "remediate", "disabled")
_TO_PROTO: dict[Level, int] = {
    "advisory": analyzer_pb2.ADVISORY,
    "mandatory": analyzer_pb2.MANDATORY,
    "remediate": analyzer_pb2.REMEDIATE,
    "disabled": analyzer_pb2.DISABLED,
}
_FROM_PROTO: dict[int, Level] = {v: k for k, v in _TO_PROTO.items()}
# Prefix of the diagnostic the SDK servicer emits when a validator raised UnknownValueError.
_CANNOT_RUN_PREFIX = "can't run policy "


# grpc ships no type hints for these two entry points; this is their contract.
_insecure_channel: Callable[..., grpc.Channel] = grpc.insecure_channel
# The engine, like the SDK's own servers, accepts messages up to 400 MiB, not gRPC's 4 MiB default
# (pulumi_policy/policy.py and pulumi/runtime/_grpc_settings.py ``_MAX_RPC_MESSAGE_SIZE``): a
# ClusterQueue with 3,000 resource groups legitimately yields a response of more than 4 MiB.
MAX_RPC_MESSAGE_SIZE = 400 * 1024 * 1024
_CHANNEL_OPTIONS = [
    ("grpc.max_receive_message_length", MAX_RPC_MESSAGE_SIZE),
    ("grpc.max_send_message_length", MAX_RPC_MESSAGE_SIZE),
]


def _rpc_status(exc: grpc.RpcError) -> tuple[grpc.StatusCode | None, str]:
    """Status code and details of a failed call (client errors also implement ``grpc.Call``)."""
    call = cast(Any, exc)
    code = call.code() if hasattr(call, "code") else None
    details = call.details() if hasattr(call, "details") else str(exc)
    return code, str(details)


class AnalyzerError(RuntimeError):
    """The pack could not be started, configured or called (with the pack's stderr when known)."""


@dataclass(frozen=True)
class PolicyInfo:
    name: str
    description: str
    level: Level
    policy_type: Literal["resource", "stack", "unknown"]
    config_schema: dict[str, Any]
    required: tuple[str, ...] = ()


@dataclass(frozen=True)
class PolicyConfig:
    """What ``Configure`` sends for one policy."""

    level: Level
    properties: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Diagnostic:
    """One policy finding, typed.

    ``message`` is the rule's own message (the SDK prefixes the policy description and a newline;
    that prefix is removed here).  ``urn`` is filled for ``Analyze`` findings from the analysed
    resource (the SDK leaves it empty, pulumi.md §2.7); a stack-level finding may have none.
    ``cannot_check`` marks the SDK's advisory for a rule that met unknown values in preview.
    """

    policy_name: str
    policy_pack: str
    level: Level
    message: str
    description: str
    urn: str
    resource_type: str = ""
    resource_name: str = ""
    stage: Literal["analyze", "analyze-stack"] = "analyze"
    cannot_check: bool = False

    @property
    def mandatory(self) -> bool:
        return self.level in ("mandatory", "remediate")


@dataclass(frozen=True)
class AnalysisResult:
    pack_name: str
    policies: tuple[PolicyInfo, ...]
    config: dict[str, PolicyConfig]
    diagnostics: tuple[Diagnostic, ...]

    @property
    def mandatory(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.mandatory]

    @property
    def passed(self) -> bool:
        return not self.mandatory


# --- policy config (the engine's ReconcilePolicyPackConfig) ------------------------------------


def load_policy_config_file(path: Path) -> dict[str, Any]:
    """A ``--policy-pack-config`` file: JSON object of ``all``/policy name → level or object."""
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise AnalyzerError(f"cannot read policy config {path}: {exc}") from exc
    if not isinstance(data, dict):
        raise AnalyzerError(f"policy config {path} must be a JSON object")
    return data


def _parse_entry(name: str, value: Any) -> tuple[Level | None, dict[str, Any]]:
    if isinstance(value, str):
        if value not in LEVELS:
            raise AnalyzerError(f"policy config {name!r}: unknown enforcement level {value!r}")
        return value, {}
    if isinstance(value, Mapping):
        props = dict(value)
        level = props.pop("enforcementLevel", None)
        if level is not None and level not in LEVELS:
            raise AnalyzerError(f"policy config {name!r}: unknown enforcement level {level!r}")
        return level, props
    raise AnalyzerError(f"policy config {name!r}: expected a level string or an object, got {value!r}")


def reconcile_config(
    policies: Sequence[PolicyInfo],
    file_config: Mapping[str, Any] | None = None,
    initial_config: Mapping[str, PolicyConfig] | None = None,
    pack_name: str = "",
) -> dict[str, PolicyConfig]:
    """Layers, later ones winning: policy level + schema defaults, the pack's initialConfig, the
    file (its ``all`` entry first).  Then every policy's properties are validated against its
    schema (the engine uses gojsonschema; here jsonschema).  Stricter than the engine on one
    point: a file entry naming no policy of the pack is an error (a typo would otherwise be
    silently ignored)."""
    by_name = {p.name: p for p in policies}
    levels: dict[str, Level] = {p.name: p.level for p in policies}
    props: dict[str, dict[str, Any]] = {
        p.name: {
            k: v["default"] for k, v in p.config_schema.items() if isinstance(v, Mapping) and "default" in v
        }
        for p in policies
    }
    for name, cfg in (initial_config or {}).items():
        targets = list(by_name) if name == "all" else [name]
        for target in targets:
            if target in by_name:
                levels[target] = cfg.level
                props[target].update(cfg.properties)
    entries = dict(file_config or {})
    if "all" in entries:
        level, extra = _parse_entry("all", entries.pop("all"))
        if extra:
            raise AnalyzerError("policy config 'all' may only set an enforcement level")
        if level is not None:
            levels = dict.fromkeys(levels, level)
    for name, value in entries.items():
        if name not in by_name:
            raise AnalyzerError(f"policy config names {name!r}, which is not a policy of pack {pack_name!r}")
        level, extra = _parse_entry(name, value)
        if level is not None:
            levels[name] = level
        props[name].update(extra)
    for policy in policies:
        schema = {"type": "object", "properties": policy.config_schema, "required": list(policy.required)}
        try:
            jsonschema.validate(props[policy.name], schema)
        except jsonschema.ValidationError as exc:
            at = "".join(f".{key}" for key in exc.absolute_path)  # the key path, as stacks/errors.py names it
            raise AnalyzerError(
                f"validating policy config: {pack_name}  {policy.name}{at}: {exc.message}"
            ) from exc
    return {p.name: PolicyConfig(levels[p.name], props[p.name]) for p in policies}


# --- wire conversion ---------------------------------------------------------------------------


def _struct(props: Mapping[str, Any]) -> struct_pb2.Struct:
    message = struct_pb2.Struct()
    json_format.ParseDict(dict(props), message)
    return message


def _wire_struct(wire: bytes, props: Mapping[str, Any]) -> struct_pb2.Struct:
    """The recorded wire ``Struct`` when there is one, else ``props`` converted."""
    return struct_pb2.Struct.FromString(wire) if wire else _struct(props)


def _options(record: RecordedResource) -> analyzer_pb2.AnalyzerResourceOptions:
    return analyzer_pb2.AnalyzerResourceOptions(parent=record.parent)


class ProviderResolver:
    """The provider resource of each registration (``<provider urn>::<id>``), when it was recorded.

    Every resource of a stack names one of a few providers, so each provider's message is
    converted once.  ``by_urn`` may grow while the resolver is in use (the streaming session
    adds each registration as it arrives; a provider registers before the resources using it).
    """

    def __init__(self, by_urn: Mapping[str, RecordedResource]) -> None:
        self._by_urn = by_urn
        self._built: dict[str, analyzer_pb2.AnalyzerProviderResource] = {}

    def provider(self, record: RecordedResource) -> analyzer_pb2.AnalyzerProviderResource | None:
        if not record.provider:
            return None
        urn = record.provider.rsplit("::", 1)[0]
        message = self._built.get(urn)
        if message is not None:
            return message
        provider = self._by_urn.get(urn)
        if provider is None:
            return None
        message = analyzer_pb2.AnalyzerProviderResource(
            type=provider.type,
            urn=provider.urn,
            name=provider.name,
            properties=_wire_struct(provider.wire_inputs, provider.inputs),
        )
        self._built[urn] = message
        return message


def _stack_resource(record: RecordedResource, resolver: ProviderResolver) -> analyzer_pb2.AnalyzerResource:
    resource = analyzer_pb2.AnalyzerResource(
        type=record.type,
        urn=record.urn,
        name=record.name,
        properties=_wire_struct(record.wire_outputs, record.outputs),
        options=_options(record),
        parent=record.parent,
        dependencies=list(record.dependencies),
    )
    provider = resolver.provider(record)
    if provider is not None:
        resource.provider.CopyFrom(provider)
    for prop, urns in record.property_dependencies.items():
        if urns:  # the engine leaves out properties whose dependency list is empty
            resource.propertyDependencies[prop].urns.extend(urns)
    return resource


def _diagnostics(
    response: analyzer_pb2.AnalyzeResponse,
    stage: Literal["analyze", "analyze-stack"],
    by_urn: Mapping[str, RecordedResource],
    default_urn: str = "",
) -> list[Diagnostic]:
    found: list[Diagnostic] = []
    for diag in response.diagnostics:
        description = diag.description
        message = diag.message
        cannot_check = message.startswith(_CANNOT_RUN_PREFIX)
        if description and message.startswith(description):
            message = message[len(description) :].lstrip("\n")
        urn = diag.urn or default_urn
        record = by_urn.get(urn)
        found.append(
            Diagnostic(
                policy_name=diag.policyName,
                policy_pack=diag.policyPackName,
                level=_FROM_PROTO.get(diag.enforcementLevel, "advisory"),
                message=message,
                description=description,
                urn=urn,
                resource_type=record.type if record else "",
                resource_name=record.name if record else "",
                stage=stage,
                cannot_check=cannot_check,
            )
        )
    return found


def _too_deep(resources: Sequence[RecordedResource]) -> list[Diagnostic]:
    """One advisory finding per resource too deep to send (see preview/property_depth.py)."""
    found = []
    for record in resources:
        levels = property_depth.depth(record.inputs)
        if record.outputs is not record.inputs:  # the harness's echo shares one object (harness.py)
            levels = max(levels, property_depth.depth(record.outputs))
        if levels > property_depth.MAX_SEND_DEPTH:
            found.append(
                Diagnostic(
                    policy_name=property_depth.TOO_DEEP_POLICY,
                    policy_pack="gpu-batch",
                    level="advisory",
                    message=property_depth.too_deep_message(f"{record.type} '{record.name}'", levels),
                    description="The policy pack could not read a resource",
                    urn=record.urn,
                    resource_type=record.type,
                    resource_name=record.name,
                )
            )
    return found


# --- the pack process --------------------------------------------------------------------------


STOP_TIMEOUT_S = 10.0


def stop_process(proc: subprocess.Popen[bytes], *, ends_by_itself: bool = False) -> None:
    """Stop a child process and reap it: SIGTERM, then SIGKILL, each given ``STOP_TIMEOUT_S``.
    ``ends_by_itself``: first wait that long for it to exit on its own (its input has ended)."""
    steps: list[Callable[[], None] | None] = [None] if ends_by_itself else []
    for step in [*steps, proc.terminate, proc.kill]:
        if step is not None:
            step()
        try:
            proc.wait(timeout=STOP_TIMEOUT_S)
            return
        except subprocess.TimeoutExpired:
            continue
    proc.wait()


class PolicyPackProcess:
    """One running pack (a context manager): start once, then configure/analyse as often as needed."""

    def __init__(
        self,
        pack_dir: Path = DEFAULT_PACK_DIR,
        *,
        stack: str = "dev",
        project: str = "gpu-batch",
        organization: str = "organization",
        dry_run: bool = True,
        stack_config: Mapping[str, str] | None = None,
        python: str = sys.executable,
        hang_guard_floor_s: float = HANG_GUARD_FLOOR_S,
        hang_guard_per_resource_s: float = HANG_GUARD_PER_RESOURCE_S,
    ) -> None:
        self.pack_dir = Path(pack_dir)
        self.hang_guard_floor_s = hang_guard_floor_s
        self.hang_guard_per_resource_s = hang_guard_per_resource_s
        self.stack = stack
        self.project = project
        self.organization = organization
        self.dry_run = dry_run
        self.stack_config = dict(stack_config or {})
        self.python = python
        self._proc: subprocess.Popen[bytes] | None = None
        self._channel: grpc.Channel | None = None
        self._stub: analyzer_pb2_grpc.AnalyzerStub | None = None
        # Lives as long as this object (closed in close()); a file, not a pipe, so it never blocks.
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115
        self._stdout_tail: list[bytes] = []
        self.info: analyzer_pb2.AnalyzerInfo | None = None

    # lifecycle
    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def start(self) -> None:
        try:
            self._start()
        except BaseException:
            self.close()  # never leave the pack process behind
            raise

    def _start(self) -> None:
        env = dict(
            pack_environment(os.environ),
            PULUMI_CONFIG=json.dumps(self.stack_config),
            PULUMI_PROJECT=self.project,
            PULUMI_STACK=self.stack,
            PULUMI_DRY_RUN="true" if self.dry_run else "false",
            PULUMI_ORGANIZATION=self.organization,
        )
        try:
            self._proc = subprocess.Popen(
                [self.python, "-u", "-m", "pulumi.policy", "127.0.0.1:0", "."],
                cwd=self.pack_dir,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=self._stderr,
            )
        except OSError as exc:
            if exc.errno != errno.E2BIG:
                raise
            size = len(env["PULUMI_CONFIG"])
            raise AnalyzerError(
                f"cannot start the policy pack: the stack config, which the engine passes to the pack "
                f"as the PULUMI_CONFIG environment variable, is {size:,} bytes, more than the system "
                "allows in one environment variable (128 KiB on Linux); `pulumi preview --policy-pack` "
                "starts the pack the same way and fails alike. Keep the stack config under that size."
            ) from exc
        port = self._read_port()
        self._channel = _insecure_channel(f"127.0.0.1:{port}", options=_CHANNEL_OPTIONS)
        self._stub = analyzer_pb2_grpc.AnalyzerStub(self._channel)
        try:
            self._stub.Handshake(
                analyzer_pb2.AnalyzerHandshakeRequest(
                    engine_address="", root_directory=str(self.pack_dir), program_directory=str(self.pack_dir)
                ),
                timeout=START_GUARD_S,
            )
        except grpc.RpcError as exc:
            code, details = _rpc_status(exc)
            if code != grpc.StatusCode.UNIMPLEMENTED:  # the Python SDK does not implement it
                raise self._error(f"Handshake failed: {details}") from exc
        try:
            self._stub.ConfigureStack(
                analyzer_pb2.AnalyzerStackConfigureRequest(
                    stack=self.stack,
                    project=self.project,
                    organization=self.organization,
                    dry_run=self.dry_run,
                    config=self.stack_config,
                ),
                timeout=START_GUARD_S,
            )
        except grpc.RpcError as exc:
            code, details = _rpc_status(exc)
            if code != grpc.StatusCode.UNIMPLEMENTED:
                raise self._error(f"ConfigureStack failed: {details}") from exc
        self.info = self._stub.GetAnalyzerInfo(empty_pb2.Empty(), timeout=START_GUARD_S)

    def _read_port(self) -> int:
        assert self._proc is not None and self._proc.stdout is not None
        stdout = self._proc.stdout
        result: list[bytes] = []

        def read_first_line() -> None:
            result.append(stdout.readline())

        reader = threading.Thread(target=read_first_line, daemon=True)
        reader.start()
        reader.join(START_GUARD_S)
        line = result[0].strip() if result else b""
        if not line.isdigit():
            error = self._error(f"the policy pack did not print its port (got {line!r})")
            self.close()
            raise error
        # Keep draining stdout (the pack's prints) so the pipe never blocks the server.
        threading.Thread(target=self._drain, args=(stdout,), daemon=True).start()
        return int(line)

    def _drain(self, stream: Any) -> None:
        for chunk in iter(stream.readline, b""):
            self._stdout_tail = [*self._stdout_tail[-50:], chunk]

    def peak_kib(self) -> int | None:
        """The pack process's own peak resident set (``VmHWM``, KiB), while it runs; None where
        ``/proc`` is not available."""
        return self._status_kib("VmHWM:")

    def cpu_s(self) -> float | None:
        """The pack process's own CPU seconds so far; None where ``/proc`` is not available."""
        return None if self._proc is None else process_cpu_s(self._proc.pid)

    def resident_kib(self) -> int | None:
        """The pack process's resident set now (``VmRSS``, KiB); None where ``/proc`` is not available."""
        return self._status_kib("VmRSS:")

    def _status_kib(self, field: str) -> int | None:
        return None if self._proc is None else process_status_kib(self._proc.pid, field)

    def stderr_text(self) -> str:
        self._stderr.seek(0)
        return self._stderr.read().decode(errors="replace")

    def _error(self, what: str) -> AnalyzerError:
        stderr = self.stderr_text().strip()
        return AnalyzerError(f"{what}\n--- policy pack stderr ---\n{stderr}" if stderr else what)

    def close(self) -> None:
        if self._channel is not None:
            cast(Any, self._channel).close()  # untyped in grpc
            self._channel = None
        if self._proc is not None:
            stop_process(self._proc)  # the pack catches only KeyboardInterrupt; SIGTERM ends it
            if self._proc.stdout is not None:
                self._proc.stdout.close()
            self._proc = None
        self._stderr.close()

    # protocol
    @property
    def stub(self) -> analyzer_pb2_grpc.AnalyzerStub:
        if self._stub is None:
            raise AnalyzerError("the policy pack is not running")
        return self._stub

    def policies(self) -> tuple[PolicyInfo, ...]:
        if self.info is None:
            raise AnalyzerError("the policy pack is not running")
        infos: list[PolicyInfo] = []
        for p in self.info.policies:
            kind: Literal["resource", "stack", "unknown"] = (
                "resource"
                if p.policy_type == analyzer_pb2.POLICY_TYPE_RESOURCE
                else "stack"
                if p.policy_type == analyzer_pb2.POLICY_TYPE_STACK
                else "unknown"
            )
            infos.append(
                PolicyInfo(
                    name=p.name,
                    description=p.description,
                    level=_FROM_PROTO.get(p.enforcementLevel, "advisory"),
                    policy_type=kind,
                    config_schema=struct_to_dict(p.configSchema.properties),
                    required=tuple(p.configSchema.required),
                )
            )
        return tuple(infos)

    def initial_config(self) -> dict[str, PolicyConfig]:
        if self.info is None:
            return {}
        return {
            name: PolicyConfig(
                _FROM_PROTO.get(cfg.enforcementLevel, "advisory"), struct_to_dict(cfg.properties)
            )
            for name, cfg in self.info.initialConfig.items()
        }

    def configure(self, file_config: Mapping[str, Any] | None = None) -> dict[str, PolicyConfig]:
        """Reconcile like the engine and send one ``Configure`` with a level for every policy."""
        name = self.info.name if self.info else ""
        config = reconcile_config(self.policies(), file_config, self.initial_config(), name)
        if config:  # the engine skips Configure when the reconciled map is empty
            request = analyzer_pb2.ConfigureAnalyzerRequest()
            for policy, cfg in config.items():
                entry = request.policyConfig[policy]
                entry.enforcementLevel = _TO_PROTO[cfg.level]  # type: ignore[assignment]
                entry.properties.CopyFrom(_struct(cfg.properties))
            self.call("Configure", request)
        return config

    def hang_guard_s(self, resources: int = 0) -> float:
        """Seconds after which a call about ``resources`` resources is a hang, not a slow machine."""
        return self.hang_guard_floor_s + self.hang_guard_per_resource_s * resources

    def call(self, method: str, request: Any, *, resources: int = 1) -> Any:
        """One analyzer RPC; a failure becomes an :class:`AnalyzerError` with the pack's stderr."""
        guard = self.hang_guard_s(resources)
        try:
            return getattr(self.stub, method)(request, timeout=guard)
        except grpc.RpcError as exc:
            code, details = _rpc_status(exc)
            if code == grpc.StatusCode.DEADLINE_EXCEEDED:
                raise self._error(
                    f"{method} hung: no answer about {resources:,} resource(s) in {guard:,.0f} s, the hang "
                    f"guard ({self.hang_guard_floor_s:,.0f} s + {self.hang_guard_per_resource_s} s per "
                    "resource; the engine itself waits for ever)"
                ) from exc
            raise self._error(f"{method} failed: {code.name if code else '?'}: {details}") from exc

    def analyze_request(
        self, record: RecordedResource, resolver: ProviderResolver
    ) -> analyzer_pb2.AnalyzeRequest:
        """What ``Remediate`` and ``Analyze`` receive for one registration: its inputs."""
        request = analyzer_pb2.AnalyzeRequest(
            type=record.type,
            urn=record.urn,
            name=record.name,
            properties=_wire_struct(record.wire_inputs, record.inputs),
            options=_options(record),
        )
        provider = resolver.provider(record)
        if provider is not None:
            request.provider.CopyFrom(provider)
        return request

    def analyze_resource(
        self, record: RecordedResource, resolver: ProviderResolver
    ) -> analyzer_pb2.AnalyzeResponse:
        """The engine's two passes for one registration: ``Remediate``, then ``Analyze``.

        Remediate is sent for every registration whatever the configured levels, as the engine
        does (pulumi/pulumi ``pkg/resource/deploy/step_generator.go`` ``generateSteps``: ``for _,
        remediate := range []bool{true, false}`` over every analyzer, no level check); the pack
        answers it cheaply when no policy is at remediate level (``sdk_speedups``)."""
        request = self.analyze_request(record, resolver)
        remediated = self.call("Remediate", request)
        for remediation in remediated.remediations:
            if remediation.HasField("properties"):  # the engine analyses the remediated inputs
                request.properties.CopyFrom(remediation.properties)
        return cast(analyzer_pb2.AnalyzeResponse, self.call("Analyze", request))

    def analyze_stack(
        self, resources: Sequence[RecordedResource], resolver: ProviderResolver
    ) -> analyzer_pb2.AnalyzeResponse:
        """One ``AnalyzeStack`` with the planned outputs, parents and dependencies of every resource."""
        request = analyzer_pb2.AnalyzeStackRequest(
            resources=[_stack_resource(r, resolver) for r in resources]
        )
        return cast(
            analyzer_pb2.AnalyzeResponse, self.call("AnalyzeStack", request, resources=len(request.resources))
        )

    def analyze(self, resources: Sequence[RecordedResource]) -> list[Diagnostic]:
        """``Remediate`` + ``Analyze`` per registration (inputs), then one ``AnalyzeStack``."""
        found = _too_deep(resources)
        unsent = {d.urn for d in found}
        resources = [r for r in resources if r.urn not in unsent]
        by_urn = {r.urn: r for r in resources}
        resolver = ProviderResolver(by_urn)
        for record in resources:
            found.extend(_diagnostics(self.analyze_resource(record, resolver), "analyze", by_urn, record.urn))
        found.extend(_diagnostics(self.analyze_stack(resources, resolver), "analyze-stack", by_urn))
        return found

    def run(
        self, resources: Sequence[RecordedResource], file_config: Mapping[str, Any] | None = None
    ) -> AnalysisResult:
        config = self.configure(file_config)
        diagnostics = self.analyze(resources)
        return AnalysisResult(
            pack_name=self.info.name if self.info else "",
            policies=self.policies(),
            config=config,
            diagnostics=tuple(diagnostics),
        )


# --- the streaming session: the engine's timeline -----------------------------------------------

# While the program and the client thread share the GIL, a client thread woken by a gRPC answer
# waits up to the switch interval (5 ms by default) for the program thread to let it run; with
# two calls per registration that idles the pack for seconds.  A short interval hands it back
# quickly (CPython docs, ``sys.setswitchinterval``).
STREAMING_SWITCH_INTERVAL_S = 0.0002

_Item = RecordedResource | tuple[RecordedResource, ...] | None


class AnalysisSession:
    """One pack run on the engine's timeline: ``start`` -> ``analyze(record)`` per registration as it
    is recorded -> ``analyze_stack(resources)`` -> ``result()`` -> ``close``.

    ``pulumi preview --policy-pack`` starts the analyzers before the program runs, sends
    ``Remediate``/``Analyze`` from the step generator as each ``RegisterResource`` arrives, and
    ``AnalyzeStack`` once the program has finished (pulumi/pulumi ``pkg/resource/deploy``:
    ``step_generator.go`` ``generateSteps``, ``deployment_executor.go`` after the source
    iterator is done).  The calls go out from one client thread in exactly that order, so the
    pack process works on the other core while the program runs and while the caller writes
    its outputs; the answers are those of :meth:`PolicyPackProcess.run` on the same records.
    """

    def __init__(self, pack: PolicyPackProcess, file_config: Mapping[str, Any] | None = None) -> None:
        self._pack = pack
        self._file_config = dict(file_config) if file_config is not None else None
        self._queue: queue.SimpleQueue[_Item] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._work, name="policy-pack-client", daemon=True)
        self._by_urn: dict[str, RecordedResource] = {}
        self._responses: list[
            tuple[analyzer_pb2.AnalyzeResponse, Literal["analyze", "analyze-stack"], str]
        ] = []
        # Registrations too deeply nested to send, each with its advisory finding.
        self._unsent: list[Diagnostic] = []
        self._config: dict[str, PolicyConfig] = {}
        self._error: BaseException | None = None
        self._done = threading.Event()
        self._cancelled = threading.Event()
        self._switch_interval = sys.getswitchinterval()
        self._started = False
        # Monotonic seconds: AnalyzeStack queued (the program has finished), sent (every Analyze
        # before it answered), answered.
        self._stack_times: list[float] = []

    def start(self) -> Self:
        """Launch and configure the pack in the background; returns at once."""
        self._started = True
        sys.setswitchinterval(min(self._switch_interval, STREAMING_SWITCH_INTERVAL_S))
        self._thread.start()
        return self

    def analyze(self, record: RecordedResource) -> None:
        """Queue ``Remediate`` + ``Analyze`` for one registration (never blocks the program)."""
        self._queue.put(record)

    def analyze_stack(self, resources: Sequence[RecordedResource]) -> None:
        """Queue the one ``AnalyzeStack``; the caller may write its outputs while it runs."""
        self._stack_times = [time.monotonic()]
        self._queue.put(tuple(resources))

    def result(self) -> AnalysisResult:
        """Wait for every queued call; raise the pack's error if one failed."""
        self._done.wait()
        if self._error is not None:
            raise self._error
        by_urn = self._by_urn
        diagnostics = [*self._unsent]
        diagnostics += [d for r, stage, urn in self._responses for d in _diagnostics(r, stage, by_urn, urn)]
        return AnalysisResult(
            pack_name=self._pack.info.name if self._pack.info else "",
            policies=self._pack.policies(),
            config=self._config,
            diagnostics=tuple(diagnostics),
        )

    def pack_peak_kib(self) -> int | None:
        """The pack process's own peak resident set so far (KiB), see :meth:`PolicyPackProcess.peak_kib`."""
        return self._pack.peak_kib()

    def pack_cpu_s(self) -> float | None:
        """The pack process's own CPU seconds so far, see :meth:`PolicyPackProcess.cpu_s`."""
        return self._pack.cpu_s()

    def stack_seconds(self) -> tuple[float, float] | None:
        """Where the run's end went, once :meth:`result` has answered: the seconds from the
        program's end (``analyze_stack`` queued) to ``AnalyzeStack`` going out -- the ``Analyze``
        calls still queued then, one at a time as the engine sends them -- and ``AnalyzeStack``'s
        own seconds.  None before that, or when the call never went out."""
        times = self._stack_times
        if len(times) != 3:
            return None
        return times[1] - times[0], times[2] - times[1]

    def close(self) -> None:
        """Stop the client thread and the pack process (also after an error or an unfinished run)."""
        if self._started:
            if not self._done.is_set():
                self._cancelled.set()  # an unfinished run (the program failed): skip what is queued
            self._queue.put(None)
            self._done.wait()
            sys.setswitchinterval(self._switch_interval)
            self._started = False
        self._pack.close()

    def _work(self) -> None:
        try:
            self._pack.start()
            self._config = self._pack.configure(self._file_config)
            resolver = ProviderResolver(self._by_urn)
            while (item := self._queue.get()) is not None and not self._cancelled.is_set():
                if isinstance(item, RecordedResource):
                    self._by_urn[item.urn] = item
                    too_deep = _too_deep([item])
                    if too_deep:  # never sent: the SDK cannot decode it (issue 12)
                        self._unsent.extend(too_deep)
                        continue
                    self._responses.append((self._pack.analyze_resource(item, resolver), "analyze", item.urn))
                else:
                    # A streamed record was measured as it came; only the others are measured now.
                    unmeasured = [r for r in item if self._by_urn.get(r.urn) is not r]
                    unsent = {d.urn for d in self._unsent} | {d.urn for d in _too_deep(unmeasured)}
                    sendable = [r for r in item if r.urn not in unsent]
                    self._stack_times.append(time.monotonic())
                    self._responses.append(
                        (self._pack.analyze_stack(sendable, resolver), "analyze-stack", "")
                    )
                    self._stack_times.append(time.monotonic())
                    break
        except BaseException as exc:  # handed to the caller by result()
            self._error = exc
        finally:
            self._done.set()


def run_policy_pack(
    resources: Sequence[RecordedResource],
    *,
    pack_dir: Path = DEFAULT_PACK_DIR,
    config_file: Path | None = None,
    config: Mapping[str, Any] | None = None,
    stack: str = "dev",
    project: str = "gpu-batch",
    organization: str = "organization",
    dry_run: bool = True,
    stack_config: Mapping[str, str] | None = None,
) -> AnalysisResult:
    """Start the pack, analyse ``resources`` once, stop it.  ``config`` wins over ``config_file``."""
    file_config = (
        dict(config)
        if config is not None
        else (load_policy_config_file(config_file) if config_file else None)
    )
    with PolicyPackProcess(
        pack_dir,
        stack=stack,
        project=project,
        organization=organization,
        dry_run=dry_run,
        stack_config=stack_config,
    ) as pack:
        return pack.run(resources, file_config)


# --- output for humans -------------------------------------------------------------------------


def in_display_order(diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
    """Findings in a stable order for files and the console (the engine's order follows
    registration order, which varies from run to run): by resource URN, rule, then message."""
    return sorted(diagnostics, key=lambda d: (d.urn, d.policy_name, d.stage, d.message))


def format_diagnostic(diag: Diagnostic, resources: Iterable[RecordedResource] = ()) -> str:
    """``[mandatory] rule-name — <type> '<name>'`` then the message (which carries the fix)."""
    resource_type, resource_name = diag.resource_type, diag.resource_name
    if not resource_type and diag.urn:
        for record in resources:
            if record.urn == diag.urn:
                resource_type, resource_name = record.type, record.name
                break
    where = f"{resource_type} '{resource_name}'" if resource_type else "(stack)"
    tag = "cannot check yet" if diag.cannot_check else diag.level
    body = "\n".join(f"    {line}" for line in diag.message.splitlines())
    return f"[{tag}] {diag.policy_name} — {where}\n{body}"
