"""kueue-flavors-mix-accelerator-types (issue 21 item 7): one resource group, two GPU types.

Derived from kubernetes-sigs/kueue v0.19.2 ``pkg/scheduler/flavorassigner/flavorassigner.go``
``shouldTryNextFlavor`` and its test cases in ``flavorassigner_test.go`` (named per test), and
``pkg/cache/scheduler/clusterqueue.go`` ``defaultFlavorFungibility``.
"""

from __future__ import annotations

from typing import Any

from tests.policies.pack_harness import UNKNOWN, Res, run
from tests.policies.pack_harness import policy as get_policy
from tests.policies.pack_objects import (
    DELETE,
    KUEUE,
    cpu_pool,
    gke_cluster,
    k8s,
    patch,
    queued_pool,
    resource_flavor,
)

RULE = get_policy("kueue-flavors-mix-accelerator-types")
NODEPOOL = "cloud.google.com/gke-nodepool"
GPU_RESOURCES = ["cpu", "memory", "nvidia.com/gpu"]


def _flavor_quota(name: str, gpus: float) -> dict[str, Any]:
    return {
        "name": name,
        "resources": [
            {"name": "cpu", "nominalQuota": 100.0},
            {"name": "memory", "nominalQuota": "1000Gi"},
            {"name": "nvidia.com/gpu", "nominalQuota": gpus},
        ],
    }


def queue(name: str, *flavors: str, version: str = "v1beta2", **spec: Any) -> Res:
    body: dict[str, Any] = {
        "namespaceSelector": {},
        "resourceGroups": [
            {
                "coveredResources": GPU_RESOURCES,
                "flavors": [_flavor_quota(f, 0.0 if f == "cpu" else 8.0) for f in flavors],
            }
        ],
        **spec,
    }
    return k8s(f"{KUEUE}/{version}", "ClusterQueue", name, spec=body)


def platform() -> list[Res]:
    """An L4 pool (type from its machine), an H100 pool (type from guestAccelerators), a CPU pool
    and a flavor selecting each by GKE's node-pool label, as any program would declare them."""
    l4 = patch(queued_pool("l4-pool"), "nodeConfig.machineType", "g2-standard-24")
    l4 = patch(l4, "nodeConfig.guestAccelerators", DELETE)
    h100 = patch(queued_pool("h100-pool"), "nodeConfig.machineType", "a3-highgpu-8g")
    h100 = patch(h100, "nodeConfig.guestAccelerators", [{"type": "nvidia-h100-80gb", "count": 8.0}])
    return [
        gke_cluster(),
        cpu_pool(),
        l4,
        h100,
        resource_flavor("cpu", **{NODEPOOL: "system"}),
        resource_flavor("l4", **{NODEPOOL: "l4-pool"}),
        resource_flavor("h100", **{NODEPOOL: "h100-pool"}),
    ]


def test_default_fungibility_mixing_is_caught_with_queue_flavors_and_types() -> None:
    """The issue's layout: cpu, l4, h100 in one group, flavorFungibility omitted.  Upstream "preempt
    try next flavor": with the default whenCanPreempt TryNextFlavor the second flavor is taken even
    though the first could preempt."""
    result = run(RULE, [*platform(), queue("research", "cpu", "l4", "h100")])
    assert len(result.violations) == 1
    message = result.messages[0]
    assert "ClusterQueue 'research'" in message
    assert "l4 (nvidia-l4), h100 (nvidia-h100-80gb)" in message
    assert "cpu (" not in message  # the CPU flavor has no accelerator type
    assert "also when it could preempt there (whenCanPreempt TryNextFlavor)" in message
    assert "borrow there" not in message  # default whenCanBorrow MayStopSearch stops there
    assert "its own ClusterQueue" in message
    assert "gpu-batch/accelerator-mixing: allowed" in message


def test_one_queue_per_gpu_type_passes() -> None:
    result = run(
        RULE, [*platform(), queue("research-l4", "cpu", "l4"), queue("research-h100", "cpu", "h100")]
    )
    assert result.clean
    assert result.cannot_check is None


