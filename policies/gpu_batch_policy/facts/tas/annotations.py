"""Kueue's pod-set topology annotations and its webhook validation of them, ported exactly.

Source: kubernetes-sigs/kueue v0.19.2 ``apis/kueue/v1beta2/topology_types.go`` (the annotation
names) and ``pkg/controller/jobframework/tas_validation.go`` ``ValidateTASPodSetRequest`` (at most
one of required / preferred / unconstrained; label-name syntax; ``podset-group-name`` rules;
unconstrained a boolean; slice size an integer >= 1; slice topology and slice size together;
the multi-layer constraints annotation, gate ``TASMultiLayerTopology`` on by default since 0.19,
exclusive with the two-level pair, 1-3 layers, unique labels, each size >= 1 and dividing the one
above) and ``ValidateSliceSizeAnnotationUpperBound`` (slice size at most the pod-set count).  The
job webhooks (``pkg/controller/jobs/job/job_webhook.go``, ``raycluster/common.go`` and
``raycluster_webhook.go``) run both on every pod template, so a template failing them is refused
at create: the rule is mandatory.

The scheduler-side checks that need the Topology (level exists, slice level not above the pod-set
level) are ``tas_flavor_snapshot.go`` ``findTopologyAssignment``; :func:`level_problems` ports them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from ...primitives.values import Unknown

PREFIX: Final = "kueue.x-k8s.io/"
REQUIRED: Final = PREFIX + "podset-required-topology"
PREFERRED: Final = PREFIX + "podset-preferred-topology"
UNCONSTRAINED: Final = PREFIX + "podset-unconstrained-topology"
SLICE_REQUIRED: Final = PREFIX + "podset-slice-required-topology"
SLICE_SIZE: Final = PREFIX + "podset-slice-size"
SLICE_CONSTRAINTS: Final = PREFIX + "podset-slice-required-topology-constraints"
GROUP_NAME: Final = PREFIX + "podset-group-name"

TOPOLOGY_ANNOTATIONS: Final = (
    REQUIRED,
    PREFERRED,
    UNCONSTRAINED,
    SLICE_REQUIRED,
    SLICE_SIZE,
    SLICE_CONSTRAINTS,
    GROUP_NAME,
)

# k8s.io/apimachinery validation.IsQualifiedName: [prefix/]name, name <= 63 chars.
_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_PREFIX = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_GO_BOOLS: Final = {"1", "t", "T", "TRUE", "true", "True", "0", "f", "F", "FALSE", "false", "False"}


def _label_name_problem(value: str) -> str | None:
    """``metavalidation.ValidateLabelName`` (IsQualifiedName) in one line, or None."""
    prefix, _, name = value.rpartition("/")
    if "/" in value and (not prefix or len(prefix) > 253 or not _PREFIX.match(prefix)):
        return f"{value!r} has an invalid prefix (a DNS subdomain is expected before '/')"
    if not name or len(name) > 63 or not _NAME.match(name):
        return f"{value!r} is not a qualified name (<= 63 alphanumerics, '-', '_', '.')"
    return None


def _int32(text: str) -> int | None:
    try:
        value = int(text.strip(), 10) if text.strip() == text else None
    except ValueError:
        return None
    return value if value is not None and -(2**31) <= value < 2**31 else None


@dataclass(frozen=True)
class TopologyRequest:
    """What a pod template asks of TAS (``None`` fields: not asked)."""

    required: str | None = None
    preferred: str | None = None
    unconstrained: bool = False
    slice_level: str | None = None
    slice_size: int | None = None

    @property
    def level(self) -> str | None:
        return self.required or self.preferred

    @property
    def asked(self) -> bool:
        return bool(self.required or self.preferred or self.unconstrained or self.slice_level)


def request_of(annotations: Mapping[str, str | Unknown]) -> TopologyRequest:
    """The request the annotations make (values Kueue would refuse are left out)."""

    def text(key: str) -> str | None:
        value = annotations.get(key)
        return value if isinstance(value, str) else None

    size = text(SLICE_SIZE)
    unconstrained = text(UNCONSTRAINED)
    return TopologyRequest(
        required=text(REQUIRED),
        preferred=text(PREFERRED),
        unconstrained=unconstrained is not None
        and unconstrained in _GO_BOOLS
        and unconstrained.lower() in ("1", "t", "true"),
        slice_level=text(SLICE_REQUIRED),
        slice_size=_int32(size) if size is not None else None,
    )


def webhook_problems(annotations: Mapping[str, str | Unknown], count: int | None) -> list[str]:
    """``ValidateTASPodSetRequest`` + ``ValidateSliceSizeAnnotationUpperBound``: one line per error
    (``count``: the pod set's pod count, None when not known)."""
    found = {k: v for k, v in annotations.items() if k in TOPOLOGY_ANNOTATIONS}
    values = {k: v for k, v in found.items() if isinstance(v, str)}
    problems: list[str] = []
    modes = [k for k in (REQUIRED, PREFERRED, UNCONSTRAINED) if k in found]
    if len(modes) > 1:
        problems.append(
            f"must not contain more than one topology annotation: [{REQUIRED}, {PREFERRED}, {UNCONSTRAINED}]"
        )
    for key in (REQUIRED, PREFERRED, SLICE_REQUIRED):
        if key in values and (why := _label_name_problem(values[key])) is not None:
            problems.append(f"{key}: {why}")
    if GROUP_NAME in found:
        group = values.get(GROUP_NAME)
        if group is not None and group.isdigit():
            problems.append(f"{GROUP_NAME}: {group!r} must not be a number")
        if SLICE_SIZE in found:
            problems.append(f"{GROUP_NAME}: may not be set when '{SLICE_SIZE}' is specified")
        if SLICE_REQUIRED in found:
            problems.append(f"{GROUP_NAME}: may not be set when '{SLICE_REQUIRED}' is specified")
        if PREFERRED not in found and REQUIRED not in found:
            problems.append(
                f"{GROUP_NAME}: may not be set when neither '{PREFERRED}' nor '{REQUIRED}' is specified"
            )
    if UNCONSTRAINED in values and values[UNCONSTRAINED] not in _GO_BOOLS:
        problems.append(f"{UNCONSTRAINED}: {values[UNCONSTRAINED]!r} must be a boolean value")
    size: int | None = None
    if SLICE_SIZE in values:
        size = _int32(values[SLICE_SIZE])
        if size is None:
            problems.append(f"{SLICE_SIZE}: {values[SLICE_SIZE]!r} must be a numeric value")
        elif size < 1:
            problems.append(f"{SLICE_SIZE}: {values[SLICE_SIZE]!r} must be greater than or equal to 1")
    if SLICE_REQUIRED in found and SLICE_SIZE not in found:
        problems.append(f"{SLICE_SIZE}: must be set when '{SLICE_REQUIRED}' is specified")
    if SLICE_REQUIRED not in found and SLICE_SIZE in found:
        problems.append(f"{SLICE_SIZE}: may not be set when '{SLICE_REQUIRED}' is not specified")
    problems += _constraints_problems(found, values)
    if count is not None and size is not None and size > count:
        problems.append(f"{SLICE_SIZE}: {size} must not be greater than pod set count {count}")
    return problems


def _constraints_problems(found: Mapping[str, object], values: Mapping[str, str]) -> list[str]:
    """``validateSliceRequiredTopologyConstraintsAnnotation`` (gate on: Kueue 0.19's default)."""
    if SLICE_CONSTRAINTS not in found:
        return []
    problems = [
        f"{SLICE_CONSTRAINTS}: may not be set when '{other}' is specified"
        for other in (SLICE_REQUIRED, SLICE_SIZE)
        if other in found
    ]
    if GROUP_NAME in found:
        problems.append(f"{GROUP_NAME}: may not be set when '{SLICE_CONSTRAINTS}' is specified")
    raw = values.get(SLICE_CONSTRAINTS)
    if raw is None:
        return problems
    try:
        layers = json.loads(raw)
    except ValueError as error:
        return [*problems, f"{SLICE_CONSTRAINTS}: must be a valid JSON array: {error}"]
    if not isinstance(layers, list) or not 1 <= len(layers) <= 3:
        return [*problems, f"{SLICE_CONSTRAINTS}: topology constraints must contain between 1 and 3 entries"]
    sizes: list[int] = []
    seen: dict[str, int] = {}
    for index, layer in enumerate(layers):
        topology = layer.get("topology") if isinstance(layer, dict) else None
        size = layer.get("size") if isinstance(layer, dict) else None
        if not isinstance(topology, str) or (why := _label_name_problem(topology)) is not None:
            problems.append(
                f"{SLICE_CONSTRAINTS}[{index}].topology: {why if isinstance(topology, str) else 'missing'}"
            )
        elif topology in seen:
            problems.append(
                f"{SLICE_CONSTRAINTS}[{index}].topology: duplicate {topology} (also at index {seen[topology]})"
            )
        else:
            seen[topology] = index
        if not isinstance(size, int) or isinstance(size, bool) or size < 1:
            problems.append(f"{SLICE_CONSTRAINTS}[{index}].size: must be greater than or equal to 1")
            size = 0
        sizes.append(size)
    for index in range(len(sizes) - 1):
        above, below = sizes[index], sizes[index + 1]
        if below > 0 and above % below != 0:
            problems.append(
                f"{SLICE_CONSTRAINTS}[{index + 1}].size: {below} must evenly divide the parent layer size {above}"
            )
    return problems


def level_problems(request: TopologyRequest, levels: Sequence[str]) -> list[str]:
    """``findTopologyAssignment``'s refusals for a Topology with ``levels`` (Kueue's own words)."""
    problems: list[str] = []
    level = request.level
    if level is not None and level not in levels:
        problems.append(f"no requested topology level: {level}")
    slice_level = request.slice_level
    if slice_level is not None:
        if slice_level not in levels:
            problems.append(f"no requested topology level for slices: {slice_level}")
        elif level is not None and level in levels and levels.index(level) > levels.index(slice_level):
            problems.append(f"podset slice topology {slice_level} is above the podset topology {level}")
    return problems
