"""Pack rules of issue 20 on hand-built resources: the GPU Operator pool settings, GKE sharing,
KAI fractions on GKE-managed pools, and the operator's critical-priority quota."""

from __future__ import annotations

from typing import Any

from gpu_batch_policy.facts.model import StackModel

from tests.policies.pack_harness import UNKNOWN, Res, run
from tests.policies.pack_harness import policy as get_policy
from tests.policies.pack_objects import gke_cluster, helm_release, k8s, patch

POOL_RULE = get_policy("gpu-pool-driver-stack")
FRACTION_RULE = get_policy("kai-fractions-need-gpu-operator")
QUOTA_RULE = get_policy("gpu-operator-critical-quota")
NODE_POOL = "gcp:container/nodePool:NodePool"
LABEL = "gke-no-default-nvidia-gpu-device-plugin"


def gpu_pool(
    name: str = "l4-pool",
    *,
    driver: str | None = "LATEST",
    labels: dict[str, str] | None = None,
    image: str | None = "UBUNTU_CONTAINERD",
    **acc: Any,
) -> Res:
    accelerator: dict[str, Any] = {"type": "nvidia-l4", "count": 1, **acc}
    if driver is not None:
        accelerator["gpuDriverInstallationConfig"] = {"gpuDriverVersion": driver}
    props = {
        "name": name,
        "cluster": "gpu-cluster",
        "location": "us-west1-b",
        "autoscaling": {"totalMinNodeCount": 0, "totalMaxNodeCount": 2},
        "nodeConfig": {
            "machineType": "g2-standard-8",
            **({"imageType": image} if image is not None else {}),
            "guestAccelerators": [accelerator],
            "labels": labels or {},
            "taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"}],
        },
    }
    return Res(NODE_POOL, name, props)


def operator_pool(name: str = "l4-pool", image: str | None = "UBUNTU_CONTAINERD") -> Res:
    return gpu_pool(name, driver="INSTALLATION_DISABLED", labels={LABEL: "true"}, image=image)


def gpu_operator(namespace: str = "gpu-operator", **values: Any) -> Res:
    release = helm_release("gpu-operator", "gpu-operator", values, namespace)
    release = patch(release, "version", "v26.7.0")
    return patch(release, "repositoryOpts", {"repo": "https://helm.ngc.nvidia.com/nvidia"})


def quota(namespace: str = "gpu-operator", values: list[str] | None = None) -> Res:
    scope = {
        "matchExpressions": [
            {
                "scopeName": "PriorityClass",
                "operator": "In",
                "values": values or ["system-node-critical", "system-cluster-critical"],
            }
        ]
    }
    return k8s(
        "v1",
        "ResourceQuota",
        "gpu-operator-quota",
        namespace=namespace,
        spec={"hard": {"pods": "100"}, "scopeSelector": scope},
    )


def fraction_pod(fraction: str = "0.5") -> Res:
    pod_spec = {
        "schedulerName": "kai-scheduler",
        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
        "containers": [
            {"name": "worker", "image": "rayproject/ray:2.46.0", "resources": {"requests": {"cpu": "1"}}}
        ],
    }
    template = {"metadata": {"annotations": {"gpu-fraction": fraction}}, "spec": pod_spec}
    return k8s(
        "apps/v1", "Deployment", "half-gpu", namespace="team-a", spec={"replicas": 2, "template": template}
    )


# --- gpu-pool-driver-stack --------------------------------------------------------------------
def test_a_gpu_operator_pool_needs_both_gke_settings() -> None:
    assert run(POOL_RULE, [gke_cluster(), gpu_operator(), operator_pool()]).clean
    gke_driver = gpu_pool(driver="LATEST", labels={LABEL: "true"})
    (message,) = run(POOL_RULE, [gke_cluster(), gpu_operator(), gke_driver]).messages
    assert "gpuDriverVersion is 'LATEST' while the NVIDIA GPU Operator manages the pool" in message
    assert "INSTALLATION_DISABLED" in message
    unset = gpu_pool(driver=None, labels={LABEL: "true"})
    assert (
        "unset installs GKE's default driver" in run(POOL_RULE, [gke_cluster(), gpu_operator(), unset]).text()
    )
    no_label = gpu_pool(driver="INSTALLATION_DISABLED")
    (message,) = run(POOL_RULE, [gke_cluster(), gpu_operator(), no_label]).messages
    assert f"nodeConfig.labels.{LABEL} is unset" in message and "device plugin" in message


