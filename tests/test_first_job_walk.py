"""Issue 39, done-when: one GPU job per repo stack walks end to end through the objects the real
program renders, and on gpudirect a job on each GPU queue is admissible.

The walk, for an 8-GPU pod (one A3 node's worth; 1 GPU on pools with fewer):

1. its LocalQueue names a ClusterQueue of the same cluster, whose ``namespaceSelector`` admits the
   LocalQueue's namespace (``facts.kueue_reach``: kueue v0.19.2 ``LabelSelectorAsSelector(nil)`` is
   ``labels.Nothing()``);
2. a flavor of the group covering ``nvidia.com/gpu`` has GPU quota for the pod and names pools;
3. the pool has nodes when the gang needs them: a minimum above zero, or a ProvisioningRequest
   check on the flavor in front of a queued pool, or -- for a flavor without TAS -- an autoscaled
   pool the pending pod scales up (TAS without either places nothing: ``findLevelWithFitDomains``);
4. every admission check of the queue exists;
5. each extra network of a GPUDirect pool has a firewall rule admitting the pool's own subnet, or is
   the RoCE VPC (cluster-toolkit ``vpc`` / ``multivpc`` ``enable_internal_traffic``);
6. a GPU pod template the program wires for that pool (``components.gpudirect.pod_wiring``) lacks
   none of the wiring and NCCL settings its profile needs, and the in-cluster admission policy's
   test agrees.

The KAI stack has no Kueue queue: its GPU job walks KAI leaf queue -> pool -> nodes.  MultiKueue
manager queues hand jobs to the workers, whose own queues are walked.
"""

from __future__ import annotations

import functools
from dataclasses import replace
from decimal import Decimal

import pytest
from gpu_batch_policy.facts.gpudirect.firewall import FIREWALL_TYPE, network_admits, short_name
from gpu_batch_policy.facts.gpudirect.nccl_env import missing_nccl_env
from gpu_batch_policy.facts.gpudirect.profiles import ROCE_PROFILE_SUFFIX, profile_for
from gpu_batch_policy.facts.gpudirect.wiring import missing_wiring
from gpu_batch_policy.facts.kueue_capacity import gpu_flavors, provisioning_checks
from gpu_batch_policy.facts.kueue_reach import reach
from gpu_batch_policy.facts.model import LocalQueue, NodePool, StackModel
from gpu_batch_policy.facts.model.kueue import MULTIKUEUE_CONTROLLER
from gpu_batch_policy.facts.tas.domains import flavor_pools
from gpu_batch_policy.primitives.tokens import KUEUE_GROUP
from gpu_batch_policy.primitives.values import as_str, dig

from components.gpudirect.pod_wiring import pod_wiring
from components.workloads import RayPodArgs, pod_template
from preview.report import stack_model
from preview.report.multikueue import cluster_subsets
from stacks.errors import ConfigError
from tests.stack_runner import run_stack, unedited_run

STACKS = ("dev", "prod", "kai", "skypilot", "multiregion", "gpudirect")
GPU = "nvidia.com/gpu"


@functools.cache
def models(stack: str) -> tuple[StackModel, ...]:
    """One model per cluster the program reaches (the report's split: a MultiKueue manager and
    each worker are separate API servers)."""
    resources = unedited_run(stack).resources
    subsets = cluster_subsets(resources)
    return tuple(stack_model(subset) for _, subset in subsets) if subsets else (stack_model(resources),)


def model(stack: str) -> StackModel:
    return models(stack)[0]


def _gpus(pool: NodePool) -> int:
    per_node = pool.gpus_per_node()
    assert isinstance(per_node, int) and per_node > 0, f"pool {pool.name}: no GPUs"
    return min(per_node, 8)


def _has_nodes(m: StackModel, pool: NodePool, provisioned: bool, tas: bool) -> str:
    """How the pool gets a node for the job; fails when it never does."""
    low = pool.min_nodes()
    if isinstance(low, int) and low > 0:
        return f"{low} static nodes"
    if provisioned and pool.is_queued:
        return "a ProvisioningRequest (queued provisioning)"
    assert not pool.is_queued, f"queued pool {pool.name} without a ProvisioningRequest check"
    assert not tas, f"TAS flavor on pool {pool.name} that can be empty, with no ProvisioningRequest check"
    high = pool.max_nodes(m.cluster_of(pool))
    assert isinstance(high, int) and high > 0, f"pool {pool.name} can never have a node"
    return "the autoscaler (pending pod)"


