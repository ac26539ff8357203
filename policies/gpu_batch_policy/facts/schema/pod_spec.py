"""The core API's validation of a pod template, as the API server applies it (issue 42 item 2).

Why: the OpenAPI schema (:mod:`.core`, :mod:`.crd`) says which fields exist and their types, but
the API server's Go validation refuses much more: a GPU requested without its limit, a fraction
of a GPU, two containers of one name, a mount of a volume the pod does not have, a liveness probe
with ``successThreshold: 2``.  A Deployment or Job carrying such a template is refused at create;
a JobSet, TrainJob, RayCluster or MPIJob is accepted (its CRD schema cannot say this), and then
every Job or Pod its controller creates is refused, so the workload never runs.

Ported from kubernetes/kubernetes v1.37.2 (``k8s.io/kubernetes@v1.37.2`` from the Go module
proxy, the minor :data:`.core.GKE_NEWEST_MINOR` the stacks target) ``pkg/apis/core/validation/
validation.go``; every :class:`PodViolation` names the function that refuses it:

- ``ValidatePodSpec``: volumes, containers, init containers, tolerations, affinity, node selector.
- ``ValidateVolumes``: names are DNS-1123 labels, unique; ``validateVolumeSource``: exactly one source.
- ``validateContainers`` / ``validateInitContainers`` / ``validateContainerCommon``: at least one
  container; names DNS-1123 labels, unique across containers and init containers; an image;
  ``validateContainerPorts``; ``ValidateVolumeMounts``; ``ValidateContainerResourceRequirements``;
  ``ValidateSecurityContext``; probes only on containers and sidecars (``restartPolicy: Always``);
  ``validatePullPolicy`` and ``terminationMessagePolicy`` among the values they support.
- ``validateDNSPolicy`` and ``ValidatePreemptionPolicy`` (from ``ValidatePodSpec``).
- ``validateResourceRequirements`` (``ValidateContainerResourceName``, ``ValidateResourceQuantityValue``,
  ``validateResourceQuantityHugePageValue``) with the helpers of ``pkg/apis/core/helper/helpers.go``
  (``IsExtendedResourceName``, ``IsOvercommitAllowed``, ``IsIntegerResourceName``,
  ``IsHugePageResourceValueDivisible``).
- ``validateLivenessProbe`` / ``validateReadinessProbe`` / ``validateStartupProbe`` /
  ``validateProbe`` / ``validateHandler``.
- ``ValidateTolerations``; ``validateAffinity`` (``ValidateNodeSelector``,
  ``ValidateNodeSelectorRequirement``, ``validatePodAffinityTerm``, ``validateWeightedPodAffinityTerms``).

What owns the template adds one rule on ``restartPolicy``: a Job's pods may only be ``OnFailure``
or ``Never``, and the unset default ``Always`` is refused (``pkg/apis/batch/validation/
validation.go`` ``validateJobSpec``); Deployments, ReplicaSets, StatefulSets and DaemonSets need
``Always`` (``pkg/apis/apps/validation/validation.go`` ``ValidatePodTemplateSpecForReplicaSet``,
``ValidateStatefulSetSpec``, ``ValidateDaemonSetSpec``).

Defaults first, as the server applies them (``pkg/apis/core/v1/defaults.go``): an unset
``protocol`` is TCP, an unset probe ``successThreshold`` 1, ``terminationMessagePolicy`` and
``terminationGracePeriodSeconds`` are filled in, so none of those is reported unset.  A request
defaulted from its limit happens only on a Pod (``SetDefaults_Pod``), which is why a template with
``nvidia.com/gpu`` only in ``limits`` is valid and one with it only in ``requests`` is not.
Values unknown until apply (and ``${VAR}`` placeholders) are skipped, never guessed.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Literal

from ...primitives.k8s_names import (
    dns1123_label_error,
    has_placeholder,
    label_value_error,
    qualified_name_error,
)
from ...primitives.quantity import QuantityError, parse_int_or_string
from ...primitives.values import Unknown
from .markers import MARKERS

Owner = Literal["pod", "job", "always"]
"""What the template's owner requires of ``restartPolicy``: any (a Pod, a Ray group), a Job's
(``OnFailure``/``Never``), a replicated controller's (``Always``)."""

