"""Issue 39, "every stack runs its first job": the five checks of a stack that cannot run one.

Each is run on the gpudirect / prod stacks as the real program renders them (clean), then on one
mutation that breaks exactly what the rule judges (caught), and on the upstream fix (clean again):

- ``kueue-tas-nodes-exist``: kueue v0.19.2 ``TASFlavorSnapshot.findLevelWithFitDomains`` ("no
  topology domains at level") -- a TAS flavor on a pool at zero nodes, without a ProvisioningRequest
  check, admits nothing;
- ``kueue-clusterqueue-reachable``: ``metav1.LabelSelectorAsSelector(nil)`` is ``labels.Nothing()``
  (``pkg/cache/scheduler/clusterqueue.go`` ``updateClusterQueue``);
- ``gke-gpudirect-firewall``: cluster-toolkit ``modules/network/vpc`` ``allow_internal``;
- ``gke-gpudirect-nccl-env``: container-engine-accelerators' ``nccl-env-profile.sh`` /
  ``set_nccl_env.sh``;
- ``kueue-cpu-podset-on-queued-gpu`` (advisory): ``flavorassigner.findFlavorForPodSets`` plus the
  provisioning controller's ``requiredPodSets``.
"""

from __future__ import annotations

import functools
from typing import Any

from gpu_batch_policy.primitives.values import plain

from preview.report import _cluster_queue_rows, stack_model
from tests.gpudirect_workloads import ray_gang
from tests.policies.pack_harness import Res, run, run_together
from tests.policies.pack_harness import policy as get_policy
from tests.policies.pack_objects import DELETE, patch
from tests.stack_runner import config_value, shared_unless_edited

RULES = (
    "kueue-tas-nodes-exist",
    "kueue-clusterqueue-reachable",
    "gke-gpudirect-firewall",
    "gke-gpudirect-nccl-env",
    "kueue-cpu-podset-on-queued-gpu",
)
CLOSED = {"closedWorld": True}
POOL = "gcp:container/nodePool:NodePool"
FIREWALL = "gcp:compute/firewall:Firewall"
CQ = "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue"
LQ = "kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue"


@functools.cache
def _run(stack: str, workloads: str = "") -> tuple[Any, ...]:
    edits = {"gpu-batch:workloads": _WORKLOADS[workloads]} if workloads else None
    return tuple(shared_unless_edited(stack, edits).resources)


def resources(stack: str, workloads: str = "") -> list[Res]:
    return [Res(r.type, r.name, plain(r.inputs), r.urn) for r in _run(stack, workloads)]


def fired(found: list[Res], config: dict[str, Any] | None = None) -> dict[str, list[str]]:
    out = run_together([get_policy(name) for name in RULES], found, config)
    return {name: result.messages for name, result in out.items() if result.messages}


def _named(found: list[Res], type_: str, name: str) -> Res:
    hits = [
        r for r in found if r.type == type_ and (r.props.get("name") or r.props["metadata"]["name"]) == name
    ]
    assert len(hits) == 1, (type_, name, len(hits))
    return hits[0]


def _swap(found: list[Res], old: Res, new: Res | None) -> list[Res]:
    """``found`` with ``old`` replaced by ``new`` (dropped when None)."""
    out: list[Res] = []
    for r in found:
        if r is not old:
            out.append(r)
        elif new is not None:
            out.append(new)
    return out


def _head(cpu: str, memory: str = "8Gi") -> list[dict[str, Any]]:
    return [
        {
            "name": "etl",
            "kind": "RayJob",
            "team": "research",
            "scheduler": "kueue",
            "image": "rayproject/ray:2.46.0-gpu",
            "entrypoint": "python etl.py",
            "head": {"cpu": cpu, "memory": memory},
            "workerGroups": [{"groupName": "gpu", "replicas": 1, "cpu": "4", "memory": "16Gi", "gpu": 1}],
        }
    ]


