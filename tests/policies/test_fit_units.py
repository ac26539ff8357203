"""Cluster-fit building blocks: GKE allocatable, placement (taints, selectors, affinity),
pod requests, and "cannot check yet" on unknowns -- on small hand-made stacks."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from gpu_batch_policy.facts.fit.allocatable import node_allocatable, reserved_cpu_cores, reserved_memory_bytes
from gpu_batch_policy.facts.fit.machines import MachineShape, machine_shape
from gpu_batch_policy.facts.fit.network import FIREWALL, port_open, private_clusters
from gpu_batch_policy.facts.fit.placement import placement, pod_requests, pool_allocatable
from gpu_batch_policy.facts.fit.resources import GIB, MIB, Resources
from gpu_batch_policy.facts.model import StackModel
from gpu_batch_policy.facts.model.workloads import PodTemplate
from gpu_batch_policy.rules.fit.egress import is_google_registry, registry_of

from tests.policies.pack_harness import Res, policy, run
from tests.policies.pack_objects import POOL, gke_cluster, k8s, queued_pool

UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"


# --- allocatable (GKE "Plan GKE Standard node sizes") ------------------------------------------
def test_memory_reservation_tiers() -> None:
    assert reserved_memory_bytes(Decimal("0.6")) == 255 * MIB
    assert reserved_memory_bytes(Decimal(4)) == Decimal("1") * GIB  # 25% of 4
    assert reserved_memory_bytes(Decimal(16)) == Decimal("2.6") * GIB  # 1 + 0.8 + 0.8
    assert reserved_memory_bytes(Decimal(128)) == Decimal("9.32") * GIB  # 2.6 + 6% of 112
    assert reserved_memory_bytes(Decimal(256)) == Decimal("11.88") * GIB  # + 2% of 128


def test_cpu_reservation_tiers() -> None:
    assert reserved_cpu_cores(Decimal(1)) == Decimal("0.06")
    assert reserved_cpu_cores(Decimal(2)) == Decimal("0.07")
    assert reserved_cpu_cores(Decimal(4)) == Decimal("0.08")
    assert reserved_cpu_cores(Decimal(8)) == Decimal("0.09")


def test_e2_standard_4_allocatable() -> None:
    shape = machine_shape("e2-standard-4")
    assert shape == MachineShape(Decimal(4), Decimal(16))
    room = node_allocatable(shape, 0)
    assert room.cpu == Decimal("3.92")
    assert room.memory == 16 * GIB - Decimal("2.6") * GIB - 100 * MIB


def test_unknown_machine_type_is_not_guessed() -> None:
    assert machine_shape("x9-mega-1") is None


# --- placement -----------------------------------------------------------------------------------
def cpu_pool(name: str = "system", **node_config: Any) -> Res:
    config = {"machineType": "e2-standard-4", "labels": {"role": "system"}, **node_config}
    return Res(POOL, name, {"name": name, "cluster": "gpu-cluster", "nodeCount": 1.0, "nodeConfig": config})


def gpu_pool(name: str = "gpu", **node_config: Any) -> Res:
    config = {
        "machineType": "g2-standard-8",
        "guestAccelerators": [{"type": "nvidia-l4", "count": 1.0}],
        **node_config,
    }
    return Res(POOL, name, {"name": name, "cluster": "gpu-cluster", "nodeCount": 2.0, "nodeConfig": config})


def model_of(*resources: Res) -> StackModel:
    return StackModel.from_plain([(r.type, r.props, r.urn, r.name) for r in resources])


def template(**spec: Any) -> PodTemplate:
    body = {
        "containers": [{"name": "c", "image": "gcr.io/p/i", "resources": {"requests": {"cpu": "1"}}}],
        **spec,
    }
    return PodTemplate({"metadata": {}, "spec": body}, "spec.template")


def names(pools: Any) -> set[str]:
    return {p.name for p in pools}


def test_gke_adds_the_gpu_taint_when_a_cpu_pool_exists() -> None:
    model = model_of(gke_cluster(), cpu_pool(), gpu_pool())
    where = placement(model, template())
    assert names(where.matched) == {"system"}
    assert (
        "taint nvidia.com/gpu=present:NoSchedule is not tolerated"
        in dict((p.name, r) for p, r in where.rejected)["gpu"]
    )


def test_pods_requesting_gpus_tolerate_the_gpu_taint() -> None:
    """ExtendedResourceToleration: a GPU request brings its own toleration."""
    model = model_of(gke_cluster(), cpu_pool(), gpu_pool())
    gpu_pod = PodTemplate(
        {"spec": {"containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}}, ""
    )
    assert names(placement(model, gpu_pod).matched) == {"system", "gpu"}


def test_queued_pools_carry_the_queued_taint() -> None:
    model = model_of(gke_cluster(), cpu_pool(), queued_pool())
    gpu_pod = PodTemplate(
        {"spec": {"containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}, ""
    )
    rejected = dict((p.name, r) for p, r in placement(model, gpu_pod).rejected)
    assert "cloud.google.com/gke-queued=true:NoSchedule" in rejected["gpu-pool"]
    tolerant = PodTemplate(
        {
            "spec": {
                "containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": 1}}}],
                "tolerations": [{"key": "cloud.google.com/gke-queued", "operator": "Equal", "value": "true"}],
            }
        },
        "",
    )
    assert "gpu-pool" in names(placement(model, tolerant).matched)


@pytest.mark.parametrize(
    ("terms", "expected"),
    [
        (
            [{"matchExpressions": [{"key": "role", "operator": "In", "values": ["system"]}]}],
            {"system", "other"},
        ),
        ([{"matchExpressions": [{"key": "role", "operator": "NotIn", "values": ["system"]}]}], set()),
        ([{"matchExpressions": [{"key": "role", "operator": "Exists"}]}], {"system", "other"}),
        ([{"matchExpressions": [{"key": "role", "operator": "DoesNotExist"}]}], set()),
        (
            [
                {"matchExpressions": [{"key": "role", "operator": "In", "values": ["nope"]}]},
                {
                    "matchExpressions": [
                        {"key": "cloud.google.com/gke-nodepool", "operator": "In", "values": ["other"]}
                    ]
                },
            ],
            {"other"},
        ),
        ([{}], set()),
    ],
)
def test_required_node_affinity(terms: list[Any], expected: set[str]) -> None:
    model = model_of(gke_cluster(), cpu_pool(), cpu_pool("other"))
    affinity = {
        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}
    }
    assert names(placement(model, template(affinity=affinity)).matched) == expected


def test_node_selector_on_a_label_gke_may_set_is_undecided() -> None:
    model = model_of(gke_cluster(), cpu_pool())
    where = placement(model, template(nodeSelector={"topology.kubernetes.io/zone": "us-west1-b"}))
    assert names(where.undecided) == {"system"}
    assert not where.matched


def test_pod_requests_follow_the_scheduler() -> None:
    pod = PodTemplate(
        {
            "spec": {
                "containers": [
                    {"name": "a", "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}}},
                    {"name": "b", "resources": {"limits": {"cpu": "1", "memory": "2Gi"}}},  # limits only
                ],
                "initContainers": [{"name": "i", "resources": {"requests": {"cpu": "2"}}}],
                "overhead": {"cpu": "250m", "memory": "120Mi"},
            }
        },
        "",
    )
    requests = pod_requests(pod)
    assert isinstance(requests, Resources)
    assert requests.cpu == Decimal("2.25")  # max(0.5 + 1, 2) + 0.25
    assert requests.memory == 3 * GIB + 120 * MIB


def test_pool_without_machine_type_is_gke_default_e2_medium() -> None:
    model = model_of(gke_cluster(), Res(POOL, "bare", {"name": "bare", "cluster": "gpu-cluster"}))
    room = pool_allocatable(model.node_pools()[0])
    assert isinstance(room, Resources)
    assert room.cpu == Decimal("1.93")


# --- rules on hand-made stacks ------------------------------------------------------------------
def deployment(name: str, cpu: str, replicas: float = 1.0, **spec: Any) -> Res:
    pod = {
        "containers": [{"name": "c", "image": "gcr.io/p/i", "resources": {"requests": {"cpu": cpu}}}],
        **spec,
    }
    return k8s(
        "apps/v1", "Deployment", name, namespace="ops", spec={"replicas": replicas, "template": {"spec": pod}}
    )


def daemonset(name: str, cpu: str) -> Res:
    pod = {"containers": [{"name": "c", "image": "gcr.io/p/i", "resources": {"requests": {"cpu": cpu}}}]}
    return k8s("apps/v1", "DaemonSet", name, namespace="ops", spec={"template": {"spec": pod}})


def test_daemonset_must_fit_every_pool_it_targets() -> None:
    small = cpu_pool("small", machineType="e2-standard-2")
    stack = [gke_cluster(), cpu_pool(), small, daemonset("agent", "2500m")]
    result = run(policy("pod-template-fits-a-node"), stack)
    assert len(result.violations) == 1, result.text()
    assert "GKE NodePool 'small' (e2-standard-2)" in result.text()
    assert run(policy("pod-template-fits-a-node"), [gke_cluster(), cpu_pool(), daemonset("agent", "2")]).clean


def test_a_pod_no_pool_accepts_is_reported() -> None:
    stack = [
        gke_cluster(removeDefaultNodePool=True),
        cpu_pool(),
        deployment("x", "1", nodeSelector={"role": "gpu"}),
    ]
    result = run(policy("pod-template-fits-a-node"), stack)
    assert "no node pool accepts its pods" in result.text()


def test_daemonsets_count_per_node_in_the_system_sum() -> None:
    pool = cpu_pool()
    pool.props["nodeCount"] = 2.0
    fits = [gke_cluster(), pool, deployment("op", "3", replicas=2.0), daemonset("agent", "400m")]
    assert run(policy("system-workloads-fit-system-pool"), fits).clean  # 6.8 of 7.84
    too_much = [gke_cluster(), pool, deployment("op", "3", replicas=2.0), daemonset("agent", "1")]
    result = run(policy("system-workloads-fit-system-pool"), too_much)
    assert "request cpu 8" in result.text() and "offers cpu 7.84" in result.text()
    assert "DaemonSet) × 2 nodes" in result.text()


def test_unknown_machine_type_says_cannot_check() -> None:
    pool = cpu_pool(machineType="x9-mega-1")
    result = run(policy("pod-template-fits-a-node"), [gke_cluster(), pool, deployment("op", "64")])
    assert result.clean
    assert result.cannot_check and "not in the pack's machine table" in result.cannot_check


@pytest.mark.parametrize(
    "rule",
    [
        "pod-template-fits-a-node",
        "system-workloads-fit-system-pool",
        "private-nodes-need-egress",
        "webhook-ports-open-from-control-plane",
        "runtime-and-priority-classes-exist",
    ],
)
def test_unknowns_never_fail_a_rule(rule: str) -> None:
    stack = [
        gke_cluster(privateClusterConfig={"enablePrivateNodes": UNKNOWN, "masterIpv4CidrBlock": UNKNOWN}),
        cpu_pool(machineType=UNKNOWN),
        deployment("op", UNKNOWN, runtimeClassName=UNKNOWN, priorityClassName=UNKNOWN, nodeSelector=UNKNOWN),
        k8s("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", "w", webhooks=UNKNOWN),
    ]
    result = run(policy(rule), stack)
    assert result.clean, result.text()


def test_private_cluster_unknown_is_cannot_check() -> None:
    stack = [gke_cluster(privateClusterConfig={"enablePrivateNodes": UNKNOWN}), deployment("op", "1")]
    result = run(policy("private-nodes-need-egress"), stack)
    assert result.clean
    assert result.cannot_check and "enablePrivateNodes unknown until apply" in result.cannot_check


# --- network: registries, firewalls -------------------------------------------------------------
@pytest.mark.parametrize(
    ("image", "host", "google"),
    [
        ("registry.k8s.io/kueue/kueue:v0.19.2", "registry.k8s.io", False),
        ("quay.io/kuberay/operator:v1.7.0", "quay.io", False),
        ("nginx:1.27", "docker.io", False),
        ("library/nginx", "docker.io", False),
        ("gcr.io/p/i:1", "gcr.io", True),
        ("us.gcr.io/p/i", "us.gcr.io", True),
        ("us-docker.pkg.dev/p/r/i@sha256:abc", "us-docker.pkg.dev", True),
        ("localhost:5000/i", "localhost:5000", False),
    ],
)
def test_registry_of_an_image(image: str, host: str, google: bool) -> None:
    assert registry_of(image) == host
    assert is_google_registry(host) is google


PRIVATE = {"enablePrivateNodes": True, "masterIpv4CidrBlock": "172.16.0.32/28"}


def firewall(**props: Any) -> Res:
    body = {
        "network": "default",
        "sourceRanges": ["172.16.0.0/16"],
        "allows": [{"protocol": "tcp", "ports": ["9443"]}],
    }
    return Res(FIREWALL, "fw", {**body, **props})


@pytest.mark.parametrize(
    ("props", "opens"),
    [
        ({}, True),
        ({"allows": [{"protocol": "all"}]}, True),
        ({"allows": [{"protocol": "udp", "ports": ["9443"]}]}, False),
        ({"direction": "EGRESS"}, False),
        ({"disabled": True}, False),
        ({"network": "projects/p/global/networks/other"}, False),
        ({"network": "projects/p/global/networks/default"}, True),
        ({"sourceRanges": ["10.0.0.0/8"]}, False),
        ({"targetTags": ["gke-node"]}, None),
        ({"allows": UNKNOWN}, None),
    ],
)
def test_firewall_opens_a_port_from_the_control_plane(props: dict[str, Any], opens: bool | None) -> None:
    model = model_of(gke_cluster(privateClusterConfig=PRIVATE), firewall(**props))
    (target,), _ = private_clusters(model)
    assert port_open(model, target, 9443) is opens
    assert port_open(model, target, 10250) is True  # GKE's own rule


def test_private_nodes_of_one_pool_make_the_cluster_private() -> None:
    pool = cpu_pool()
    pool.props["networkConfig"] = {"enablePrivateNodes": True}
    deploy = deployment("op", "1")
    result = run(policy("private-nodes-need-egress"), [gke_cluster(), pool, deploy])
    assert result.clean  # gcr.io only
    deploy.props["spec"]["template"]["spec"]["containers"][0]["image"] = "ghcr.io/o/i:1"
    result = run(policy("private-nodes-need-egress"), [gke_cluster(), pool, deploy])
    assert "ghcr.io: ghcr.io/o/i:1" in result.text()


def test_a_tagged_firewall_counts_when_every_pool_carries_the_tag() -> None:
    tagged = cpu_pool(tags=["nodes"])
    other = cpu_pool("other", tags=["nodes"])
    rule = firewall(targetTags=["nodes"])
    model = model_of(gke_cluster(privateClusterConfig=PRIVATE), tagged, other, rule)
    (target,), _ = private_clusters(model)
    assert port_open(model, target, 9443) is True
    other.props["nodeConfig"]["tags"] = ["elsewhere"]
    model = model_of(gke_cluster(privateClusterConfig=PRIVATE), tagged, other, rule)
    (target,), _ = private_clusters(model)
    assert port_open(model, target, 9443) is False
