"""The Pod Security Standards checks, as the API server's PodSecurity admission runs them.

Each check is a port of one file of kubernetes/pod-security-admission ``policy/check_*.go``
(tag v0.36.2, plus v0.37.0-alpha.2 for the 1.37 sysctls), with the same ID, level and
``MinimumVersion`` steps, so a template is judged exactly as the admission plugin judges its
pods at the namespace's ``enforce-version``.  :data:`CHECKS` is complete: ``UPSTREAM_CHECK_IDS``
lists every check upstream registers (``policy/check_*.go`` ``addCheck``) and a test fails when
one has no port here.

Input is a pod's ``metadata`` and ``spec`` as plain wire-form (camelCase) values.  Where a Go
check dereferences a nil pointer as "unset", we read a missing key the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

Level = Literal["baseline", "restricted"]
Minor = tuple[int, int]
CheckFn = Callable[[Mapping[str, Any], Mapping[str, Any]], str | None]
"""(pod metadata, pod spec) -> None when allowed, else upstream's ForbiddenReason: detail."""


def _map(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def containers(spec: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    """policy/visitor.go ``visitContainers``: init, regular, then ephemeral containers."""
    for key in ("initContainers", "containers", "ephemeralContainers"):
        for c in _list(spec.get(key)):
            yield _map(c)


def _ctx(container: Mapping[str, Any]) -> Mapping[str, Any]:
    return _map(container.get("securityContext"))


def _pod_ctx(spec: Mapping[str, Any]) -> Mapping[str, Any]:
    return _map(spec.get("securityContext"))


def _names(found: list[Mapping[str, Any]]) -> str:
    return ", ".join(f'"{c.get("name")}"' for c in found)


def _windows(spec: Mapping[str, Any]) -> bool:
    return _map(spec.get("os")).get("name") == "windows"


def _user_namespace(spec: Mapping[str, Any]) -> bool:
    """policy/helpers.go ``relaxPolicyForUserNamespacePod``: hostUsers explicitly false."""
    return spec.get("hostUsers") is False


# --- baseline -------------------------------------------------------------------------------


def _host_namespaces(_meta: Mapping[str, Any], spec: Mapping[str, Any]) -> str | None:
    """check_hostNamespaces.go ``hostNamespaces_1_0``."""
    bad = [f"{k}=true" for k in ("hostNetwork", "hostPID", "hostIPC") if spec.get(k) is True]
    return f"host namespaces: {', '.join(bad)}" if bad else None


def _privileged(_meta: Mapping[str, Any], spec: Mapping[str, Any]) -> str | None:
    """check_privileged.go ``privileged_1_0``."""
    bad = [c for c in containers(spec) if _ctx(c).get("privileged") is True]
    return (
        f"privileged: containers {_names(bad)} must not set securityContext.privileged=true" if bad else None
    )


BASELINE_CAPABILITIES = frozenset(
    {"AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD", "NET_BIND_SERVICE"}
    | {"SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT"}
)
"""check_capabilities_baseline.go ``capabilities_allowed_1_0``."""


def _capabilities_baseline(_meta: Mapping[str, Any], spec: Mapping[str, Any]) -> str | None:
    """check_capabilities_baseline.go ``capabilitiesBaseline_1_0``."""
    extra: set[str] = set()
    bad = []
    for c in containers(spec):
        added = {str(a) for a in _list(_map(_ctx(c).get("capabilities")).get("add"))} - BASELINE_CAPABILITIES
        if added:
            bad.append(c)
            extra |= added
    return f"non-default capabilities: containers {_names(bad)} add {sorted(extra)}" if bad else None


def _host_path_volumes(_meta: Mapping[str, Any], spec: Mapping[str, Any]) -> str | None:
    """check_hostPathVolumes.go ``hostPathVolumes_1_0``."""
    bad = [str(_map(v).get("name")) for v in _list(spec.get("volumes")) if "hostPath" in _map(v)]
    return f"hostPath volumes: {', '.join(bad)}" if bad else None


def _host_ports(_meta: Mapping[str, Any], spec: Mapping[str, Any]) -> str | None:
    """check_hostPorts.go ``hostPorts_1_0``: any non-zero hostPort."""
    bad = [
        c
        for c in containers(spec)
        if any(_map(p).get("hostPort") not in (None, 0) for p in _list(c.get("ports")))
    ]
    return f"hostPort: containers {_names(bad)} use hostPorts" if bad else None


_APPARMOR_TYPES = frozenset({"RuntimeDefault", "Localhost"})
_APPARMOR_ANNOTATION = "container.apparmor.security.beta.kubernetes.io/"


def _app_armor(meta: Mapping[str, Any], spec: Mapping[str, Any]) -> str | None:
    """check_appArmorProfile.go ``appArmorProfile_1_0``: profile types and beta annotations."""
    bad: list[str] = []
    for where, ctx in [("pod", _pod_ctx(spec))] + [
        (f'container "{c.get("name")}"', _ctx(c)) for c in containers(spec)
    ]:
        profile = ctx.get("appArmorProfile")
        if isinstance(profile, Mapping) and profile.get("type") not in _APPARMOR_TYPES:
            bad.append(f"{where} {profile.get('type')}")
    for key, value in _map(meta.get("annotations")).items():
        if str(key).startswith(_APPARMOR_ANNOTATION) and not (
            value in ("", "runtime/default") or str(value).startswith("localhost/")
        ):
            bad.append(f"{key}={value}")
    return f"forbidden AppArmor profiles: {', '.join(bad)}" if bad else None


def _se_linux(allowed: frozenset[str]) -> CheckFn:
    def check(_meta: Mapping[str, Any], spec: Mapping[str, Any]) -> str | None:
        """check_seLinuxOptions.go ``seLinuxOptions``: type in the allowed set, no user/role."""
        bad = []
        for where, ctx in [("pod", _pod_ctx(spec))] + [
            (f'container "{c.get("name")}"', _ctx(c)) for c in containers(spec)
        ]:
            opts = ctx.get("seLinuxOptions")
            if isinstance(opts, Mapping) and (
                opts.get("type", "") not in allowed or opts.get("user") or opts.get("role")
            ):
                bad.append(where)
        return (
            f"seLinuxOptions: {', '.join(bad)} set forbidden securityContext.seLinuxOptions" if bad else None
        )

    return check


_SELINUX_1_0 = frozenset({"", "container_t", "container_init_t", "container_kvm_t"})


def _proc_mount(relax_user_namespace: bool) -> CheckFn:
    def check(_meta: Mapping[str, Any], spec: Mapping[str, Any]) -> str | None:
        """check_procMount_baseline.go ``procMount_1_0`` / ``procMount1_35baseline``."""
        if relax_user_namespace and _user_namespace(spec):
            return None
        bad = [c for c in containers(spec) if _ctx(c).get("procMount") not in (None, "Default")]
        return f"procMount: containers {_names(bad)} set a non-Default procMount" if bad else None

    return check


_SECCOMP_TYPES = frozenset({"RuntimeDefault", "Localhost"})


def _seccomp_baseline(_meta: Mapping[str, Any], spec: Mapping[str, Any]) -> str | None:
    """check_seccompProfile_baseline.go ``seccompProfileBaseline_1_19``: if set, a safe type."""
    bad = []
    for where, ctx in [("pod", _pod_ctx(spec))] + [
        (f'container "{c.get("name")}"', _ctx(c)) for c in containers(spec)
    ]:
        profile = ctx.get("seccompProfile")
        if isinstance(profile, Mapping) and profile.get("type") not in _SECCOMP_TYPES:
            bad.append(f"{where} {profile.get('type')}")
    return (
        f"seccompProfile: {', '.join(bad)} must not set that securityContext.seccompProfile.type"
        if bad
        else None
    )


def _seccomp_annotations(meta: Mapping[str, Any], spec: Mapping[str, Any]) -> str | None:
    """check_seccompProfile_baseline.go ``seccompProfileBaseline_1_0`` (before 1.19: annotations)."""
    annotations = _map(meta.get("annotations"))
    keys = ["seccomp.security.alpha.kubernetes.io/pod"] + [
        f"container.seccomp.security.alpha.kubernetes.io/{c.get('name')}" for c in containers(spec)
    ]
    bad = [
        k
        for k in keys
        if k in annotations
        and not (
            annotations[k] in ("runtime/default", "docker/default")
            or str(annotations[k]).startswith("localhost/")
        )
    ]
    return f"seccompProfile: forbidden annotations {', '.join(bad)}" if bad else None


_SYSCTLS_1_0 = frozenset(
    {
        "kernel.shm_rmid_forced",
        "net.ipv4.ip_local_port_range",
        "net.ipv4.tcp_syncookies",
        "net.ipv4.ping_group_range",
        "net.ipv4.ip_unprivileged_port_start",
    }
)
_SYSCTLS_1_27 = _SYSCTLS_1_0 | {"net.ipv4.ip_local_reserved_ports"}
_SYSCTLS_1_29 = _SYSCTLS_1_27 | {
    "net.ipv4.tcp_keepalive_time",
    "net.ipv4.tcp_fin_timeout",
    "net.ipv4.tcp_keepalive_intvl",
    "net.ipv4.tcp_keepalive_probes",
}
_SYSCTLS_1_32 = _SYSCTLS_1_29 | {"net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem"}
# v0.37.0-alpha.2 policy/check_sysctls.go ``sysctlsAllowedV1Dot37``.
_SYSCTLS_1_37 = _SYSCTLS_1_32 | {"net.ipv4.tcp_slow_start_after_idle", "net.ipv4.tcp_notsent_lowat"}


def _sysctls(allowed: frozenset[str]) -> CheckFn:
    def check(_meta: Mapping[str, Any], spec: Mapping[str, Any]) -> str | None:
        """check_sysctls.go ``sysctls``: only the safe set at that version."""
        bad = [
            str(_map(s).get("name"))
            for s in _list(_pod_ctx(spec).get("sysctls"))
            if _map(s).get("name") not in allowed
        ]
        return f"forbidden sysctls: {', '.join(bad)}" if bad else None

    return check


def _windows_host_process(_meta: Mapping[str, Any], spec: Mapping[str, Any]) -> str | None:
    """check_windowsHostProcess.go ``windowsHostProcess_1_0``."""
    ctxs = [_pod_ctx(spec)] + [_ctx(c) for c in containers(spec)]
    bad = any(_map(ctx.get("windowsOptions")).get("hostProcess") is True for ctx in ctxs)
    return "hostProcess: must not set securityContext.windowsOptions.hostProcess=true" if bad else None


def _probe_hosts(_meta: Mapping[str, Any], spec: Mapping[str, Any]) -> str | None:
    """check_hostProbesAndhostLifecycle.go ``hostProbesAndHostLifecycleV1Dot34``."""
    hosts: set[str] = set()
    for c in containers(spec):
        handlers = [_map(c.get(p)) for p in ("livenessProbe", "readinessProbe", "startupProbe")]
        lifecycle = _map(c.get("lifecycle"))
        handlers += [_map(lifecycle.get("postStart")), _map(lifecycle.get("preStop"))]
        for handler in handlers:
            for action in ("httpGet", "tcpSocket"):
                host = _map(handler.get(action)).get("host")
                if host:
                    hosts.add(str(host))
    return f"probe or lifecycle host: {', '.join(sorted(hosts))}" if hosts else None


# --- restricted -----------------------------------------------------------------------------


def _not_windows(check: CheckFn) -> CheckFn:
    """The 1.25 steps of several restricted checks: a pod with ``spec.os.name: windows`` passes."""

    def wrapped(meta: Mapping[str, Any], spec: Mapping[str, Any]) -> str | None:
        return None if _windows(spec) else check(meta, spec)

    return wrapped


def _not_user_namespace(check: CheckFn) -> CheckFn:
    """The 1.35 steps of runAsNonRoot/runAsUser: a pod with ``hostUsers: false`` passes."""

    def wrapped(meta: Mapping[str, Any], spec: Mapping[str, Any]) -> str | None:
        return None if _user_namespace(spec) else check(meta, spec)

    return wrapped


def _allow_privilege_escalation(_meta: Mapping[str, Any], spec: Mapping[str, Any]) -> str | None:
    """check_allowPrivilegeEscalation.go ``allowPrivilegeEscalation_1_8``: must be false."""
    bad = [c for c in containers(spec) if _ctx(c).get("allowPrivilegeEscalation") is not False]
    return (
        f"allowPrivilegeEscalation != false: containers {_names(bad)} must set "
        "securityContext.allowPrivilegeEscalation=false"
        if bad
        else None
    )


def _capabilities_restricted(_meta: Mapping[str, Any], spec: Mapping[str, Any]) -> str | None:
    """check_capabilities_restricted.go ``capabilitiesRestricted_1_22``: drop ALL, add at most
    NET_BIND_SERVICE."""
    missing, adding = [], []
    for c in containers(spec):
        caps = _map(_ctx(c).get("capabilities"))
        if "ALL" not in _list(caps.get("drop")):
            missing.append(c)
        if any(a != "NET_BIND_SERVICE" for a in _list(caps.get("add"))):
            adding.append(c)
    parts = []
    if missing:
        parts.append(f'containers {_names(missing)} must set securityContext.capabilities.drop=["ALL"]')
    if adding:
        parts.append(f"containers {_names(adding)} must add no capability but NET_BIND_SERVICE")
    return f"unrestricted capabilities: {'; '.join(parts)}" if parts else None


_RESTRICTED_VOLUME_SOURCES = frozenset(
    {
        "configMap",
        "csi",
        "downwardAPI",
        "emptyDir",
        "ephemeral",
        "image",
        "persistentVolumeClaim",
        "projected",
        "secret",
    }
)
"""check_restrictedVolumes.go ``restrictedVolumes_1_0``: the only inline sources allowed."""


def _restricted_volumes(_meta: Mapping[str, Any], spec: Mapping[str, Any]) -> str | None:
    bad = []
    for volume in _list(spec.get("volumes")):
        sources = set(_map(volume)) - {"name"}
        if not sources & _RESTRICTED_VOLUME_SOURCES:
            bad.append(f"{_map(volume).get('name')} ({', '.join(sorted(sources)) or 'unknown'})")
    return f"restricted volume types: {', '.join(bad)}" if bad else None


def _run_as_non_root(_meta: Mapping[str, Any], spec: Mapping[str, Any]) -> str | None:
    """check_runAsNonRoot.go ``runAsNonRoot1_0``: pod-level true, or true on every container."""
    pod = _pod_ctx(spec).get("runAsNonRoot")
    if pod is False or any(_ctx(c).get("runAsNonRoot") is False for c in containers(spec)):
        return "runAsNonRoot != true: the pod or a container sets securityContext.runAsNonRoot=false"
    implicit = [c for c in containers(spec) if _ctx(c).get("runAsNonRoot") is None and pod is not True]
    return (
        f"runAsNonRoot != true: pod or containers {_names(implicit)} must set securityContext.runAsNonRoot=true"
        if implicit
        else None
    )


def _run_as_user(_meta: Mapping[str, Any], spec: Mapping[str, Any]) -> str | None:
    """check_runAsUser.go ``runAsUser1_23``: runAsUser 0 nowhere."""
    ctxs = [_pod_ctx(spec)] + [_ctx(c) for c in containers(spec)]
    return (
        "runAsUser=0: the pod or a container must not set runAsUser=0"
        if any(ctx.get("runAsUser") == 0 for ctx in ctxs)
        else None
    )


def _seccomp_restricted(_meta: Mapping[str, Any], spec: Mapping[str, Any]) -> str | None:
    """check_seccompProfile_restricted.go ``seccompProfileRestricted_1_19``: set, and safe."""
    explicit = _seccomp_baseline(_meta, spec)
    if explicit is not None:
        return explicit
    if isinstance(_pod_ctx(spec).get("seccompProfile"), Mapping):
        return None
    implicit = [c for c in containers(spec) if not isinstance(_ctx(c).get("seccompProfile"), Mapping)]
    return (
        f"seccompProfile: pod or containers {_names(implicit)} must set securityContext.seccompProfile.type to "
        '"RuntimeDefault" or "Localhost"'
        if implicit
        else None
    )


@dataclass(frozen=True)
class Check:
    """One upstream ``policy.Check``: its ID, level and ``(MinimumVersion, CheckPod, overrides)``
    steps in increasing version order."""

    id: str
    level: Level
    versions: tuple[tuple[Minor, CheckFn, tuple[str, ...]], ...]

    def at(self, minor: Minor) -> tuple[CheckFn, tuple[str, ...]] | None:
        """The step in force at ``minor`` (the newest with MinimumVersion <= minor), if any."""
        chosen = None
        for floor, fn, overrides in self.versions:
            if floor <= minor:
                chosen = (fn, overrides)
        return chosen


CHECKS: tuple[Check, ...] = (
    Check(
        "allowPrivilegeEscalation",
        "restricted",
        (
            ((1, 8), _allow_privilege_escalation, ()),
            ((1, 25), _not_windows(_allow_privilege_escalation), ()),
        ),
    ),
    Check("appArmorProfile", "baseline", (((1, 0), _app_armor, ()),)),
    Check("capabilities_baseline", "baseline", (((1, 0), _capabilities_baseline, ()),)),
    Check(
        "capabilities_restricted",
        "restricted",
        (
            ((1, 22), _capabilities_restricted, ("capabilities_baseline",)),
            ((1, 25), _not_windows(_capabilities_restricted), ("capabilities_baseline",)),
        ),
    ),
    Check("hostNamespaces", "baseline", (((1, 0), _host_namespaces, ()),)),
    Check("hostPathVolumes", "baseline", (((1, 0), _host_path_volumes, ()),)),
    Check("hostPorts", "baseline", (((1, 0), _host_ports, ()),)),
    Check("hostProbesAndHostLifecycle", "baseline", (((1, 34), _probe_hosts, ()),)),
    Check("privileged", "baseline", (((1, 0), _privileged, ()),)),
    Check(
        "procMount",
        "baseline",
        (
            ((1, 0), _proc_mount(False), ()),
            ((1, 35), _proc_mount(True), ()),
        ),
    ),
    Check("procMount_restricted", "restricted", (((1, 35), _proc_mount(False), ("procMount",)),)),
    Check("restrictedVolumes", "restricted", (((1, 0), _restricted_volumes, ("hostPathVolumes",)),)),
    Check(
        "runAsNonRoot",
        "restricted",
        (
            ((1, 0), _run_as_non_root, ()),
            ((1, 35), _not_user_namespace(_run_as_non_root), ()),
        ),
    ),
    Check(
        "runAsUser",
        "restricted",
        (
            ((1, 23), _run_as_user, ()),
            ((1, 35), _not_user_namespace(_run_as_user), ()),
        ),
    ),
    Check(
        "seLinuxOptions",
        "baseline",
        (
            ((1, 0), _se_linux(_SELINUX_1_0), ()),
            ((1, 31), _se_linux(_SELINUX_1_0 | {"container_engine_t"}), ()),
        ),
    ),
    Check(
        "seccompProfile_baseline",
        "baseline",
        (
            ((1, 0), _seccomp_annotations, ()),
            ((1, 19), _seccomp_baseline, ()),
        ),
    ),
    Check(
        "seccompProfile_restricted",
        "restricted",
        (
            ((1, 19), _seccomp_restricted, ("seccompProfile_baseline",)),
            ((1, 25), _not_windows(_seccomp_restricted), ("seccompProfile_baseline",)),
        ),
    ),
    Check(
        "sysctls",
        "baseline",
        (
            ((1, 0), _sysctls(_SYSCTLS_1_0), ()),
            ((1, 27), _sysctls(_SYSCTLS_1_27), ()),
            ((1, 29), _sysctls(_SYSCTLS_1_29), ()),
            ((1, 32), _sysctls(_SYSCTLS_1_32), ()),
            ((1, 37), _sysctls(_SYSCTLS_1_37), ()),
        ),
    ),
    Check("windowsHostProcess", "baseline", (((1, 0), _windows_host_process, ()),)),
)

UPSTREAM_CHECK_IDS = frozenset(
    {
        "allowPrivilegeEscalation",
        "appArmorProfile",
        "capabilities_baseline",
        "capabilities_restricted",
        "hostNamespaces",
        "hostPathVolumes",
        "hostPorts",
        "hostProbesAndHostLifecycle",
        "privileged",
        "procMount",
        "procMount_restricted",
        "restrictedVolumes",
        "runAsNonRoot",
        "runAsUser",
        "seLinuxOptions",
        "seccompProfile_baseline",
        "seccompProfile_restricted",
        "sysctls",
        "windowsHostProcess",
    }
)
"""Every ``Check.ID`` kubernetes/pod-security-admission v0.37.0-alpha.2 registers in
``policy/check_*.go`` (one ``addCheck`` per file)."""

MAX_MINOR: Minor = max(floor for check in CHECKS for floor, _fn, _o in check.versions)
"""registry.go ``populate``: the newest MinimumVersion; a newer requested version evaluates as it."""


def evaluate(level: str, minor: Minor, meta: Mapping[str, Any], spec: Mapping[str, Any]) -> list[str]:
    """registry.go ``checkRegistry.EvaluatePod``: what ``level`` at ``minor`` forbids in this pod.

    privileged forbids nothing; restricted runs the baseline checks too, minus the ones a
    restricted check in force overrides (``OverrideCheckIDs``)."""
    if level not in ("baseline", "restricted"):
        return []
    minor = min(minor, MAX_MINOR)
    steps = {c.id: (c.level, step) for c in CHECKS if (step := c.at(minor)) is not None}
    if level == "baseline":
        steps = {i: s for i, s in steps.items() if s[0] == "baseline"}
    overridden = {o for lvl, (_fn, overrides) in steps.values() if lvl == "restricted" for o in overrides}
    out = []
    for check_id in sorted(steps, key=lambda i: (steps[i][0] != "baseline", i)):
        if check_id in overridden:
            continue
        reason = steps[check_id][1][0](meta, spec)
        if reason is not None:
            out.append(reason)
    return out