_WORKLOADS: dict[str, Any] = {
    "gang": ray_gang(mode="preferred", level="block"),
    "big-head": _head("40"),
    "small-head": _head("2"),
    # gpudirect's training team: a 40-CPU head beside a topology-requesting GPU gang
    "big-head-training": [
        {**ray_gang(mode="required", level="block")[0], "head": {"cpu": "40", "memory": "8Gi"}}
    ],
}


def test_the_repo_stacks_pass_every_first_job_rule() -> None:
    assert fired(resources("gpudirect", "gang"), CLOSED) == {}
    assert fired(resources("prod", "small-head"), CLOSED) == {}


def test_a_tas_pool_at_zero_nodes_without_a_provisioning_check_is_caught_and_a_check_fixes_it() -> None:
    found = resources("gpudirect")
    pool = _named(found, POOL, "a3mega-tcpxo")
    assert pool.props["autoscaling"]["totalMinNodeCount"] == 4  # static, as cluster-toolkit
    empty = _swap(found, pool, patch(pool, "autoscaling.totalMinNodeCount", 0))
    got = fired(empty, CLOSED)
    assert set(got) == {"kueue-tas-nodes-exist"}, got
    assert (
        "h100-mega" in got["kueue-tas-nodes-exist"][0] and "a3mega-tcpxo" in got["kueue-tas-nodes-exist"][0]
    )
    # The other upstream way: a ProvisioningRequest check on that flavor.
    cq = _named(empty, CQ, "training-reserved")
    checked = patch(
        cq, "spec.admissionChecksStrategy", {"admissionChecks": [{"name": "dws", "onFlavors": ["h100-mega"]}]}
    )
    assert fired(_swap(empty, cq, checked), CLOSED) == {}
    # A check on another flavor only does not count.
    other = patch(
        cq, "spec.admissionChecksStrategy", {"admissionChecks": [{"name": "dws", "onFlavors": ["cpu"]}]}
    )
    assert set(fired(_swap(empty, cq, other), CLOSED)) == {"kueue-tas-nodes-exist"}


def test_an_unreachable_cluster_queue_is_caught_and_the_report_counts_it_as_zero() -> None:
    found = resources("gpudirect")
    cq = _named(found, CQ, "training-dws")
    lq = next(r for r in found if r.type == LQ and r.props["spec"]["clusterQueue"] == "training-dws")
    nil = _swap(found, cq, patch(cq, "spec.namespaceSelector", DELETE))
    got = fired(nil, CLOSED)
    assert set(got) == {"kueue-clusterqueue-reachable"}, got
    assert "selects no namespace" in got["kueue-clusterqueue-reachable"][0]
    orphan = _swap(found, lq, None)
    got = fired(orphan, CLOSED)
    assert (
        set(got) == {"kueue-clusterqueue-reachable"}
        and "no LocalQueue" in got["kueue-clusterqueue-reachable"][0]
    )
    # Open world, no LocalQueue in the stack at all: they may live elsewhere, so not a finding.
    none = [r for r in orphan if r.type != LQ]
    assert not run(get_policy("kueue-clusterqueue-reachable"), none).violations
    # The report: the unreachable queue's GPUs count as 0 (the reachable one keeps its quota).
    records = [
        r for r in _run("gpudirect") if r.type != LQ or r.inputs["spec"]["clusterQueue"] != "training-dws"
    ]
    rows = {(row[0], row[2]): row for row in _cluster_queue_rows(stack_model(records))}
    assert rows[("training-dws", "h200")][3] == "0" and "unreachable" in str(
        rows[("training-dws", "h200")][7]
    )
    assert rows[("training-reserved", "h100-mega")][3] == "32"


