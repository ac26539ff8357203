"""LeaderWorkerSet's validating webhook at v0.9.0, before deploy.

The stack installs no LWS controller, so the version judged is the one Kueue v0.19.2's ``go.mod``
pins: ``sigs.k8s.io/lws v0.9.0``.  Source: kubernetes-sigs/lws v0.9.0
``pkg/webhooks/leaderworkerset_webhook.go`` ``ValidateCreate`` -> ``generalValidate``, on the object
after the CRD's defaults (``replicas`` 1, ``size`` 1, ``partition`` 0, ``maxUnavailable`` 1,
``maxSurge`` 0; ``api/leaderworkerset/v1/leaderworkerset_types.go``) and ``Default`` (a
``RollingUpdate`` strategy without ``rollingUpdateConfiguration`` gets 1/0/0):

* ``metadata.name`` is a DNS-1035 label (it names the headless Service; ``NameIsDNS1035Label``);
* ``replicas`` >= 0, ``leaderWorkerTemplate.size`` >= 1, ``replicas * size`` fits int32;
* ``maxUnavailable`` and ``maxSurge``: a non-negative integer or a percent (``validatePositiveIntOrPercent``)
  of at most 100% (``isNotMoreThan100Percent``); ``partition`` >= 0 (``validateNonnegativeField``);
  scaled to ``replicas`` (``intstr.GetScaledValueFromIntOrPercent``: down for maxUnavailable, up for
  maxSurge) they are not both 0 unless ``replicas`` is 0;
* ``validateUpdateSubGroupPolicy``: ``subGroupSize`` >= 1, ``size`` or ``size - 1`` divisible by it,
  not larger than ``size``, and ``size - 1`` divisible by it with type ``LeaderExcluded``;
* without a ``subGroupPolicy``, the annotation ``leaderworkerset.sigs.k8s.io/subgroup-exclusive-topology``
  is refused.

Enums (start policy, restart policy, rollout strategy type) are the CRD schema's, not the webhook's.
``pkg/webhooks/pod_webhook.go`` ``validate`` accepts every pod at v0.9.0; its defaulter labels the
pods LWS creates.  ``disaggregatedset_webhook.go`` (the DisaggregatedSet kind) is not ported.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from pulumi_policy import Policy

from ...facts.model.base import KubeObject
from ...primitives.k8s_names import dns1035_label_error
from .port import (
    ACCEPTS_DELETE,
    MAX_INT32,
    NOT_A_CHECK,
    REGISTERS,
    UPDATE_ONLY,
    Finding,
    Judged,
    Problem,
    Unsure,
    Upstream,
    get,
    known,
    name_of,
    number,
    percent_error,
    port_policy,
    text,
)

UPSTREAM = Upstream(
    project="LeaderWorkerSet",
    repo="kubernetes-sigs/lws",
    ref="v0.9.0",
    version="v0.9.0",
    why="the version Kueue v0.19.2's go.mod pins; the stack installs no LWS controller",
    files=("pkg/webhooks/leaderworkerset_webhook.go",),
)
GROUP = "leaderworkerset.x-k8s.io"
EXCLUSIVE_SUBGROUP = "leaderworkerset.sigs.k8s.io/subgroup-exclusive-topology"
ROLLOUT = "spec.rolloutStrategy.rollingUpdateConfiguration"


def int_or_percent_problems(value: Any, where: str) -> list[Problem]:
    """``validatePositiveIntOrPercent`` and ``isNotMoreThan100Percent``."""
    if isinstance(value, str):
        error = percent_error(value)
        if error is not None:
            return [(f"{where} '{value}' {error}", "use a whole number or a percent such as 25%")]
        if int(value[:-1]) > 100:
            return [(f"{where} '{value}' must not be greater than 100%", "use at most 100%")]
        return []
    count = number({"v": value}, "v")
    if count is not None and count < 0:
        return [(f"{where} {count} must be greater than or equal to 0", "use a value >= 0")]
    return []


def scaled(value: Any, total: int, *, round_up: bool) -> int | None:
    """``intstr.GetScaledValueFromIntOrPercent``; None when it fails ("invalid value")."""
    if isinstance(value, str):
        if percent_error(value) is not None:
            return None
        exact = int(value[:-1]) * total / 100
        return math.ceil(exact) if round_up else math.floor(exact)
    return number({"v": value}, "v", default=0)


def _subgroup_problems(size: int, policy: dict[str, Any]) -> list[Problem]:
    """``validateUpdateSubGroupPolicy``."""
    where = "spec.leaderWorkerTemplate.subGroupPolicy.subGroupSize"
    sub = number(policy, "subGroupSize")
    if sub is None:
        # upstream dereferences the pointer: the request fails (a recovered panic) either way
        return [(f"{where} is unset while subGroupPolicy is set", "set subGroupSize or drop subGroupPolicy")]
    if sub < 1:
        # upstream goes on to divide by it (a Go panic on 0, a refusal either way)
        return [(f"{where} {sub} must be equal or greater than 1", "use a subGroupSize >= 1")]
    problems: list[Problem] = []
    if size % sub != 0 and (size - 1) % sub != 0:
        problems.append(
            (f"{where} {sub} divides neither size {size} nor size - 1", "pick a divisor of size or size - 1")
        )
    if size < sub:
        problems.append((f"{where} {sub} is larger than size {size}", "lower subGroupSize"))
    if text(policy, "subGroupPolicyType") == "LeaderExcluded" and (size - 1) % sub != 0:
        problems.append(
            (
                f"{where} {sub} does not divide size - 1 = {size - 1}, which LeaderExcluded needs",
                "pick a divisor of size - 1",
            )
        )
    return problems


def _rollout_problems(spec: Any, replicas: int) -> list[Problem]:
    config = get(spec, "rolloutStrategy", "rollingUpdateConfiguration")
    if config is None:
        strategy = text(spec, "rolloutStrategy", "type") or "RollingUpdate"
        if strategy != "RollingUpdate":
            return []
        config = {}
    if not isinstance(config, dict):
        return []
    unavailable = known(config.get("maxUnavailable", 1), f"{ROLLOUT}.maxUnavailable")
    surge = known(config.get("maxSurge", 0), f"{ROLLOUT}.maxSurge")
    problems = int_or_percent_problems(unavailable, f"{ROLLOUT}.maxUnavailable")
    problems += int_or_percent_problems(surge, f"{ROLLOUT}.maxSurge")
    partition = number(config, "partition", default=0)
    if partition is not None and partition < 0:
        problems.append(
            (f"{ROLLOUT}.partition {partition} must be greater than or equal to 0", "use a partition >= 0")
        )
    low = scaled(unavailable, replicas, round_up=False)
    high = scaled(surge, replicas, round_up=True)
    if low is None or high is None:
        return problems  # the "invalid value" refusal is the percent error above
    if low == 0 and high == 0 and replicas != 0:
        problems.append(
            (
                f"{ROLLOUT}.maxUnavailable must not be 0 when maxSurge is 0 (both scale to 0 of {replicas} replicas)",
                "allow maxUnavailable >= 1 or maxSurge >= 1",
            )
        )
    return problems


def lws_problems(obj: KubeObject) -> list[Finding]:
    """``generalValidate`` on a LeaderWorkerSet after its defaults."""
    spec = get(obj.props, "spec")
    if not isinstance(spec, dict):
        return []
    problems: list[Finding] = []
    name = name_of(obj)
    if name is None:
        problems.append(Unsure("metadata.name (generated at apply)"))
    else:
        error = dns1035_label_error(name)
        if error is not None:
            problems.append((f"metadata.name '{name}' {error} (it names the headless Service)", "rename it"))
    replicas = number(spec, "replicas", default=1)
    size = number(spec, "leaderWorkerTemplate", "size", default=1)
    replicas = 1 if replicas is None else replicas
    size = 1 if size is None else size
    if replicas < 0:
        problems.append((f"spec.replicas {replicas} must be equal or greater than 0", "use replicas >= 0"))
    if size < 1:
        problems.append(
            (f"spec.leaderWorkerTemplate.size {size} must be equal or greater than 1", "use size >= 1")
        )
    if replicas * size > MAX_INT32:
        problems.append(
            (f"spec.replicas {replicas} x size {size} exceeds {MAX_INT32}", "lower replicas or size")
        )
    problems += _rollout_problems(spec, replicas)
    policy = get(spec, "leaderWorkerTemplate", "subGroupPolicy")
    if isinstance(policy, dict):
        problems += _subgroup_problems(size, policy)
    elif EXCLUSIVE_SUBGROUP in obj.annotations:
        problems.append(
            (
                f"annotation {EXCLUSIVE_SUBGROUP} is set without subGroupPolicy.subGroupSize",
                "set spec.leaderWorkerTemplate.subGroupPolicy.subGroupSize or drop the annotation",
            )
        )
    return problems


COVERAGE: Mapping[str, str] = {
    "SetupLeaderWorkerSetWebhook": REGISTERS,
    "Default": NOT_A_CHECK
    + "defaulting; its rollout defaults are applied before the checks (_rollout_problems)",
    "ValidateCreate": "lws_problems",
    "ValidateUpdate": UPDATE_ONLY,
    "ValidateDelete": ACCEPTS_DELETE,
    "generalValidate": "lws_problems",
    "validatePositiveIntOrPercent": "int_or_percent_problems",
    "isNotMoreThan100Percent": "int_or_percent_problems",
    "getPercentValue": "int_or_percent_problems",
    "validateNonnegativeField": "_rollout_problems",
    "validateUpdateSubGroupPolicy": "_subgroup_problems",
}
"""Every function of ``pkg/webhooks/leaderworkerset_webhook.go`` at v0.9.0."""


POLICIES: list[Policy] = [
    port_policy(
        "lws-webhook",
        "A LeaderWorkerSet passes LWS v0.9.0's validating webhook (the version Kueue v0.19.2 pins): a "
        "DNS-1035 name, replicas and size bounds, rollout maxUnavailable/maxSurge/partition, subgroup sizes.",
        UPSTREAM,
        GROUP,
        Judged(("LeaderWorkerSet",), lws_problems, "pkg/webhooks/leaderworkerset_webhook.go generalValidate"),
    ),
]
