"""The shared model: tokens, unknown/secret handling, quantities, GKE capacity, gang size, charts."""

from __future__ import annotations

from decimal import Decimal

import pytest
from gpu_batch_policy.facts.model import StackModel, view
from gpu_batch_policy.facts.model.base import KubeObject, build_resource
from gpu_batch_policy.primitives.gke_version import satisfies
from gpu_batch_policy.primitives.tokens import parse_token
from gpu_batch_policy.primitives.values import Unknown, plain, quantity
from pulumi_policy.proxy import unknown_checking_proxy

from tests.policies.pack_harness import UNKNOWN, UNKNOWN_NUMBER, Res, secret
from tests.policies.pack_objects import (
    DELETE,
    cluster_queue,
    gke_cluster,
    kueue_release,
    local_queue,
    patch,
    queued_pool,
    ray_job,
)


def model(*items: Res) -> StackModel:
    return StackModel.from_plain((r.type, unknown_checking_proxy(r.props), r.urn, r.name) for r in items)


@pytest.mark.parametrize(
    ("token", "group", "version", "kind", "is_object"),
    [
        ("kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue", "kueue.x-k8s.io", "v1beta2", "ClusterQueue", True),
        ("kubernetes:core/v1:Namespace", "", "v1", "Namespace", True),
        ("kubernetes:helm.sh/v3:Release", "", "", "Release", False),
        ("gcp:container/nodePool:NodePool", "", "", "NodePool", False),
        ("pulumi:providers:kubernetes", "", "", "kubernetes", False),
    ],
)
def test_type_tokens(token: str, group: str, version: str, kind: str, is_object: bool) -> None:
    parsed = parse_token(token)
    assert (parsed.group, parsed.version, parsed.kind, parsed.is_k8s_object) == (
        group,
        version,
        kind,
        is_object,
    )


def test_plain_keeps_unknowns_as_markers_and_unwraps_secrets() -> None:
    props = unknown_checking_proxy({"a": {"b": [1.0, UNKNOWN]}, "s": secret({"x": "y"}), "n": UNKNOWN_NUMBER})
    value = plain(props)
    assert value["a"]["b"][0] == 1.0
    assert value["a"]["b"][1] == Unknown("a.b[1]")
    assert value["s"] == {"x": "y"}
    assert isinstance(value["n"], Unknown)


def test_quantities_use_kubernetes_parsing() -> None:
    assert quantity("192Gi").value == Decimal(192 * 2**30)
    assert quantity(8.0).value == Decimal(8)
    assert quantity("500m").value == Decimal("0.5")
    assert quantity("lots").error is not None
    assert quantity(True).error is not None
    assert quantity("Infinity").error is not None
    assert quantity(Unknown("x")).unknown


def test_object_identity_namespace_default_and_auto_name() -> None:
    lq = patch(local_queue(), "metadata", {})  # no name, no namespace
    obj = build_resource(lq.type, lq.props, lq.urn, "lq-resource")
    assert isinstance(obj, KubeObject)
    assert obj.name == "lq-resource" and obj.auto_named
    assert obj.namespace == "default"
    cq = build_resource(*_t(cluster_queue()))
    assert isinstance(cq, KubeObject) and cq.namespace is None and not cq.auto_named


def test_lookup_three_states() -> None:
    m = model(cluster_queue("a"), patch(cluster_queue("b"), "metadata.name", UNKNOWN))
    assert m.find_cluster_queue("a")[0].status == "found"
    assert m.find_cluster_queue("zzz")[0].status == "unknown"  # b's real name might be zzz
    assert model(cluster_queue("a")).find_cluster_queue("zzz")[0].status == "missing"


def test_cluster_queue_reads_the_fields_of_its_version() -> None:
    v1 = view(build_resource(*_t(cluster_queue(version="v1beta1", cohort="c", admissionChecks=["x"]))))
    assert v1.cohort == "c" and [r.name for r in v1.admission_checks] == ["x"]
    v2_wrong = view(build_resource(*_t(cluster_queue(cohort="c", admissionChecks=["x"]))))
    assert v2_wrong.cohort is None and v2_wrong.admission_checks == ()
    v2 = view(
        build_resource(
            *_t(
                cluster_queue(
                    cohortName="c",
                    admissionChecksStrategy={"admissionChecks": [{"name": "x", "onFlavors": ["f"]}]},
                )
            )
        )
    )
    assert v2.cohort == "c" and v2.admission_checks[0].on_flavors == ("f",)


