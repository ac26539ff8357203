"""A "slack" ClusterQueue, live: real Kueue judges the pack's ``kueue-clusterqueue-reachable``.

The rule passes a ClusterQueue that no namespace can submit to when a reachable peer of its cohort
can borrow its GPU quota (``facts/kueue_reach.lent_to``, from Kueue v0.19.2
``pkg/cache/scheduler/resource_node.go`` ``accumulateFromChild`` / ``localQuota`` and
``pkg/scheduler/flavorassigner/flavorassigner.go`` ``findFlavorForPodSets``), and flags it when none
can.  That is a port; here each case's objects go both to the pack and to Kueue v0.19.2's manager
(the ``kueue_cluster`` fixture), and a team's Job that needs the slack queue's GPUs is submitted
through the team's LocalQueue: where the pack says the slack quota is lent, Kueue admits the Job on
borrowed quota (the team queue's ``flavorsUsage`` shows it borrowed); where the pack flags the
slack queue, Kueue holds the Job.  A peer with ``borrowingLimit: 2`` borrows exactly that: its
2-GPU Job is admitted (Kueue v0.19.2 ``pkg/cache/scheduler/resource_node.go``
``potentialAvailable`` caps a node's borrowing at its limit).  The cases are the unit test's
(``tests/policies/rules/test_kueue_slack_queue.py``), built by the same object builders.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from tests.live.cluster import Cluster
from tests.live.test_kueue_admission import (
    KUEUE,
    NEVER_WINDOW,
    admitted,
    apply_all,
    pending_with,
    wait_admitted,
)
from tests.live.test_kueue_admission import workload_of as job_workload
from tests.policies.pack_harness import Res, run
from tests.policies.pack_harness import policy as get_policy
from tests.policies.pack_objects import cluster_queue, k8s, local_queue, resource_flavor, resource_group

RULE = "kueue-clusterqueue-reachable"
GPU = "nvidia.com/gpu"
SLACK_GPUS = 8.0
JOB_GPUS = 4  # more than the team queue's own 0, less than what the slack queue lends


def _case(n: int, *, team: dict[str, Any] | None = None, slack: dict[str, Any] | None = None) -> list[Res]:
    """Namespace, flavors, the team queue (0 GPUs of its own, in cohort ``live-slack-<n>``), the
    slack queue (8 GPUs, every namespace, no LocalQueue) and the team's LocalQueue, with
    ``team``/``slack`` overriding the queues' defaults."""
    ns, cohort = f"live-slack-{n}", f"live-slack-{n}"
    team_spec: dict[str, Any] = {
        "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": ns}},
        "cohortName": cohort,
        "resourceGroups": [resource_group("live-slack-gpu", {GPU: 0.0})],
        **(team or {}),
    }
    slack_spec: dict[str, Any] = {
        "namespaceSelector": {},
        "cohortName": cohort,
        "resourceGroups": [resource_group("live-slack-gpu", {GPU: SLACK_GPUS})],
        **(slack or {}),
    }
    if slack_spec["cohortName"] is None:
        del slack_spec["cohortName"]
    return [
        k8s("v1", "Namespace", ns),
        resource_flavor("live-slack-gpu"),
        resource_flavor("live-slack-other"),
        cluster_queue(f"{ns}-team", **team_spec),
        cluster_queue(f"{ns}-slack", **slack_spec),
        local_queue("team", namespace=ns, target=f"{ns}-team"),
    ]


CASES: dict[str, tuple[bool, int, list[Res]]] = {
    # name: (the pack passes the slack queue, the GPUs the team's Job asks for, the objects)
    "lent to a reachable peer": (True, JOB_GPUS, _case(1)),
    "lent up to the peer's borrowingLimit": (
        True,
        2,
        _case(
            2,
            team={
                "resourceGroups": [
                    resource_group("live-slack-gpu", {GPU: 0.0}, nvidia_com_gpu={"borrowingLimit": 2})
                ]
            },
        ),
    ),
    "lendingLimit 0": (
        False,
        JOB_GPUS,
        _case(
            3,
            slack={
                "resourceGroups": [
                    resource_group("live-slack-gpu", {GPU: SLACK_GPUS}, nvidia_com_gpu={"lendingLimit": 0})
                ]
            },
        ),
    ),
    "peer's borrowingLimit 0": (
        False,
        JOB_GPUS,
        _case(
            4,
            team={
                "resourceGroups": [
                    resource_group("live-slack-gpu", {GPU: 0.0}, nvidia_com_gpu={"borrowingLimit": 0})
                ]
            },
        ),
    ),
    "peer lacks the flavor": (
        False,
        JOB_GPUS,
        _case(5, team={"resourceGroups": [resource_group("live-slack-other", {GPU: 0.0})]}),
    ),
    "no cohort": (False, JOB_GPUS, _case(6, slack={"cohortName": None})),
}


def _pack_flags_slack(resources: list[Res]) -> bool:
    """Whether the pack's rule flags the case's slack queue (closed world: these are all the objects)."""
    result = run(get_policy(RULE), resources, {"closedWorld": True})
    assert result.cannot_check is None, result.cannot_check
    slack = next(
        r.props["metadata"]["name"] for r in resources if r.props["metadata"]["name"].endswith("-slack")
    )
    return any(f"'{slack}'" in m for m in result.messages)


def _job(ns: str, gpus: int) -> dict[str, Any]:
    """A Job asking only for GPUs (the queues cover nothing else)."""
    resources = {"requests": {GPU: gpus}, "limits": {GPU: gpus}}
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "train", "namespace": ns, "labels": {"kueue.x-k8s.io/queue-name": "team"}},
        "spec": {
            "suspend": True,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "main", "image": "busybox:1.36", "resources": resources}],
                }
            },
        },
    }


def _borrowed(cluster: Cluster, cq: str) -> Any:
    """The ClusterQueue's ``status.flavorsUsage`` GPUs borrowed (Kueue's own bookkeeping)."""
    status = (cluster.get(KUEUE, "ClusterQueue", cq) or {}).get("status") or {}
    for flavor in status.get("flavorsUsage") or []:
        for res in flavor.get("resources") or []:
            if res.get("name") == GPU:
                return res.get("borrowed")
    return None


@pytest.mark.parametrize("case", CASES)
def test_kueue_admits_on_slack_quota_exactly_where_the_pack_says_it_is_lent(
    kueue_cluster: Cluster, case: str
) -> None:
    lent, gpus, resources = CASES[case]
    # the pack's verdict is the case's premise: it passes the slack queue only where it is lent
    assert _pack_flags_slack(resources) is (not lent), case
    cluster = kueue_cluster
    apply_all(cluster, [r.props for r in resources])
    ns = resources[0].props["metadata"]["name"]
    apply_all(cluster, [_job(ns, gpus)])
    if lent:
        wl = wait_admitted(cluster, ns, "train")
        (assignment,) = wl["status"]["admission"]["podSetAssignments"]
        assert wl["status"]["admission"]["clusterQueue"] == f"{ns}-team"
        assert assignment["flavors"][GPU] == "live-slack-gpu"
        cluster.wait_for(
            lambda: _borrowed(cluster, f"{ns}-team") in (gpus, str(gpus)), 30, "the borrowed GPUs"
        )
        return
    reserved = pending_with(cluster, ns, "train", "insufficient")
    assert reserved["reason"] == "Pending", reserved
    deadline = time.monotonic() + NEVER_WINDOW / 2
    while time.monotonic() < deadline:
        assert not admitted(job_workload(cluster, ns, "train"))
        time.sleep(1)