def test_stopping_fungibility_still_spills_when_nothing_can_be_preempted() -> None:
    """whenCanPreempt/whenCanBorrow MayStopSearch do not stop the spill: upstream "cannot preempt in
    cohort (oracle returns None) for the first flavor, tries the second flavor (which fits); using
    deprecated WhenCanBorrow=MayStopSearch,WhenCanPreempt=MayStopSearch" admits on flavor two,
    because shouldTryNextFlavor returns true for noFit / noPreemptionCandidates whatever the
    policy.  The finding stays, naming only that case (upstream "preempt before try next flavor")."""
    stop = {"whenCanBorrow": "MayStopSearch", "whenCanPreempt": "MayStopSearch"}
    result = run(RULE, [*platform(), queue("research", "l4", "h100", flavorFungibility=stop)])
    assert len(result.violations) == 1
    assert "no room and nothing to preempt" in result.messages[0]
    assert "also when" not in result.messages[0]
    # v1beta1's deprecated names of MayStopSearch behave the same.
    old = {"whenCanBorrow": "Borrow", "whenCanPreempt": "Preempt"}
    result = run(
        RULE, [*platform(), queue("research", "l4", "h100", version="v1beta1", flavorFungibility=old)]
    )
    assert len(result.violations) == 1
    assert "also when" not in result.messages[0]


def test_when_can_borrow_try_next_flavor_is_named() -> None:
    """Upstream "borrow try next flavor, found the second flavor" vs "borrow before try next flavor"."""
    fung = {"whenCanBorrow": "TryNextFlavor", "whenCanPreempt": "MayStopSearch"}
    result = run(RULE, [*platform(), queue("research", "l4", "h100", flavorFungibility=fung)])
    assert len(result.violations) == 1
    assert "also when it would have to borrow there (whenCanBorrow TryNextFlavor)" in result.messages[0]
    assert "could preempt there" not in result.messages[0]


def test_expensive_first_is_mixing_too() -> None:
    result = run(RULE, [*platform(), queue("training", "h100", "l4")])
    assert len(result.violations) == 1
    assert "h100 (nvidia-h100-80gb), l4 (nvidia-l4)" in result.messages[0]


def test_the_opt_in_annotation_silences_only_with_its_value() -> None:
    mixed = queue("research", "l4", "h100")
    allowed = patch(mixed, "metadata.annotations", {"gpu-batch/accelerator-mixing": "allowed"})
    assert run(RULE, [*platform(), allowed]).clean
    other = patch(mixed, "metadata.annotations", {"gpu-batch/accelerator-mixing": "yes"})
    assert len(run(RULE, [*platform(), other]).violations) == 1


def test_flavor_labels_name_the_type_without_pools() -> None:
    """gke-accelerator (or a GPU machine type) on the flavor itself decides, with no pool declared
    (node auto-provisioning creates them)."""
    objects = [
        resource_flavor("l4", **{"cloud.google.com/gke-accelerator": "nvidia-l4"}),
        resource_flavor("a100", **{"node.kubernetes.io/instance-type": "a2-highgpu-1g"}),
        queue("research", "l4", "a100"),
    ]
    result = run(RULE, objects)
    assert len(result.violations) == 1
    assert "l4 (nvidia-l4), a100 (nvidia-tesla-a100)" in result.messages[0]


def test_two_flavors_of_one_gpu_type_pass() -> None:
    """On-demand L4 then spot L4 is ordinary fungibility: the GPU type does not change."""
    spot = patch(queued_pool("l4-spot"), "nodeConfig.machineType", "g2-standard-24")
    objects = [*platform(), spot, resource_flavor("l4-spot", **{NODEPOOL: "l4-spot"})]
    assert run(RULE, [*objects, queue("research", "cpu", "l4", "l4-spot")]).clean


def test_unknown_annotations_cannot_be_checked_yet() -> None:
    mixed = patch(queue("research", "l4", "h100"), "metadata.annotations", UNKNOWN)
    result = run(RULE, [*platform(), mixed])
    assert result.clean
    assert result.cannot_check is not None and "gpu-batch/accelerator-mixing" in result.cannot_check