def _t(r: Res) -> tuple[str, dict[str, object], str, str]:
    return (r.type, r.props, r.urn, r.name)


def test_pool_capacity_total_vs_per_zone() -> None:
    zonal = gke_cluster()
    m = model(zonal, queued_pool())
    pool = m.node_pools()[0]
    assert m.cluster_of(pool) is not None
    assert pool.gpus_per_node() == 1 and pool.max_nodes(m.cluster_of(pool)) == 10
    per_zone = patch(queued_pool(), "autoscaling", {"minNodeCount": 0.0, "maxNodeCount": 4.0})
    regional = gke_cluster(
        location="us-central1", nodeLocations=["us-central1-a", "us-central1-b", "us-central1-c"]
    )
    m2 = model(regional, per_zone)
    assert m2.node_pools()[0].max_nodes(m2.cluster_of(m2.node_pools()[0])) == 12
    pinned = patch(per_zone, "nodeLocations", ["us-central1-a"])
    m3 = model(regional, pinned)
    assert m3.node_pools()[0].max_nodes(m3.gke_clusters()[0]) == 4


def test_pool_gpus_from_machine_type_and_labels() -> None:
    pool = patch(queued_pool(), "nodeConfig.guestAccelerators", DELETE)
    pool = patch(pool, "nodeConfig.machineType", "a3-highgpu-8g")
    view_ = model(pool).node_pools()[0]
    assert view_.gpus_per_node() == 8
    labels = view_.node_labels()
    assert labels["cloud.google.com/gke-nodepool"] == "gpu-pool"
    assert labels["cloud.google.com/gke-accelerator"] == "nvidia-h100-80gb"
    unknown = model(patch(queued_pool(), "nodeConfig.guestAccelerators", UNKNOWN)).node_pools()[0]
    assert isinstance(unknown.gpus_per_node(), Unknown)


def test_gang_size_follows_kais_counting_rule() -> None:
    job = ray_job()
    workers = job.props["spec"]["rayClusterSpec"]["workerGroupSpecs"]
    workers[0].update({"replicas": 4.0, "minReplicas": 2.0, "numOfHosts": 2.0})
    workers.append({"groupName": "off", "replicas": 3.0, "suspend": True, "template": {}})
    workers.append({"groupName": "zero", "replicas": 0.0, "template": {}})
    workers.append({"groupName": "plain", "replicas": 3.0, "template": {}})
    ray = model(job).ray_workloads()[0]
    assert ray.gang_size() == 1 + 2 * 2 + 0 + 0 + 3
    assert ray.gang_gpus() == Decimal(4)  # 4 pods of the gpu group × 1 GPU


def test_gang_size_unknown_replicas() -> None:
    job = patch(ray_job(), "spec.rayClusterSpec.workerGroupSpecs[0].replicas", UNKNOWN_NUMBER)
    assert isinstance(model(job).ray_workloads()[0].gang_size(), Unknown)


def test_pod_gpu_requests_and_fraction() -> None:
    job = ray_job()
    template = job.props["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]["template"]
    template["spec"]["containers"].append(
        {"name": "side", "resources": {"requests": {"nvidia.com/gpu": 1.0}}}
    )
    template["spec"]["initContainers"] = [{"name": "init", "resources": {"limits": {"nvidia.com/gpu": "4"}}}]
    template["metadata"] = {"annotations": {"gpu-fraction": "0.5"}}
    group = model(job).ray_workloads()[0].workers[0]
    assert group.template.gpus() == Decimal(4)  # max(1 + 1, init 4)
    fraction = group.template.gpu_fraction()
    assert fraction is not None and fraction.value == Decimal("0.5")


def test_helm_chart_recognition_and_kueue_values() -> None:
    m = model(kueue_release("integrations:\n  frameworks: [pod]\n"))
    [release] = m.kueue_releases()
    assert release.chart_id == "kueue" and release.kueue_frameworks() == ("pod",)
    assert model(kueue_release()).kueue_releases()[0].kueue_frameworks() is not None


@pytest.mark.parametrize(
    ("version", "verdict"),
    [
        ("1.28.3-gke.1098000", "yes"),
        ("1.28.3-gke.1097999", "no"),
        ("1.28", "yes"),
        ("1.27", "no"),
        ("1.28.2", "no"),
        ("1.33", "yes"),
        ("latest", "yes"),
        ("banana", "unparseable"),
    ],
)
def test_gke_version_comparison(version: str, verdict: str) -> None:
    assert satisfies(version, "1.28.3-gke.1098000") == verdict
