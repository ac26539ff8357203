"""The conditions of the known-bug records, each evaluated on the pack's model of any program.

Each returns the objects that meet it (empty: the program cannot hit the bug as declared).
Objects whose deciding fields are unknown until apply are left out.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..model import StackModel
from ..model.base import KubeObject
from ..model.kueue import ParametersRef, preempts

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
# kueue v0.19.2 pkg/controller/admissionchecks/provisioning/controller.go: objNameHashLength = 5,
# objNameMaxPrefixLength = 252 - objNameHashLength; a longer "<workload>-<check>-<attempt>" is cut.
PROVREQ_NAME_MAX = 252 - 5
# pkg/controller/jobframework/workload_names.go: "<lowercase kind>-<owner name>" cut to
# 253 - 1 - hashLength, then "-<hash of 5>" (ShortWorkloadNames is off by default in 0.19).
WORKLOAD_PREFIX_MAX, WORKLOAD_HASH = 253 - 1 - 5, 5
# ProvisioningRequestConfig retryStrategy.backoffLimitCount defaults to 3 (kueue v1beta2 API):
# attempts 1..4, one digit.
DEFAULT_ATTEMPTS = 4

Condition = Callable[[StackModel], list[KubeObject]]


def _queued(model: StackModel) -> list[KubeObject]:
    """Program objects submitted to a Kueue LocalQueue (the queue-name label)."""
    return [o for o in model.kube_objects() if isinstance(o.label(QUEUE_LABEL), str)]


def _provreq_checks(model: StackModel) -> dict[str, int]:
    """ProvisioningRequest AdmissionCheck name -> the most attempts its config allows."""
    configs = {c.name: c for c in model.provisioning_request_configs()}
    out: dict[str, int] = {}
    for check in model.admission_checks():
        if not check.is_provisioning_request:
            continue
        attempts = DEFAULT_ATTEMPTS
        ref = check.parameters
        name = ref.name if isinstance(ref, ParametersRef) else None
        config = configs.get(name) if isinstance(name, str) else None
        retry = (config.obj.spec or {}).get("retryStrategy") if config is not None else None
        if isinstance(retry, Mapping) and isinstance(retry.get("backoffLimitCount"), int | float):
            attempts = int(retry["backoffLimitCount"]) + 1
        out[check.name] = attempts
    return out


def provisioning_request_name_truncated(model: StackModel) -> list[KubeObject]:
    checks = _provreq_checks(model)
    if not checks:
        return []
    queue_checks: dict[tuple[str | None, str], list[str]] = {}
    by_cq = {cq.name: cq for cq in model.cluster_queues()}
    for lq in model.local_queues():
        cq = by_cq.get(lq.cluster_queue) if isinstance(lq.cluster_queue, str) else None
        if cq is None:
            continue
        names = [r.name for r in cq.admission_checks if isinstance(r.name, str) and r.name in checks]
        queue_checks[(lq.obj.namespace, lq.name)] = names
    hits = []
    for obj in _queued(model):
        for check in queue_checks.get((obj.namespace, str(obj.label(QUEUE_LABEL))), []):
            prefix = min(len(obj.kind) + 1 + len(obj.name), WORKLOAD_PREFIX_MAX)
            workload = prefix + 1 + WORKLOAD_HASH
            if workload + 1 + len(check) + 1 + len(str(checks[check])) > PROVREQ_NAME_MAX:
                hits.append(obj)
                break
    return hits


def queued_job_parallelism_over_completions(model: StackModel) -> list[KubeObject]:
    hits = []
    for obj in _queued(model):
        if obj.group != "batch" or obj.kind != "Job":
            continue
        spec: Any = obj.spec or {}
        parallelism, completions = spec.get("parallelism", 1), spec.get("completions")
        if (
            isinstance(parallelism, int | float)
            and isinstance(completions, int | float)
            and parallelism > completions
        ):
            hits.append(obj)
    return hits


def limitrange_in_queued_namespace(model: StackModel) -> list[KubeObject]:
    queued = {lq.obj.namespace for lq in model.local_queues()}
    return [
        o
        for o in model.kube_objects()
        if o.kind == "LimitRange" and o.group in ("", "core") and o.namespace in queued
    ]


def besteffortfifo_with_preemption(model: StackModel) -> list[KubeObject]:
    hits = []
    for cq in model.cluster_queues():
        strategy = (cq.obj.spec or {}).get("queueingStrategy", "BestEffortFIFO")
        if strategy == "BestEffortFIFO" and preempts(cq) is True:
            hits.append(cq.obj)
    return hits


CONDITIONS: Mapping[str, Condition] = {
    "provisioning-request-name-truncated": provisioning_request_name_truncated,
    "queued-job-parallelism-over-completions": queued_job_parallelism_over_completions,
    "limitrange-in-queued-namespace": limitrange_in_queued_namespace,
    "besteffortfifo-with-preemption": besteffortfifo_with_preemption,
}