def _network(m: StackModel, pool: NodePool) -> list[str]:
    raw = pool.res.get("networkConfig", "additionalNodeNetworkConfigs")
    nics = raw if isinstance(raw, list) else []
    networks = {as_str(r.get("name")): r for r in m.of_type("gcp:compute/network:Network")}
    subnets = {as_str(r.get("name")): r for r in m.of_type("gcp:compute/subnetwork:Subnetwork")}
    rules = [r.props for r in m.of_type(FIREWALL_TYPE)]
    seen = []
    for nic in nics:
        net, sub = short_name(dig(nic, "network")), short_name(dig(nic, "subnetwork"))
        vpc = networks[net]
        profile = short_name(vpc.get("networkProfile"))
        if isinstance(profile, str) and profile.endswith(ROCE_PROFILE_SUFFIX):
            seen.append(f"{net} (RoCE)")
            continue
        cidr = subnets[sub].get("ipCidrRange")
        assert network_admits(rules, str(net), str(cidr)) is True, f"{pool.name}: {net} drops NCCL ({cidr})"
        seen.append(f"{net} ({cidr} allowed)")
    return seen


def _nccl(pool: NodePool, gpus: int) -> str:
    machine = pool.machine_type
    profile = profile_for(machine) if isinstance(machine, str) and _network_count(pool) else None
    if profile is None:
        return "no GPUDirect"
    template = pod_template(
        RayPodArgs(image="ray", cpu="8", memory="64Gi", gpu=gpus, gpudirect=pod_wiring(profile)), "ray-worker"
    )
    notes = template["metadata"]["annotations"]
    assert missing_wiring(profile, notes, template["spec"]) == []
    assert missing_nccl_env(profile, template["spec"]) == []
    return f"GPUDirect-{profile.stack} wired"


def _network_count(pool: NodePool) -> int:
    raw = pool.res.get("networkConfig", "additionalNodeNetworkConfigs")
    return len(raw) if isinstance(raw, list) else 0


def walk(m: StackModel, lq: LocalQueue) -> list[str]:
    """The job's path from ``lq`` to a node, one line per step; AssertionError where it stops."""
    _, cq = m.find_cluster_queue(lq.cluster_queue, near=lq)
    assert cq is not None, f"LocalQueue {lq.obj.qualified_name}: no ClusterQueue"
    verdict = reach(m, cq)
    assert verdict.reachable is True, f"{cq.name}: {verdict.why}"
    steps = [f"{lq.obj.qualified_name} -> ClusterQueue {cq.name}"]
    for ref in cq.admission_checks:
        assert m.lookup(KUEUE_GROUP, "AdmissionCheck", ref.name, near=cq).ok, f"{cq.name}: check {ref.name}"
    for name in gpu_flavors(cq, GPU):
        _, flavor = m.find_resource_flavor(name, near=cq)
        assert flavor is not None
        pools = [
            p for p in flavor_pools(m, flavor) if isinstance(p.gpus_per_node(), int) and p.gpus_per_node()
        ]
        if not pools:
            continue
        pool = pools[0]
        gpus = _gpus(pool)
        entry = cq.quota_entry(name, GPU)
        assert entry is not None and entry.nominal_quota.value is not None
        assert entry.nominal_quota.value >= Decimal(gpus), f"{cq.name}/{name}: quota below one node's GPUs"
        checks = provisioning_checks(m, cq, name)
        nodes = _has_nodes(m, pool, bool(checks), isinstance(flavor.topology_name, str))
        steps += [
            f"flavor {name} -> pool {pool.name} ({gpus} GPUs/pod)",
            f"nodes: {nodes}",
            f"admission checks: {', '.join(str(r.name) for r in cq.admission_checks) or 'none'}",
            f"networks: {', '.join(_network(m, pool)) or 'primary only'}",
            f"NCCL: {_nccl(pool, gpus)}",
        ]
        return steps
    raise AssertionError(f"{cq.name}: no GPU flavor with a GPU pool")


def _worker_queues(m: StackModel) -> list[LocalQueue]:
    """LocalQueues whose ClusterQueue runs jobs here (not a MultiKueue dispatcher)."""
    out = []
    for lq in m.local_queues():
        _, cq = m.find_cluster_queue(lq.cluster_queue, near=lq)
        if cq is None:
            continue
        kinds = []
        for ref in cq.admission_checks:
            found = m.lookup(KUEUE_GROUP, "AdmissionCheck", ref.name, near=cq)
            kinds += [m.view(o).controller_name for o in found.found] if found.ok else []
        if MULTIKUEUE_CONTROLLER not in kinds:
            out.append(lq)
    return out