def test_pools_opted_out_of_the_operator_keep_gke_drivers() -> None:
    opted_out = gpu_pool("gke-pool", labels={"nvidia.com/gpu.deploy.operands": "false"})
    assert run(POOL_RULE, [gke_cluster(), gpu_operator(), operator_pool(), opted_out]).clean


def test_an_operator_listed_as_external_manages_the_pools() -> None:
    external = {"externalObjects": [{"kind": "Release", "name": "gpu-operator"}]}
    assert run(POOL_RULE, [gke_cluster(), operator_pool()], external).clean
    driver, label = run(POOL_RULE, [gke_cluster(), gpu_pool()], external).messages
    assert "gpuDriverVersion is 'LATEST' while the NVIDIA GPU Operator manages the pool" in driver
    assert f"{LABEL} is unset while the NVIDIA GPU Operator manages the pool" in label


def test_a_pool_without_gke_driver_and_no_operator_is_left_to_the_program() -> None:
    """Another program may install a driver itself (GKE's "Manually install drivers"): no proof."""
    assert run(POOL_RULE, [gke_cluster(), operator_pool()]).clean


def test_gke_sharing_and_its_limits() -> None:
    shared = gpu_pool(gpuSharingConfig={"gpuSharingStrategy": "TIME_SHARING", "maxSharedClientsPerGpu": 4.0})
    assert run(POOL_RULE, [gke_cluster(), shared]).clean
    too_many = gpu_pool(gpuSharingConfig={"gpuSharingStrategy": "MPS", "maxSharedClientsPerGpu": 49.0})
    assert "maxSharedClientsPerGpu is 49" in run(POOL_RULE, [gke_cluster(), too_many]).text()
    bad = gpu_pool(gpuSharingConfig={"gpuSharingStrategy": "SPACE_SHARING", "maxSharedClientsPerGpu": 2.0})
    assert "TIME_SHARING or MPS" in run(POOL_RULE, [gke_cluster(), bad]).text()


def test_gke_sharing_cannot_apply_to_a_gpu_operator_pool() -> None:
    both = gpu_pool(
        driver="INSTALLATION_DISABLED",
        labels={LABEL: "true"},
        gpuSharingConfig={"gpuSharingStrategy": "TIME_SHARING", "maxSharedClientsPerGpu": 2.0},
    )
    (message,) = run(POOL_RULE, [gke_cluster(), gpu_operator(), both]).messages
    assert "gpuSharingStrategy is 'TIME_SHARING' while the NVIDIA GPU Operator manages the pool" in message


def test_unknown_settings_wait() -> None:
    unknown = gpu_pool(driver=UNKNOWN, labels={LABEL: "true"})
    assert run(POOL_RULE, [gke_cluster(), gpu_operator(), unknown]).clean


# --- kai-fractions-need-gpu-operator ----------------------------------------------------------
def test_fractions_on_gke_managed_pools_never_get_a_gpu() -> None:
    (message,) = run(FRACTION_RULE, [gke_cluster(), gpu_pool(), fraction_pod()]).messages
    assert "'l4-pool' (gke)" in message and "never sees a GPU" in message
    assert "gpuStack: gpu-operator" in message
    assert run(FRACTION_RULE, [gke_cluster(), gpu_operator(), operator_pool(), fraction_pod()]).clean


def test_gpu_memory_requests_are_fractions_too() -> None:
    pod = fraction_pod()
    pod.props["spec"]["template"]["metadata"]["annotations"] = {"gpu-memory": "2000"}
    assert len(run(FRACTION_RULE, [gke_cluster(), gpu_pool(), pod]).violations) == 1


def test_whole_gpu_pods_on_gke_pools_are_fine() -> None:
    pod = fraction_pod()
    pod.props["spec"]["template"]["metadata"]["annotations"] = {}
    assert run(FRACTION_RULE, [gke_cluster(), gpu_pool(), pod]).clean


