"""``kai-batch-min-member``: a ``kai.scheduler/batch-min-member`` annotation KAI can act on.

KAI v0.17.0's podgrouper reads the annotation (``pkg/podgrouper/podgrouper/plugins/constants``
``MinMemberOverrideKey``) for pods it schedules (``schedulerName: kai-scheduler``):

* on a batch Job, as the PodGroup's minMember, unparsed values failing the grouping
  (``plugins/job/job_grouper.go`` ``calcMinMember``: ``strconv.ParseInt`` error -> no PodGroup);
* on a JobSet, as the PodGroup's minSubGroup (an integer >= 1, else an error), and on a
  replicatedJob's Job template as each replica's minMember (an integer >= 1, else an error; a value
  above ``parallelism`` is applied anyway) (``plugins/jobset/jobset_grouper.go``
  ``computePodGroupMinSubGroup``, ``singleReplicaSubGroupMinMember``).

A minMember above the pods that can ever be alive never becomes ready: the scheduler skips a pod
set with fewer alive pods than its minAvailable (``pkg/scheduler/api/podgroup_info/subgroup_info/
podset.go`` ``IsReadyForScheduling``, filtered in ``pkg/scheduler/actions/utils/input_jobs.go``),
so the job waits forever; an unparsable value means the podgrouper errors and the pods are never
grouped.  Both are mandatory.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import Policy

from ...facts.model import StackModel
from ...facts.model.base import KubeObject
from ...facts.workload_kinds.batch_job import KAI_MIN_MEMBER
from ...primitives.values import Unknown, as_int, as_str, dig
from ..kit.builders import stack_policy
from ..kit.report import Reporter

KAI_SCHEDULER = "kai-scheduler"


def _parse(raw: Any) -> int | None:
    try:
        return int(str(raw).strip())
    except ValueError:
        return None


def _pods_alive(job_spec: Any) -> int | None:
    """Pods of one Job alive at once: ``parallelism`` (default 1), at most ``completions``."""
    parallelism = as_int(dig(job_spec, "parallelism"))
    completions = as_int(dig(job_spec, "completions"))
    if isinstance(parallelism, Unknown) or isinstance(completions, Unknown):
        return None
    alive = 1 if parallelism is None else parallelism
    return alive if completions is None else min(alive, completions)


def _judge(
    reporter: Reporter, obj: KubeObject, where: str, raw: Any, *, alive: int | None, floor: int | None
) -> None:
    """``floor`` None: any integer parses (a Job); 1 for a JobSet's values."""
    value = _parse(raw)
    if value is None or (floor is not None and value < floor):
        reporter.violation(
            obj,
            f"{where} {KAI_MIN_MEMBER}='{raw}' is not an integer"
            + (f" >= {floor}" if floor else "")
            + "; KAI's podgrouper fails on it "
            "and never groups the pods, so they are never scheduled",
            f'set {KAI_MIN_MEMBER} to a whole number of pods, e.g. "2"',
        )
    elif alive is not None and value > alive:
        reporter.violation(
            obj,
            f"{where} {KAI_MIN_MEMBER}={value} asks KAI to start {value} pods together, but only {alive} "
            "can ever be alive at once (parallelism/completions), so KAI never finds the gang ready and "
            "it waits forever",
            f"lower {KAI_MIN_MEMBER} to at most {alive}, or raise parallelism",
        )


def _on_kai(template: Any) -> bool:
    return as_str(dig(template, "spec", "schedulerName")) == KAI_SCHEDULER


def check_batch_min_member(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    for obj in model.objects:
        if (obj.group, obj.kind) == ("batch", "Job"):
            raw = obj.annotations.get(KAI_MIN_MEMBER)
            if raw is not None and not isinstance(raw, Unknown) and _on_kai(dig(obj.spec, "template")):
                _judge(reporter, obj, "its", raw, alive=_pods_alive(obj.spec), floor=None)
        elif (obj.group, obj.kind) == ("jobset.x-k8s.io", "JobSet"):
            jobs = dig(obj.spec, "replicatedJobs")
            jobs = jobs if isinstance(jobs, list) else []
            if not any(_on_kai(dig(j, "template", "spec", "template")) for j in jobs):
                continue
            raw = obj.annotations.get(KAI_MIN_MEMBER)
            if raw is not None and not isinstance(raw, Unknown):
                _judge(reporter, obj, "its", raw, alive=None, floor=1)
            for index, job in enumerate(jobs):
                raw = dig(job, "template", "metadata", "annotations", KAI_MIN_MEMBER)
                if raw is not None and not isinstance(raw, Unknown):
                    where = f"spec.replicatedJobs[{index}].template's"
                    _judge(
                        reporter, obj, where, raw, alive=_pods_alive(dig(job, "template", "spec")), floor=1
                    )


POLICIES: list[Policy] = [
    stack_policy(
        "kai-batch-min-member",
        "A kai.scheduler/batch-min-member annotation on a KAI-scheduled Job or JobSet is a whole number KAI's "
        "podgrouper accepts and no larger than the pods that can be alive at once.",
        check_batch_min_member,
    ),
]
