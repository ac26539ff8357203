"""kueue-flavor-eligible (issue 18 item 4), each case written from kubernetes-sigs/kueue v0.19.2
``pkg/scheduler/flavorassigner/flavorassigner.go`` ``checkFlavorForPodSets`` / ``flavorSelector``
and ``tas_flavorassigner.go`` ``checkPodSetAndFlavorMatchForTAS``."""

from __future__ import annotations

from typing import Any

from gpu_batch_policy.rules.kueue.flavors import POLICIES

from tests.policies.workload_stack import (
    KUEUE,
    UNKNOWN,
    Registration,
    cluster_queue,
    k8s,
    local_queue,
    pod,
    run,
)

RULE = POLICIES[0]
LABEL = {"kueue.x-k8s.io/queue-name": "user-queue"}
GPU_TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}


def flavor(name: str, **spec: Any) -> Registration:
    return k8s(KUEUE, "ResourceFlavor", name, spec=spec)


def queue(*flavors: str) -> list[Registration]:
    quota = {"cpu": 100, "memory": "1000Gi", "nvidia.com/gpu": 8}
    return [cluster_queue("cq", {f: quota for f in flavors}), local_queue("user-queue", "ml", "cq")]


def job(template: dict[str, Any]) -> Registration:
    return k8s("batch/v1", "Job", "train", namespace="ml", labels=LABEL, spec={"template": template})


def gpu_pod(**spec: Any) -> dict[str, Any]:
    template = pod(gpu=1)
    template["spec"].update(spec)
    return template


def test_untolerated_flavor_taint() -> None:
    """checkFlavorForPodSets: FindMatchingUntoleratedTaint(flavor.Spec.NodeTaints, pod tolerations +
    flavor.Spec.Tolerations) for NoSchedule/NoExecute -> 'untolerated taint %s in flavor %s'."""
    tainted = flavor("gpu", nodeTaints=[GPU_TAINT])
    out = run(RULE, [tainted, *queue("gpu"), job(gpu_pod())])
    assert out.mentions("Job 'ml/train'", "untolerated taint nvidia.com/gpu=present:NoSchedule in flavor gpu")
    assert "never admitted" in out.violations[0]
    tolerating = gpu_pod(tolerations=[{"key": "nvidia.com/gpu", "operator": "Exists"}])
    assert run(RULE, [tainted, *queue("gpu"), job(tolerating)]).violations == []
    # The flavor's own tolerations count too.
    self_tolerant = flavor(
        "gpu", nodeTaints=[GPU_TAINT], tolerations=[{"key": "nvidia.com/gpu", "operator": "Exists"}]
    )
    assert run(RULE, [self_tolerant, *queue("gpu"), job(gpu_pod())]).violations == []
    # PreferNoSchedule never blocks.
    soft = flavor("gpu", nodeTaints=[{**GPU_TAINT, "effect": "PreferNoSchedule"}])
    assert run(RULE, [soft, *queue("gpu"), job(gpu_pod())]).violations == []


def test_one_eligible_flavor_is_enough() -> None:
    """findFlavorForPodSets tries every flavor of the group in order."""
    stack = [
        flavor("tainted", nodeTaints=[GPU_TAINT]),
        flavor("plain"),
        *queue("tainted", "plain"),
        job(gpu_pod()),
    ]
    assert run(RULE, stack).violations == []


def test_node_selector_against_flavor_node_labels() -> None:
    """flavorSelector keeps only the flavor's own nodeLabels keys; a mismatch there ->
    'flavor %s doesn't match node affinity'; keys the flavor does not set are ignored."""
    a100 = flavor("a100", nodeLabels={"cloud.google.com/gke-accelerator": "nvidia-tesla-a100"})
    wrong = gpu_pod(nodeSelector={"cloud.google.com/gke-accelerator": "nvidia-h100-80gb"})
    out = run(RULE, [a100, *queue("a100"), job(wrong)])
    assert out.mentions("Job 'ml/train'", "flavor a100 doesn't match node affinity")
    other_key = gpu_pod(nodeSelector={"cloud.google.com/gke-nodepool": "anything"})
    assert run(RULE, [a100, *queue("a100"), job(other_key)]).violations == []
    right = gpu_pod(nodeSelector={"cloud.google.com/gke-accelerator": "nvidia-tesla-a100"})
    assert run(RULE, [a100, *queue("a100"), job(right)]).violations == []