V = "pkg/apis/core/validation/validation.go"


@dataclass(frozen=True)
class PodViolation:
    """One refusal: where in the template, why, and the upstream function that says so."""

    path: str
    message: str
    function: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message} ({self.function})"


def _known(value: Any) -> bool:
    """A value the pack can judge: not unknown until apply, not a display marker or placeholder."""
    if isinstance(value, Unknown):
        return False
    return not (isinstance(value, str) and (value in MARKERS or has_placeholder(value)))


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and _known(value) else None


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _int(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return int(value) if float(value).is_integer() else None


# --- resources: pkg/apis/core/helper/helpers.go ---------------------------------------------------

_STANDARD_CONTAINER = frozenset({"cpu", "memory", "ephemeral-storage"})  # standardContainerResources
_HUGEPAGES = "hugepages-"  # core.ResourceHugePagesPrefix
_NATIVE_PREFIX = "kubernetes.io/"  # core.ResourceDefaultNamespacePrefix
_REQUESTS_PREFIX = "requests."  # core.DefaultResourceRequestsPrefix


def is_native(name: str) -> bool:
    """``IsNativeResource``: no domain, or a ``kubernetes.io/`` one."""
    return "/" not in name or _NATIVE_PREFIX in name


def is_extended(name: str) -> bool:
    """``IsExtendedResourceName``: not native, not ``requests.*``, and ``requests.<name>`` is a
    qualified name (``nvidia.com/gpu``, ``google.com/tpu``)."""
    if is_native(name) or name.startswith(_REQUESTS_PREFIX):
        return False
    return qualified_name_error(_REQUESTS_PREFIX + name) is None


def overcommit_allowed(name: str) -> bool:
    """``IsOvercommitAllowed``: native and not hugepages; everything else needs request == limit."""
    return is_native(name) and not name.startswith(_HUGEPAGES)


def _resource_name_error(name: str) -> str | None:
    """``ValidateContainerResourceName`` (with ``validateResourceName``)."""
    why = qualified_name_error(name)
    if why is not None:
        return why
    if "/" not in name:
        if name not in _STANDARD_CONTAINER and not name.startswith(_HUGEPAGES):
            return "must be a standard resource for containers (cpu, memory, ephemeral-storage, hugepages-*)"
    elif not is_native(name) and not is_extended(name):
        return "doesn't follow extended resource name standard"
    return None


def _quantities(section: Any) -> Iterator[tuple[str, Decimal]]:
    """(name, amount) of every parseable, known quantity (bad ones are ``container-resource-quantities``')."""
    for name, raw in _map(section).items():
        if not isinstance(name, str) or not _known(raw):
            continue
        try:
            yield name, parse_int_or_string(raw)
        except QuantityError:
            continue


def _hugepage_size(name: str) -> Decimal | None:
    try:
        return parse_int_or_string(name[len(_HUGEPAGES) :])
    except QuantityError:
        return None


def _shown(amount: Decimal) -> str:
    return format(amount.normalize(), "f") if amount == amount.to_integral_value() else str(amount)


def resource_violations(resources: Any, path: str) -> list[PodViolation]:
    """``validateResourceRequirements`` of one container's ``resources``."""
    fn = f"{V} validateResourceRequirements"
    out: list[PodViolation] = []
    limits = dict(_quantities(_map(resources).get("limits")))
    requests = dict(_quantities(_map(resources).get("requests")))
    for section, amounts in (("limits", limits), ("requests", requests)):
        for name, amount in amounts.items():
            where = f"{path}.{section}['{name}']"
            why = _resource_name_error(name)
            if why is not None:
                out.append(
                    PodViolation(where, f"resource name {name!r} {why}", f"{V} ValidateContainerResourceName")
                )
            if amount < 0:
                out.append(
                    PodViolation(
                        where, "must be greater than or equal to 0", f"{V} ValidateResourceQuantityValue"
                    )
                )
            if is_extended(name) and amount != amount.to_integral_value():
                out.append(
                    PodViolation(
                        where,
                        f"{_shown(amount)} must be an integer: an extended resource ({name}) is counted "
                        "in whole devices (IsIntegerResourceName)",
                        f"{V} ValidateResourceQuantityValue",
                    )
                )
            if name.startswith(_HUGEPAGES):
                size = _hugepage_size(name)
                if size is None or size <= 0 or int(amount) % int(size) != 0:
                    out.append(
                        PodViolation(
                            where,
                            f"{_shown(amount)} is not a positive integer multiple of {name}",
                            f"{V} validateResourceQuantityHugePageValue",
                        )
                    )
    for name, amount in requests.items():
        where = f"{path}.requests['{name}']"
        if name in limits:
            limit = limits[name]
            if amount != limit and not overcommit_allowed(name):
                out.append(
                    PodViolation(
                        where, f"{_shown(amount)} must be equal to {name} limit of {_shown(limit)}", fn
                    )
                )
            elif amount > limit:
                out.append(
                    PodViolation(
                        where,
                        f"{_shown(amount)} must be less than or equal to {name} limit of {_shown(limit)}",
                        fn,
                    )
                )
        elif not overcommit_allowed(name):
            out.append(
                PodViolation(
                    f"{path}.limits",
                    f"Limit must be set for non overcommitable resources: {name} is requested with no limit "
                    "(extended resources and hugepages need request == limit)",
                    fn,
                )
            )
    names = set(limits) | set(requests)
    if any(n.startswith(_HUGEPAGES) for n in names) and not names & {"cpu", "memory"}:
        out.append(PodViolation(path, "HugePages require cpu or memory", fn))
    return out


# --- containers -----------------------------------------------------------------------------------

_PORT_CHARSET = re.compile(r"[-a-z0-9]+")
_PORT_LETTER = re.compile(r".*[a-z].*")
_PROTOCOLS = frozenset({"TCP", "UDP", "SCTP"})  # supportedPortProtocols
_HANDLERS = ("exec", "httpGet", "tcpSocket", "grpc", "sleep")  # validateHandler, in its order


def port_name_error(name: str) -> str | None:
    """apimachinery ``pkg/util/validation`` ``IsValidPortName`` (an IANA_SVC_NAME)."""
    if len(name) > 15:
        return "must be no more than 15 characters"
    if not _PORT_CHARSET.fullmatch(name):
        return "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)"
    if not _PORT_LETTER.fullmatch(name):
        return "must contain at least one letter (a-z)"
    if "--" in name:
        return "must not contain consecutive hyphens"
    if name.startswith("-") or name.endswith("-"):
        return "must not begin or end with a hyphen"
    return None


def _ports(ports: Any, path: str) -> list[PodViolation]:
    fn = f"{V} validateContainerPorts"
    out: list[PodViolation] = []
    seen: set[str] = set()
    for i, raw_port in enumerate(_list(ports)):
        where = f"{path}[{i}]"
        port = _map(raw_port)
        name = _str(port.get("name"))
        if name:
            why = port_name_error(name)
            if why is not None:
                out.append(PodViolation(f"{where}.name", f"{name!r} {why}", fn))
            elif name in seen:
                out.append(PodViolation(f"{where}.name", f"duplicate port name {name!r}", fn))
            seen.add(name)
        for key, required in (("containerPort", True), ("hostPort", False)):
            raw = port.get(key)
            if not _known(raw):
                continue
            number = _int(raw)
            if number is None or number == 0:
                if required:
                    out.append(PodViolation(f"{where}.{key}", "Required value", fn))
            elif not 1 <= number <= 65535:
                out.append(
                    PodViolation(f"{where}.{key}", f"{number} must be between 1 and 65535, inclusive", fn)
                )
        protocol = _str(port.get("protocol"))
        if protocol and protocol not in _PROTOCOLS:
            out.append(
                PodViolation(f"{where}.protocol", f"unsupported value {protocol!r}: TCP, UDP or SCTP", fn)
            )
    return out


def _mounts(mounts: Any, volumes: set[str] | None, path: str) -> list[PodViolation]:
    fn = f"{V} ValidateVolumeMounts"
    out: list[PodViolation] = []
    paths: set[str] = set()
    for i, raw_mount in enumerate(_list(mounts)):
        where = f"{path}[{i}]"
        mount = _map(raw_mount)
        name, mount_path = mount.get("name"), mount.get("mountPath")
        if _known(name):
            if not name:
                out.append(PodViolation(f"{where}.name", "Required value", fn))
            elif volumes is not None and name not in volumes:
                out.append(
                    PodViolation(
                        f"{where}.name", f"Not found: {name!r} is no volume of the pod (spec.volumes)", fn
                    )
                )
        if _known(mount_path):
            if not mount_path:
                out.append(PodViolation(f"{where}.mountPath", "Required value", fn))
            elif isinstance(mount_path, str) and mount_path in paths:
                out.append(PodViolation(f"{where}.mountPath", f"{mount_path!r} must be unique", fn))
            if isinstance(mount_path, str):
                paths.add(mount_path)
        if _str(mount.get("subPath")) and _str(mount.get("subPathExpr")):
            out.append(
                PodViolation(f"{where}.subPathExpr", "subPathExpr and subPath are mutually exclusive", fn)
            )
    return out


def _probe(probe: Any, kind: str, path: str) -> list[PodViolation]:
    """``validate{Liveness,Readiness,Startup}Probe`` over ``validateProbe`` / ``validateHandler``."""
    if not isinstance(probe, Mapping):
        return []
    out: list[PodViolation] = []
    handlers = [h for h in _HANDLERS if probe.get(h) is not None]
    if not handlers:
        out.append(
            PodViolation(
                path, "must specify a handler type (exec, httpGet, tcpSocket, grpc)", f"{V} validateHandler"
            )
        )
    for extra in handlers[1:]:
        out.append(
            PodViolation(
                f"{path}.{extra}", "may not specify more than 1 handler type", f"{V} validateHandler"
            )
        )
    for key in (
        "initialDelaySeconds",
        "timeoutSeconds",
        "periodSeconds",
        "successThreshold",
        "failureThreshold",
    ):
        number = _int(probe.get(key))
        if number is not None and number < 0:
            out.append(
                PodViolation(f"{path}.{key}", "must be greater than or equal to 0", f"{V} validateProbe")
            )
    threshold = _int(probe.get("successThreshold"))
    if kind in ("livenessProbe", "startupProbe") and threshold is not None and threshold != 1:
        fn = "validateLivenessProbe" if kind == "livenessProbe" else "validateStartupProbe"
        out.append(PodViolation(f"{path}.successThreshold", f"{threshold} must be 1", f"{V} {fn}"))
    grace = probe.get("terminationGracePeriodSeconds")
    if kind == "readinessProbe" and grace is not None and _known(grace):
        out.append(
            PodViolation(
                f"{path}.terminationGracePeriodSeconds",
                "must not be set for readinessProbes",
                f"{V} validateReadinessProbe",
            )
        )
    return out


def _security(context: Any, path: str) -> list[PodViolation]:
    """``ValidateSecurityContext``: privileged with allowPrivilegeEscalation false."""
    context = _map(context)
    if context.get("allowPrivilegeEscalation") is False and context.get("privileged") is True:
        return [
            PodViolation(
                path,
                "cannot set `allowPrivilegeEscalation` to false and `privileged` to true",
                f"{V} ValidateSecurityContext",
            )
        ]
    return []


_PULL_POLICIES = ("Always", "IfNotPresent", "Never")  # supportedPullPolicies
_MESSAGE_POLICIES = ("File", "FallbackToLogsOnError")  # validateContainerCommon
_DNS_POLICIES = ("ClusterFirstWithHostNet", "ClusterFirst", "Default", "None")  # validateDNSPolicy
_PREEMPTION_POLICIES = ("PreemptLowerPriority", "Never")  # ValidatePreemptionPolicy


def _enum(value: Any, allowed: tuple[str, ...], path: str, function: str) -> list[PodViolation]:
    """A set value outside ``allowed`` (unset ones are defaulted first, ``pkg/apis/core/v1/defaults.go``)."""
    if not isinstance(value, str) or not _known(value) or value in allowed:
        return []
    supported = ", ".join(f'"{v}"' for v in allowed)
    return [PodViolation(path, f'Unsupported value: "{value}": supported values: {supported}', function)]


def _container(ctr: Any, path: str, volumes: set[str] | None, synthesized: bool) -> list[PodViolation]:
    """``validateContainerCommon``."""
    fn = f"{V} validateContainerCommon"
    ctr = _map(ctr)
    out: list[PodViolation] = []
    name = ctr.get("name")
    if _known(name):
        if not name:
            out.append(PodViolation(f"{path}.name", "Required value: every container needs a name", fn))
        elif isinstance(name, str) and (why := dns1123_label_error(name)) is not None:
            out.append(PodViolation(f"{path}.name", f"{name!r} {why}", f"{V} ValidateDNS1123Label"))
    image = ctr.get("image")
    if not synthesized and _known(image) and not image:
        out.append(PodViolation(f"{path}.image", "Required value: every container needs an image", fn))
    out += _enum(
        ctr.get("imagePullPolicy"), _PULL_POLICIES, f"{path}.imagePullPolicy", f"{V} validatePullPolicy"
    )
    out += _enum(
        ctr.get("terminationMessagePolicy"), _MESSAGE_POLICIES, f"{path}.terminationMessagePolicy", fn
    )
    out += _ports(ctr.get("ports"), f"{path}.ports")
    out += _mounts(ctr.get("volumeMounts"), volumes, f"{path}.volumeMounts")
    out += resource_violations(ctr.get("resources"), f"{path}.resources")
    out += _security(ctr.get("securityContext"), f"{path}.securityContext")
    return out


def _containers(spec: Mapping[str, Any], volumes: set[str] | None, synthesized: bool) -> list[PodViolation]:
    out: list[PodViolation] = []
    containers = spec.get("containers")
    if not _known(containers):
        return out
    if not _list(containers):
        out.append(
            PodViolation(
                "spec.containers",
                "Required value: a pod needs at least one container",
                f"{V} validateContainers",
            )
        )
    names: set[str] = set()
    for i, ctr in enumerate(_list(containers)):
        path = f"spec.containers[{i}]"
        out += _container(ctr, path, volumes, synthesized)
        name = _str(_map(ctr).get("name"))
        if name and name in names:
            out.append(PodViolation(f"{path}.name", f"Duplicate value: {name!r}", f"{V} validateContainers"))
        if name:
            names.add(name)
        for kind in ("livenessProbe", "readinessProbe", "startupProbe"):
            out += _probe(_map(ctr).get(kind), kind, f"{path}.{kind}")
    for i, raw_ctr in enumerate(_list(spec.get("initContainers"))):
        path = f"spec.initContainers[{i}]"
        out += _container(raw_ctr, path, volumes, synthesized)
        ctr = _map(raw_ctr)
        name = _str(ctr.get("name"))
        if name and name in names:
            out.append(
                PodViolation(f"{path}.name", f"Duplicate value: {name!r}", f"{V} validateInitContainers")
            )
        if name:
            names.add(name)
        sidecar = ctr.get("restartPolicy") == "Always"
        for kind in ("livenessProbe", "readinessProbe", "startupProbe", "lifecycle"):
            if ctr.get(kind) is None:
                continue
            if sidecar:
                out += _probe(ctr.get(kind), kind, f"{path}.{kind}") if kind != "lifecycle" else []
            else:
                out.append(
                    PodViolation(
                        f"{path}.{kind}",
                        "may not be set for init containers without restartPolicy=Always",
                        f"{V} validateInitContainers",
                    )
                )
    return out


# --- volumes, tolerations, affinity ---------------------------------------------------------------

_NOT_SOURCES = frozenset({"name"})


def _volumes(spec: Mapping[str, Any]) -> tuple[set[str] | None, list[PodViolation]]:
    """``ValidateVolumes``: the names mounts may use (None when some are unknown), and the refusals.

    A volume with no source is no error: ``SetDefaults_Volume`` (``pkg/apis/core/v1/defaults.go``)
    makes it an emptyDir before validation; two sources are (``validateVolumeSource``)."""
    raw = spec.get("volumes")
    if not _known(raw):
        return None, []
    out: list[PodViolation] = []
    names: set[str] = set()
    complete = True
    for i, raw_volume in enumerate(_list(raw)):
        path = f"spec.volumes[{i}]"
        volume = _map(raw_volume)
        name = volume.get("name")
        if not isinstance(name, str) or not _known(name):
            complete = False
            continue
        if not name:
            out.append(PodViolation(f"{path}.name", "Required value", f"{V} ValidateVolumes"))
        elif (why := dns1123_label_error(name)) is not None:
            out.append(PodViolation(f"{path}.name", f"{name!r} {why}", f"{V} ValidateVolumes"))
        elif name in names:
            out.append(PodViolation(f"{path}.name", f"Duplicate value: {name!r}", f"{V} ValidateVolumes"))
        names.add(name)
        sources = [k for k, v in volume.items() if k not in _NOT_SOURCES and v is not None]
        for extra in sources[1:]:
            out.append(
                PodViolation(
                    f"{path}.{extra}", "may not specify more than 1 volume type", f"{V} validateVolumeSource"
                )
            )
    return (names if complete else None), out


_EFFECTS = frozenset({"NoSchedule", "PreferNoSchedule", "NoExecute"})


def _tolerations(tolerations: Any) -> list[PodViolation]:
    fn = f"{V} ValidateTolerations"
    out: list[PodViolation] = []
    for i, raw in enumerate(_list(tolerations)):
        path = f"spec.tolerations[{i}]"
        toleration = _map(raw)
        if not all(_known(v) for v in toleration.values()):
            continue
        key = toleration.get("key") or ""
        operator = toleration.get("operator") or ""
        value = toleration.get("value") or ""
        effect = toleration.get("effect") or ""
        if key and isinstance(key, str) and (why := qualified_name_error(key)) is not None:
            out.append(PodViolation(f"{path}.key", f"{key!r} {why}", fn))
        if not key and operator != "Exists":
            out.append(
                PodViolation(
                    f"{path}.operator",
                    'operator must be Exists when `key` is empty, which means "match all values and all keys"',
                    fn,
                )
            )
        if toleration.get("tolerationSeconds") is not None and effect != "NoExecute":
            out.append(
                PodViolation(
                    f"{path}.effect", "effect must be 'NoExecute' when `tolerationSeconds` is set", fn
                )
            )
        if operator in ("Equal", ""):
            if isinstance(value, str) and (why := label_value_error(value)) is not None:
                out.append(PodViolation(f"{path}.value", f"{value!r} {why}", fn))
        elif operator == "Exists":
            if value:
                out.append(
                    PodViolation(f"{path}.value", "value must be empty when `operator` is 'Exists'", fn)
                )
        else:
            out.append(
                PodViolation(f"{path}.operator", f"unsupported value {operator!r}: Equal or Exists", fn)
            )
        if effect and effect not in _EFFECTS:
            out.append(
                PodViolation(
                    f"{path}.effect",
                    f"unsupported value {effect!r}: NoSchedule, PreferNoSchedule, NoExecute",
                    fn,
                )
            )
    return out


def _requirement(req: Any, path: str) -> list[PodViolation]:
    """``ValidateNodeSelectorRequirement``."""
    fn = f"{V} ValidateNodeSelectorRequirement"
    req = _map(req)
    if not all(_known(v) for v in req.values()):
        return []
    out: list[PodViolation] = []
    operator, values = req.get("operator"), _list(req.get("values"))
    if operator in ("In", "NotIn"):
        if not values:
            out.append(
                PodViolation(f"{path}.values", "must be specified when `operator` is 'In' or 'NotIn'", fn)
            )
    elif operator in ("Exists", "DoesNotExist"):
        if values:
            out.append(
                PodViolation(
                    f"{path}.values", "may not be specified when `operator` is 'Exists' or 'DoesNotExist'", fn
                )
            )
    elif operator in ("Gt", "Lt"):
        if len(values) != 1:
            out.append(
                PodViolation(
                    f"{path}.values", "must be specified single value when `operator` is 'Lt' or 'Gt'", fn
                )
            )
    else:
        out.append(PodViolation(f"{path}.operator", f"{operator!r} not a valid selector operator", fn))
    key = req.get("key")
    if isinstance(key, str) and (why := qualified_name_error(key)) is not None:
        out.append(PodViolation(f"{path}.key", f"{key!r} {why}", fn))
    return out


def _node_affinity(affinity: Mapping[str, Any], path: str) -> list[PodViolation]:
    out: list[PodViolation] = []
    required = affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    if isinstance(required, Mapping) and _known(required.get("nodeSelectorTerms")):
        terms = _list(required.get("nodeSelectorTerms"))
        where = f"{path}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
        if not terms:
            out.append(
                PodViolation(where, "must have at least one node selector term", f"{V} ValidateNodeSelector")
            )
        for i, term in enumerate(terms):
            for field_name in ("matchExpressions", "matchFields"):
                for j, req in enumerate(_list(_map(term).get(field_name))):
                    out += _requirement(req, f"{where}[{i}].{field_name}[{j}]")
    for i, preferred in enumerate(_list(affinity.get("preferredDuringSchedulingIgnoredDuringExecution"))):
        where = f"{path}.preferredDuringSchedulingIgnoredDuringExecution[{i}]"
        for j, req in enumerate(_list(dig_map(preferred, "preference").get("matchExpressions"))):
            out += _requirement(req, f"{where}.preference.matchExpressions[{j}]")
    return out


def dig_map(value: Any, key: str) -> Mapping[str, Any]:
    return _map(_map(value).get(key))


def _pod_term(term: Any, path: str) -> list[PodViolation]:
    """``validatePodAffinityTerm``: a topologyKey, a qualified name."""
    key = _map(term).get("topologyKey")
    if not _known(key):
        return []
    if not key:
        return [
            PodViolation(
                f"{path}.topologyKey", "Required value: can not be empty", f"{V} validatePodAffinityTerm"
            )
        ]
    if isinstance(key, str) and (why := qualified_name_error(key)) is not None:
        return [PodViolation(f"{path}.topologyKey", f"{key!r} {why}", f"{V} validatePodAffinityTerm")]
    return []


def _affinity(affinity: Any) -> list[PodViolation]:
    """``validateAffinity``."""
    affinity = _map(affinity)
    out = _node_affinity(dig_map(affinity, "nodeAffinity"), "spec.affinity.nodeAffinity")
    for kind in ("podAffinity", "podAntiAffinity"):
        base = f"spec.affinity.{kind}"
        section = dig_map(affinity, kind)
        for i, term in enumerate(_list(section.get("requiredDuringSchedulingIgnoredDuringExecution"))):
            out += _pod_term(term, f"{base}.requiredDuringSchedulingIgnoredDuringExecution[{i}]")
        for i, weighted in enumerate(_list(section.get("preferredDuringSchedulingIgnoredDuringExecution"))):
            where = f"{base}.preferredDuringSchedulingIgnoredDuringExecution[{i}]"
            weight = _int(_map(weighted).get("weight"))
            if weight is not None and not 1 <= weight <= 100:
                out.append(
                    PodViolation(
                        f"{where}.weight",
                        f"{weight} must be in the range 1-100",
                        f"{V} validateWeightedPodAffinityTerms",
                    )
                )
            out += _pod_term(_map(weighted).get("podAffinityTerm"), f"{where}.podAffinityTerm")
    return out


def _node_selector(selector: Any) -> list[PodViolation]:
    """``ValidatePodSpec``: ``nodeSelector`` is a label map (``ValidateLabels``)."""
    out: list[PodViolation] = []
    for key, value in _map(selector).items():
        if not (_known(key) and _known(value)):
            continue
        where = f"spec.nodeSelector['{key}']"
        if (why := qualified_name_error(str(key))) is not None:
            out.append(
                PodViolation(
                    where, f"key {key!r} {why}", "apimachinery pkg/apis/meta/v1/validation ValidateLabels"
                )
            )
        if isinstance(value, str) and (why := label_value_error(value)) is not None:
            out.append(
                PodViolation(
                    where, f"value {value!r} {why}", "apimachinery pkg/apis/meta/v1/validation ValidateLabels"
                )
            )
    return out


def _restart(spec: Mapping[str, Any], owner: Owner, default: str) -> list[PodViolation]:
    policy = spec.get("restartPolicy")
    if not _known(policy):
        return []
    stored = policy or default or "Always"  # a webhook's default, else SetDefaults_PodSpec
    if stored not in ("Always", "OnFailure", "Never"):
        return [
            PodViolation("spec.restartPolicy", f"unsupported value {policy!r}", f"{V} validateRestartPolicy")
        ]
    if owner == "job" and stored == "Always":
        return [
            PodViolation(
                "spec.restartPolicy",
                f"{'unset (Always)' if not policy else repr(policy)}: a Job's pods need OnFailure or Never",
                "pkg/apis/batch/validation/validation.go validateJobSpec",
            )
        ]
    if owner == "always" and stored != "Always":
        return [
            PodViolation(
                "spec.restartPolicy",
                f"{policy!r}: only Always is supported for a Deployment, ReplicaSet, StatefulSet or DaemonSet",
                "pkg/apis/apps/validation/validation.go ValidatePodTemplateSpecForReplicaSet",
            )
        ]
    return []


def validate_pod_template(
    template: Any, owner: Owner = "pod", synthesized: bool = False, restart_default: str = ""
) -> list[PodViolation]:
    """Every refusal ``ValidatePodTemplateSpec`` / ``ValidatePodSpec`` (and the owner's rule on
    ``restartPolicy``) has for ``template`` (``{metadata, spec}``), paths relative to it.

    ``synthesized``: the template is the pack's model of a pod a controller builds (Spark), whose
    image the controller fills in, so an absent image is not reported.  ``restart_default``: what
    the owner's mutating webhook sets an unset ``restartPolicy`` to (JobSet's ``OnFailure``)."""
    if not isinstance(template, Mapping):
        return []
    spec = _map(template.get("spec"))
    if not spec:
        return []
    volumes, out = _volumes(spec)
    out += _containers(spec, volumes, synthesized)
    out += _tolerations(spec.get("tolerations"))
    out += _affinity(spec.get("affinity"))
    out += _node_selector(spec.get("nodeSelector"))
    out += _restart(spec, owner, restart_default)
    out += _enum(spec.get("dnsPolicy"), _DNS_POLICIES, "spec.dnsPolicy", f"{V} validateDNSPolicy")
    out += _enum(
        spec.get("preemptionPolicy"),
        _PREEMPTION_POLICIES,
        "spec.preemptionPolicy",
        f"{V} ValidatePreemptionPolicy",
    )
    return out