def test_a_gpudirect_network_without_its_firewall_rule_is_caught_and_roce_needs_none() -> None:
    found = resources("gpudirect")
    rules = [r for r in found if r.type == FIREWALL]
    # One internal-allow rule per gVNIC VPC (8 for TCPXO, net-0 for A3 Ultra); none on the RoCE VPC.
    assert sorted(r.props["network"] for r in rules) == sorted(
        [f"gpu-batch-train-gpunet-{i}" for i in range(8)] + ["gpu-batch-train-net-0"]
    )
    for rule in rules:
        assert rule.props["direction"] == "INGRESS" and len(rule.props["sourceRanges"]) == 1
        assert {a["protocol"] for a in rule.props["allows"]} == {"tcp", "udp", "icmp"}
    gone = next(r for r in rules if r.props["network"] == "gpu-batch-train-gpunet-3")
    got = fired(_swap(found, gone, None), CLOSED)
    assert set(got) == {"gke-gpudirect-firewall"}, got
    assert "gpu-batch-train-gpunet-3" in got["gke-gpudirect-firewall"][0]
    narrow = patch(gone, "sourceRanges", ["10.0.0.0/8"])
    assert set(fired(_swap(found, gone, narrow), CLOSED)) == {"gke-gpudirect-firewall"}
    owned_elsewhere = {"externalObjects": [{"kind": "Firewall", "name": "org-rules"}]}
    assert not run(get_policy("gke-gpudirect-firewall"), _swap(found, gone, None), owned_elsewhere).violations


def test_a_gpudirect_gpu_container_without_the_nccl_settings_is_caught() -> None:
    found = resources("gpudirect", "gang")
    job = next(r for r in found if r.type == "kubernetes:ray.io/v1:RayJob")
    path = "spec.rayClusterSpec.workerGroupSpecs[0].template.spec.containers[0]"
    worker = job.props["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]["template"]["spec"]["containers"][0]
    assert worker["args"] == ["source ${NCCL_LIB_DIR}/nccl-env-profile.sh"]
    assert {"name": "NCCL_LIB_DIR", "value": "/usr/local/nvidia/lib64"} in worker["env"]
    got = fired(_swap(found, job, patch(job, f"{path}.args", DELETE)), CLOSED)
    assert set(got) == {"gke-gpudirect-nccl-env"}, got
    assert "nccl-env-profile.sh" in got["gke-gpudirect-nccl-env"][0]
    env = [e for e in worker["env"] if e["name"] != "NCCL_LIB_DIR"]
    got = fired(_swap(found, job, patch(job, f"{path}.env", env)), CLOSED)
    assert set(got) == {"gke-gpudirect-nccl-env"} and "NCCL_LIB_DIR" in got["gke-gpudirect-nccl-env"][0]


def test_a_topology_flavor_is_no_fall_through_for_a_cpu_head_without_a_topology_request() -> None:
    """Kueue never gives a TAS flavor to a pod set that requests no topology on a queue that also
    has plain flavors (``checkPodSetAndFlavorMatchForTAS``: "supports only
    TopologyAwareScheduling"), so gpudirect's h200 flavor, behind the dws check, is not where a
    40-CPU head lands: no fall-through advisory; the head's template carries no TAS request."""
    found = resources("gpudirect", "big-head-training")
    job = next(r for r in found if r.type.endswith(":RayJob"))
    props = plain(job.props)
    props["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] = "h200"  # training-dws (onFlavors h200)
    found = _swap(found, job, Res(job.type, job.name, props, job.urn))
    head = props["spec"]["rayClusterSpec"]["headGroupSpec"]["template"]
    assert not (head.get("metadata") or {}).get("annotations"), head
    assert "kueue-cpu-podset-on-queued-gpu" not in fired(found, CLOSED)


def test_a_cpu_only_head_that_fits_only_a_queued_gpu_flavor_is_caught() -> None:
    big = fired(resources("prod", "big-head"), CLOSED)
    assert set(big) == {"kueue-cpu-podset-on-queued-gpu"}, big
    message = big["kueue-cpu-podset-on-queued-gpu"][0]
    assert "pod set head" in message and "l4" in message
    # What the research cpu flavor can give (its nominal quota plus what the cohort lends).
    queues = config_value("prod", "gpu-batch:kueueQueues")["clusterQueues"]
    cpu = [f for q in queues for g in q["resourceGroups"] for f in g["flavors"] if f["name"] == "cpu"]
    total = sum(int(f["resources"]["cpu"]["nominalQuota"]) for f in cpu)
    assert 2 < total < 40, total