def test_required_affinity_against_flavor_node_labels() -> None:
    a100 = flavor("a100", nodeLabels={"cloud.google.com/gke-accelerator": "nvidia-tesla-a100"})

    def affinity(values: list[str], extra_term: bool = False) -> dict[str, Any]:
        terms = [
            {
                "matchExpressions": [
                    {"key": "cloud.google.com/gke-accelerator", "operator": "In", "values": values}
                ]
            }
        ]
        if extra_term:  # a term with only foreign keys empties to "matches every flavor"
            terms.append({"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]})
        return gpu_pod(
            affinity={
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}
                }
            }
        )

    assert run(RULE, [a100, *queue("a100"), job(affinity(["nvidia-l4"]))]).mentions(
        "doesn't match node affinity"
    )
    assert run(RULE, [a100, *queue("a100"), job(affinity(["nvidia-tesla-a100"]))]).violations == []
    assert run(RULE, [a100, *queue("a100"), job(affinity(["nvidia-l4"], extra_term=True))]).violations == []


def topology(name: str, *levels: str) -> Registration:
    return k8s(
        "kueue.x-k8s.io/v1beta2", "Topology", name, spec={"levels": [{"nodeLabel": x} for x in levels]}
    )


def tas_pod(level: str) -> dict[str, Any]:
    template = gpu_pod()
    template["metadata"] = {"annotations": {"kueue.x-k8s.io/podset-required-topology": level}}
    return template


def test_tas_level_the_topology_lacks() -> None:
    """checkPodSetAndFlavorMatchForTAS -> TASFlavorSnapshot.HasLevel: 'Flavor %q does not contain
    the requested level'."""
    stack = [
        topology("default", "cloud.google.com/gce-topology-block", "kubernetes.io/hostname"),
        flavor("tas", topologyName="default"),
        *queue("tas"),
    ]
    out = run(RULE, [*stack, job(tas_pod("cloud.google.com/gce-topology-rack"))])
    assert out.mentions("Job 'ml/train'", 'Flavor "tas" does not contain the requested level')
    assert run(RULE, [*stack, job(tas_pod("cloud.google.com/gce-topology-block"))]).violations == []


def test_tas_request_on_a_flavor_without_topology() -> None:
    out = run(RULE, [flavor("plain"), *queue("plain"), job(tas_pod("kubernetes.io/hostname"))])
    assert out.mentions('Flavor "plain" does not support TopologyAwareScheduling')


def test_plain_pod_set_on_a_tas_flavor_of_a_mixed_queue() -> None:
    """A pod set without a topology request fits a TAS flavor only when the ClusterQueue is TAS-only
    (isTASImplied); otherwise 'Flavor %q supports only TopologyAwareScheduling'."""
    topo = topology("default", "kubernetes.io/hostname")
    tas_only = [topo, flavor("tas", topologyName="default"), *queue("tas")]
    assert run(RULE, [*tas_only, job(gpu_pod())]).violations == []
    quota = {"cpu": 100, "memory": "1000Gi", "nvidia.com/gpu": 8}
    mixed_cq = k8s(
        KUEUE,
        "ClusterQueue",
        "cq",
        spec={
            "resourceGroups": [
                {
                    "coveredResources": ["cpu", "memory", "nvidia.com/gpu"],
                    "flavors": [
                        {
                            "name": "tas",
                            "resources": [{"name": k, "nominalQuota": v} for k, v in quota.items()],
                        }
                    ],
                },
                {
                    "coveredResources": ["example.com/nic"],
                    "flavors": [
                        {"name": "plain", "resources": [{"name": "example.com/nic", "nominalQuota": 1}]}
                    ],
                },
            ]
        },
    )
    mixed = [
        topo,
        flavor("tas", topologyName="default"),
        flavor("plain"),
        mixed_cq,
        local_queue("user-queue", "ml", "cq"),
    ]
    assert run(RULE, [*mixed, job(gpu_pod())]).mentions('Flavor "tas" supports only TopologyAwareScheduling')


def test_tas_gate_off_in_the_stated_install_skips_tas() -> None:
    config = {"kueueConfiguration": {"featureGates": {"TopologyAwareScheduling": False}}}
    out = run(RULE, [flavor("plain"), *queue("plain"), job(tas_pod("kubernetes.io/hostname"))], config=config)
    assert out.violations == []


def test_unknown_flavor_labels_never_prove_a_violation() -> None:
    a100 = flavor("a100", nodeLabels={"cloud.google.com/gke-accelerator": UNKNOWN})
    wrong = gpu_pod(nodeSelector={"cloud.google.com/gke-accelerator": "nvidia-h100-80gb"})
    assert run(RULE, [a100, *queue("a100"), job(wrong)]).violations == []