# --- gpu-operator-critical-quota --------------------------------------------------------------
def test_the_operator_namespace_needs_the_critical_quota() -> None:
    (message,) = run(QUOTA_RULE, [gke_cluster(), gpu_operator()]).messages
    assert "namespace 'gpu-operator' has no ResourceQuota scoped to PriorityClass" in message
    assert run(QUOTA_RULE, [gke_cluster(), gpu_operator(), quota()]).clean
    partial = quota(values=["system-cluster-critical"])
    assert len(run(QUOTA_RULE, [gke_cluster(), gpu_operator(), partial]).violations) == 1
    elsewhere = quota(namespace="other")
    assert len(run(QUOTA_RULE, [gke_cluster(), gpu_operator(), elsewhere]).violations) == 1


def test_a_malformed_quota_scope_is_not_a_crash() -> None:
    """Values that are not class names (a map, a number) admit no priority class: the API server's
    ScopedResourceSelectorRequirement takes strings, so such a quota covers nothing here."""
    odd = quota(values=[{"a": 1}, 5])  # type: ignore[list-item]
    assert len(run(QUOTA_RULE, [gke_cluster(), gpu_operator(), odd]).violations) == 1


def test_only_gke_stacks_need_the_quota() -> None:
    assert run(QUOTA_RULE, [gpu_operator()]).clean


# --- GKE sharing: units and the one-GPU-per-container limit -----------------------------------
SHARE_RULE = get_policy("gke-shared-gpu-one-per-container")
TIME_SHARING_4 = {"gpuSharingStrategy": "TIME_SHARING", "maxSharedClientsPerGpu": 4.0}


def gpu_pod(gpus: int) -> Res:
    container = {
        "name": "train",
        "image": "trainer:1",
        "resources": {"limits": {"nvidia.com/gpu": str(gpus)}},
    }
    template = {"spec": {"containers": [container]}}
    return k8s(
        "apps/v1", "Deployment", "trainer", namespace="team-a", spec={"replicas": 1, "template": template}
    )


def two_gpu_shared_pool() -> Res:
    pool = gpu_pool(gpuSharingConfig=TIME_SHARING_4)
    pool.props["nodeConfig"]["machineType"] = "g2-standard-24"
    pool.props["nodeConfig"]["guestAccelerators"][0]["count"] = 2
    return pool


def test_a_shared_pool_counts_each_gpu_as_its_clients() -> None:
    model = StackModel.from_plain([(NODE_POOL, two_gpu_shared_pool().props, "urn:p", "p")], render=False)
    (pool,) = model.node_pools()
    assert pool.gpus_per_node() == 8, "2 L4s x 4 time-sharing clients = 8 nvidia.com/gpu"


def test_more_than_one_shared_gpu_per_container_is_refused_on_multi_gpu_nodes() -> None:
    (message,) = run(SHARE_RULE, [gke_cluster(), two_gpu_shared_pool(), gpu_pod(2)]).messages
    assert "container 'train' requests 2 nvidia.com/gpu" in message and "'l4-pool'" in message
    assert run(SHARE_RULE, [gke_cluster(), two_gpu_shared_pool(), gpu_pod(1)]).clean
    # One physical GPU per node, or no sharing: not judged / fine.
    single = gpu_pool(gpuSharingConfig=TIME_SHARING_4)
    assert run(SHARE_RULE, [gke_cluster(), single, gpu_pod(2)]).clean
    unshared = two_gpu_shared_pool()
    del unshared.props["nodeConfig"]["guestAccelerators"][0]["gpuSharingConfig"]
    assert run(SHARE_RULE, [gke_cluster(), unshared, gpu_pod(2)]).clean


def test_the_driver_manager_needs_ubuntu_nodes() -> None:
    cos = operator_pool(image=None)  # GKE's default image, COS_CONTAINERD
    (message,) = run(POOL_RULE, [gke_cluster(), gpu_operator(), cos]).messages
    assert "nodeConfig.imageType is unset while the NVIDIA GPU Operator manages the pool" in message
    assert "UBUNTU_CONTAINERD" in message
    # Google's installer route (driver.enabled: false) is documented for COS.
    google_route = gpu_operator(driver={"enabled": False})
    assert run(POOL_RULE, [gke_cluster(), google_route, operator_pool(image="COS_CONTAINERD")]).clean