@pytest.mark.parametrize("stack", [s for s in STACKS if s != "kai"])
def test_one_job_per_stack_walks_to_a_node(stack: str) -> None:
    walked = []
    for m in models(stack):
        queues = _worker_queues(m)
        gpu_queues = [
            lq
            for lq in queues
            if any(gpu_flavors(c, GPU) for c in [m.find_cluster_queue(lq.cluster_queue, near=lq)[1]] if c)
        ]
        if gpu_queues:
            walked.append(walk(m, gpu_queues[0]))
    assert walked, f"{stack}: no LocalQueue leads to GPUs"
    assert all(steps[-1].startswith("NCCL:") for steps in walked)


def test_on_gpudirect_a_job_on_each_gpu_queue_is_admissible() -> None:
    m = model("gpudirect")
    walked = {}
    for lq in _worker_queues(m):
        steps = walk(m, lq)
        walked[lq.obj.qualified_name] = steps
    assert set(walked) == {"training/reserved", "training/h200"}, walked
    assert "nodes: 4 static nodes" in walked["training/reserved"]
    assert "nodes: a ProvisioningRequest (queued provisioning)" in walked["training/h200"]
    assert walked["training/reserved"][-1] == "NCCL: GPUDirect-TCPXO wired"
    assert walked["training/h200"][-1] == "NCCL: GPUDirect-RDMA wired"
    assert any("(RoCE)" in s for s in walked["training/h200"])


def test_the_kai_stack_walks_a_leaf_queue_to_a_pool_with_nodes() -> None:
    m = model("kai")
    leaves = [q for q in m.kai_queues() if not any(o.parent_queue == q.name for o in m.kai_queues())]
    with_gpus = [
        q
        for q in leaves
        if isinstance(q.resources, dict) and GPU.rsplit("/", maxsplit=1)[-1] in str(q.resources)
    ]
    assert with_gpus or leaves
    gpu_pools = [p for p in m.node_pools() if isinstance(p.gpus_per_node(), int) and p.gpus_per_node()]
    assert gpu_pools
    reachable = []
    for pool in gpu_pools:
        try:
            reachable.append(_has_nodes(m, pool, provisioned=False, tas=False))
        except AssertionError:
            continue
    assert reachable, "no GPU pool a KAI-scheduled pod can scale up"


PRE_FIX_POOLS = [
    {
        "name": "a3mega-tcpxo",
        "machineType": "a3-megagpu-8g",
        "network": "gpudirect",
        "provisioning": "reservation",
        "reservation": "a3mega-reservation",
        "compactPlacement": False,
        "maxNodes": 4,
    },
    {
        "name": "a3ultra-rdma",
        "machineType": "a3-ultragpu-8g",
        "network": "gpudirect",
        "provisioning": "queued",
        "maxNodes": 4,
    },
]


def test_the_walk_stops_where_a_stack_cannot_run() -> None:
    """The walk is not a tautology: the gpudirect stack with its TAS pool able to empty stops at
    the nodes step, and with the A3 Ultra queue's LocalQueue gone at the queue step."""
    records = unedited_run("gpudirect").resources
    emptied = [
        replace(r, inputs={**r.inputs, "autoscaling": {**r.inputs["autoscaling"], "totalMinNodeCount": 0}})
        if r.type == "gcp:container/nodePool:NodePool" and r.inputs.get("name") == "a3mega-tcpxo"
        else r
        for r in records
    ]
    broken = stack_model(emptied)
    lq = next(q for q in broken.local_queues() if q.name == "reserved")
    with pytest.raises(AssertionError, match="TAS flavor on pool a3mega-tcpxo"):
        walk(broken, lq)
    cut = stack_model([r for r in records if r.inputs.get("metadata", {}).get("name") != "h200"])
    assert [q.name for q in _worker_queues(cut)] == ["reserved"]


def test_the_config_refuses_the_pre_fix_tas_pool_in_one_line() -> None:
    """stacks/checks/topology.py check_tas_nodes: the same decision as kueue-tas-nodes-exist."""
    with pytest.raises(ConfigError) as caught:
        run_stack("gpudirect", {"gpu-batch:gpuPools": PRE_FIX_POOLS})
    lines = str(caught.value).splitlines()
    assert any("gpu-batch:gpuPools[0].minNodes" in line and "h100-mega" in line for line in lines), lines
