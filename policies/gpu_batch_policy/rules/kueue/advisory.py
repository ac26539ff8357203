"""Advisories: configurations that work but defeat the purpose of queueing.

* "Infinite" GPU quota (the upstream samples write ``nominalQuota: 10000 # infinite quotas``) is
  safe only behind an admission check that asks for real capacity (ProvisioningRequest); without
  one Kueue admits gangs whose pods then sit Pending (anchors.md §4 failure mode 6: "Kueue
  doesn't check this; the admin must", kueue#2665).
* WorkloadPriorityClasses only order the queue unless some ClusterQueue has a preemption policy
  other than Never (kueue.md §2 ``preemption`` defaults); "prod preempts dev" needs one.
* ``namespaceSelector: {}`` admits every namespace (kueue.md §2): fine for a sandbox, a tenancy
  hole in production.  Driven by the policy config flag ``strictTenancy``; when unset, a stack
  named ``prod``/``production``/``prod-*`` (``PULUMI_STACK``, set by the engine) is strict.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import pulumi
from pulumi_policy import EnforcementLevel, Policy, PolicyConfigSchema

from ...facts.model import ClusterQueue, StackModel
from ...facts.model.kueue import preempts
from ...primitives.values import Unknown, fmt_num
from ..kit.builders import stack_policy
from ..kit.report import Reporter, config_value

DEFAULT_INFINITE_GPU_QUOTA = 1_000_000
DEFAULT_GPU_RESOURCES = ["nvidia.com/gpu"]


def _checks_for_flavor(cq: ClusterQueue, flavor: str) -> list[str]:
    return [
        ref.name
        for ref in cq.admission_checks
        if isinstance(ref.name, str) and (not ref.on_flavors or flavor in ref.on_flavors)
    ]


def check_infinite_quota(model: StackModel, reporter: Reporter, config: Mapping[str, Any]) -> None:
    threshold = config_value(config, "infiniteGpuQuota", DEFAULT_INFINITE_GPU_QUOTA)
    gpu_resources = list(config_value(config, "gpuResources", DEFAULT_GPU_RESOURCES))
    for cq in model.cluster_queues():
        for flavor in cq.flavors():
            if not isinstance(flavor.name, str):
                continue
            for res in flavor.resources:
                if res.name not in gpu_resources:
                    continue
                q = res.nominal_quota
                if q.unknown:
                    reporter.cannot_check(cq, f"{res.path}.nominalQuota is unknown until apply")
                    continue
                if q.value is None or q.value < threshold:
                    continue
                if any(isinstance(r.name, Unknown) for r in cq.admission_checks):
                    reporter.cannot_check(cq, "admission check names are unknown until apply")
                    continue
                if not _checks_for_flavor(cq, flavor.name):
                    reporter.violation(
                        cq,
                        f"flavor '{flavor.name}' has an effectively infinite {res.name} quota ({q}) and no "
                        "admission check, so Kueue admits gangs the cluster cannot run (pods stay Pending)",
                        f"set nominalQuota to the GPUs the flavor's pools really have (threshold "
                        f"{fmt_num(threshold)}), or add a ProvisioningRequest admission check",
                    )


def check_priority_without_preemption(
    model: StackModel, reporter: Reporter, _config: Mapping[str, Any]
) -> None:
    classes = model.workload_priority_classes()
    if not classes:
        return
    verdicts = [preempts(cq) for cq in model.cluster_queues()]
    if any(v is True for v in verdicts):
        return
    if any(v is None for v in verdicts):
        reporter.cannot_check(classes[0], "a ClusterQueue's preemption policy is unknown until apply")
        return
    names = ", ".join(sorted(c.name for c in classes))
    reporter.violation(
        classes[0],
        f"WorkloadPriorityClasses ({names}) are declared but no ClusterQueue has a preemption policy "
        "other than Never, so priorities only reorder the queue and never preempt",
        "set `preemption.withinClusterQueue: LowerPriority` (and reclaimWithinCohort for cohorts) on "
        "the ClusterQueues that should let high priority preempt",
    )


def _stack_name() -> str:
    name = os.environ.get("PULUMI_STACK", "")
    if name:
        return name
    try:
        return pulumi.get_stack()
    except Exception:  # no Pulumi runtime configured (direct calls)
        return ""


def is_production_stack(name: str) -> bool:
    short = name.rsplit("/", 1)[-1].lower()
    return short in {"prod", "production"} or short.startswith("prod-")


def check_open_namespace_selector(model: StackModel, reporter: Reporter, config: Mapping[str, Any]) -> None:
    strict = config_value(config, "strictTenancy", None)
    if strict is None:
        strict = is_production_stack(_stack_name())
    if not strict:
        return
    for cq in model.cluster_queues():
        selector = cq.namespace_selector
        if isinstance(selector, Unknown):
            reporter.cannot_check(cq, "spec.namespaceSelector is unknown until apply")
            continue
        if (
            isinstance(selector, dict)
            and not selector.get("matchLabels")
            and not selector.get("matchExpressions")
        ):
            reporter.violation(
                cq,
                "namespaceSelector {} admits workloads from every namespace, in a stack with strict tenancy",
                "select the owning teams' namespaces, e.g. "
                "`namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: team-a}}`",
            )


POLICIES: list[Policy] = [
    stack_policy(
        "kueue-infinite-quota-without-admission-check",
        "An effectively infinite GPU quota should sit behind an admission check (ProvisioningRequest).",
        check_infinite_quota,
        enforcement_level=EnforcementLevel.ADVISORY,
        config_schema=PolicyConfigSchema(
            properties={
                "infiniteGpuQuota": {
                    "type": "number",
                    "exclusiveMinimum": 0,
                    "default": DEFAULT_INFINITE_GPU_QUOTA,
                    "description": "nominalQuota at or above which a GPU quota counts as infinite",
                },
                "gpuResources": {
                    "type": "array",
                    "items": {"type": "string"},
                    "default": DEFAULT_GPU_RESOURCES,
                    "description": "resource names that are GPUs",
                },
            }
        ),
    ),
    stack_policy(
        "kueue-priority-classes-without-preemption",
        "WorkloadPriorityClasses need a ClusterQueue whose preemption policy can act on them.",
        check_priority_without_preemption,
        enforcement_level=EnforcementLevel.ADVISORY,
    ),
    stack_policy(
        "kueue-open-namespace-selector",
        "With strict tenancy (production), a ClusterQueue must not admit every namespace (namespaceSelector: {}).",
        check_open_namespace_selector,
        enforcement_level=EnforcementLevel.ADVISORY,
        config_schema=PolicyConfigSchema(
            properties={
                "strictTenancy": {
                    "type": "boolean",
                    "description": "flag namespaceSelector {}; unset = true only for stacks named prod*",
                }
            }
        ),
    ),
]
