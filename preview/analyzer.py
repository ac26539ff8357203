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
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, Self, cast

import grpc
import jsonschema  # type: ignore[import-untyped]  # no stubs pinned; used for validate() only
from google.protobuf import empty_pb2, json_format, struct_pb2
from pulumi.runtime.proto import analyzer_pb2, analyzer_pb2_grpc

from preview import property_depth
from preview.records import RecordedResource

DEFAULT_PACK_DIR = Path(__file__).resolve().parent.parent / "policies"
RPC_TIMEOUT_S = 60.0
START_TIMEOUT_S = 60.0

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
            raise AnalyzerError(
                f"validating policy config: {pack_name}  {policy.name}: {exc.message}"
            ) from exc
    return {p.name: PolicyConfig(levels[p.name], props[p.name]) for p in policies}


# --- wire conversion ---------------------------------------------------------------------------


def _struct(props: Mapping[str, Any]) -> struct_pb2.Struct:
    message = struct_pb2.Struct()
    json_format.ParseDict(dict(props), message)
    return message


def _options(record: RecordedResource) -> analyzer_pb2.AnalyzerResourceOptions:
    return analyzer_pb2.AnalyzerResourceOptions(parent=record.parent)


def _provider(
    record: RecordedResource,
    by_urn: Mapping[str, RecordedResource],
    built: dict[str, analyzer_pb2.AnalyzerProviderResource] | None = None,
) -> analyzer_pb2.AnalyzerProviderResource | None:
    """The provider resource of a registration (``<provider urn>::<id>``), if it was recorded.

    ``built`` keeps each provider's message once converted: every resource of a stack names one of
    a few providers, and converting its inputs per resource was most of the client's own work."""
    if not record.provider:
        return None
    urn = record.provider.rsplit("::", 1)[0]
    if built is not None and urn in built:
        return built[urn]
    provider = by_urn.get(urn)
    if provider is None:
        return None
    message = analyzer_pb2.AnalyzerProviderResource(
        type=provider.type, urn=provider.urn, name=provider.name, properties=_struct(provider.inputs)
    )
    if built is not None:
        built[urn] = message
    return message


def _stack_resource(
    record: RecordedResource,
    by_urn: Mapping[str, RecordedResource],
    providers: dict[str, analyzer_pb2.AnalyzerProviderResource] | None = None,
) -> analyzer_pb2.AnalyzerResource:
    resource = analyzer_pb2.AnalyzerResource(
        type=record.type,
        urn=record.urn,
        name=record.name,
        properties=_struct(record.outputs),
        options=_options(record),
        parent=record.parent,
        dependencies=list(record.dependencies),
    )
    provider = _provider(record, by_urn, providers)
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
        levels = max(property_depth.depth(record.inputs), property_depth.depth(record.outputs))
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
    ) -> None:
        self.pack_dir = Path(pack_dir)
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
            os.environ,
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
                timeout=RPC_TIMEOUT_S,
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
                timeout=RPC_TIMEOUT_S,
            )
        except grpc.RpcError as exc:
            code, details = _rpc_status(exc)
            if code != grpc.StatusCode.UNIMPLEMENTED:
                raise self._error(f"ConfigureStack failed: {details}") from exc
        self.info = self._stub.GetAnalyzerInfo(empty_pb2.Empty(), timeout=RPC_TIMEOUT_S)

    def _read_port(self) -> int:
        assert self._proc is not None and self._proc.stdout is not None
        stdout = self._proc.stdout
        result: list[bytes] = []

        def read_first_line() -> None:
            result.append(stdout.readline())

        reader = threading.Thread(target=read_first_line, daemon=True)
        reader.start()
        reader.join(START_TIMEOUT_S)
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
            if self._proc.poll() is None:
                self._proc.terminate()  # the pack catches only KeyboardInterrupt; SIGTERM ends it
                try:
                    self._proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    self._proc.kill()
                    self._proc.wait()
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
                    config_schema=json_format.MessageToDict(p.configSchema.properties),
                    required=tuple(p.configSchema.required),
                )
            )
        return tuple(infos)

    def initial_config(self) -> dict[str, PolicyConfig]:
        if self.info is None:
            return {}
        return {
            name: PolicyConfig(
                _FROM_PROTO.get(cfg.enforcementLevel, "advisory"), json_format.MessageToDict(cfg.properties)
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
            self._call("Configure", request)
        return config

    def _call(self, method: str, request: Any) -> Any:
        try:
            return getattr(self.stub, method)(request, timeout=RPC_TIMEOUT_S)
        except grpc.RpcError as exc:
            code, details = _rpc_status(exc)
            raise self._error(f"{method} failed: {code.name if code else '?'}: {details}") from exc

    def analyze(self, resources: Sequence[RecordedResource]) -> list[Diagnostic]:
        """``Remediate`` + ``Analyze`` per registration (inputs), then one ``AnalyzeStack``."""
        found = _too_deep(resources)
        unsent = {d.urn for d in found}
        resources = [r for r in resources if r.urn not in unsent]
        by_urn = {r.urn: r for r in resources}
        providers: dict[str, analyzer_pb2.AnalyzerProviderResource] = {}
        for record in resources:
            request = analyzer_pb2.AnalyzeRequest(
                type=record.type,
                urn=record.urn,
                name=record.name,
                properties=_struct(record.inputs),
                options=_options(record),
            )
            provider = _provider(record, by_urn, providers)
            if provider is not None:
                request.provider.CopyFrom(provider)
            remediated = self._call("Remediate", request)
            for remediation in remediated.remediations:
                if remediation.HasField("properties"):  # the engine analyses the remediated inputs
                    request.properties.CopyFrom(remediation.properties)
            response = self._call("Analyze", request)
            found.extend(_diagnostics(response, "analyze", by_urn, default_urn=record.urn))
        stack_request = analyzer_pb2.AnalyzeStackRequest(
            resources=[_stack_resource(r, by_urn, providers) for r in resources]
        )
        found.extend(_diagnostics(self._call("AnalyzeStack", stack_request), "analyze-stack", by_urn))
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
