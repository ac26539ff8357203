"""kuberay-cluster-features and kuberay-rayjob-deletion, written from KubeRay v1.7.0's test table.

Source: ray-project/kuberay v1.7.0 ``ray-operator/controllers/ray/utils/validation_test.go``; each
test names the Go test function (and cases) it follows.
"""

from __future__ import annotations

from typing import Any

import pytest
from gpu_batch_policy.rules.webhooks.kuberay_features import POLICIES, ray_version_below

from tests.policies.workload_stack import (
    Registration,
    kuberay_release,
    pod,
    ray_cluster,
    ray_job,
    run,
    workers,
)

RULES = {p.name: p for p in POLICIES}
FEATURES, DELETION = RULES["kuberay-cluster-features"], RULES["kuberay-rayjob-deletion"]


def cluster(
    annotations: dict[str, str] | None = None, head_env: dict[str, str] | None = None, **spec: Any
) -> Registration:
    head = pod()
    if head_env:
        head["spec"]["containers"][0]["env"] = [{"name": k, "value": v} for k, v in head_env.items()]
    reg = ray_cluster("rc", head=head, groups=[workers("small-group", pod(), 1)])
    reg[1]["spec"].update(spec)
    if annotations:
        reg[1]["metadata"]["annotations"] = annotations
    return reg


def refused(
    reg: Registration, *parts: str, rule: Any = FEATURES, extra: tuple[Registration, ...] = ()
) -> bool:
    return run(rule, [reg, *extra]).mentions("KubeRay v1.7.0", *parts)


def clean(reg: Registration, rule: Any = FEATURES, extra: tuple[Registration, ...] = ()) -> bool:
    outcome = run(rule, [reg, *extra])
    return outcome.violations == [] and outcome.cannot_check is None


def test_plain_cluster_passes() -> None:
    assert clean(cluster())


def test_gcs_fault_tolerance_options() -> None:
    """TestValidateRayClusterSpecGcsFaultToleranceOptions, TestValidateRayClusterSpecRedisPassword,
    TestValidateRayClusterSpecRedisUsername, TestValidateRayClusterSpecEmbeddedGCSFeatureGate."""
    ft = {"gcsFaultToleranceOptions": {"redisAddress": "redis:6379"}}
    assert clean(cluster(**ft))
    assert refused(cluster({"ray.io/ft-enabled": "true"}, **ft), "ft-enabled annotation")
    assert refused(cluster(head_env={"RAY_REDIS_ADDRESS": "redis:6379"}), "without GCS fault tolerance")
    assert clean(cluster({"ray.io/ft-enabled": "true"}, head_env={"RAY_REDIS_ADDRESS": "redis:6379"}))
    assert refused(cluster(head_env={"REDIS_PASSWORD": "x"}, **ft), "REDIS_PASSWORD")
    assert refused(cluster({"ray.io/external-storage-namespace": "ns"}, **ft), "external-storage-namespace")
    assert refused(cluster(head_env={"REDIS_USERNAME": "u"}), "redis username")
    rocks = {"gcsFaultToleranceOptions": {"backend": "rocksdb"}}
    assert refused(cluster(**rocks), "GCSFaultToleranceEmbeddedStorage")
    assert refused(
        cluster(gcsFaultToleranceOptions={"redisAddress": "r", "storage": {"size": "1Gi"}}),
        "storage with the redis backend",
    )


def test_embedded_gcs_with_gate_on() -> None:
    """TestValidateGcsFaultToleranceEmbeddedReservedVolume: with the gate on (a release lists it), the
    reserved volume and redis fields are refused."""
    gate_on = kuberay_release()
    gate_on[1]["values"]["featureGates"] = [{"name": "GCSFaultToleranceEmbeddedStorage", "enabled": True}]
    rocks = {"gcsFaultToleranceOptions": {"backend": "rocksdb"}}
    assert clean(cluster(**rocks), extra=(gate_on,))
    redis_field = {"gcsFaultToleranceOptions": {"backend": "rocksdb", "redisAddress": "r"}}
    assert refused(cluster(**redis_field), "redisAddress with the rocksdb backend", extra=(gate_on,))
    reg = cluster(**rocks)
    reg[1]["spec"]["headGroupSpec"]["template"]["spec"]["volumes"] = [{"name": "gcs-storage", "emptyDir": {}}]
    assert refused(reg, "head volume 'gcs-storage'", extra=(gate_on,))


@pytest.mark.parametrize(
    ("version", "k8s_auth", "ok"),
    [
        ("2.52.0", False, True),  # "Valid Ray version 2.52.0"
        ("2.52.0", True, False),  # "Invalid Ray version 2.52.0 with k8s token auth"
        ("2.55.0", True, True),  # "Valid Ray version 2.55.0 with k8s token auth"
        ("3.0.0", False, True),  # "Valid Ray version 3.0.0"
        ("2.50.0", False, False),  # "Invalid Ray version 2.50.0"
        ("invalid-version", False, False),  # "Invalid Ray version format"
        ("", False, False),  # "Empty Ray version"
    ],
)
def test_ray_version_for_auth(version: str, k8s_auth: bool, ok: bool) -> None:
    """TestValidateRayClusterSpecRayVersionForAuth."""
    reg = cluster(rayVersion=version, authOptions={"mode": "token", "enableK8sTokenAuth": k8s_auth})
    assert clean(reg) if ok else refused(reg, "authOptions")


def test_auth_mode_and_kinds() -> None:
    """TestValidateRayClusterSpec_Auth, TestValidateRayJobSpec / TestValidateRayServiceSpec (k8s token auth)."""
    assert refused(cluster(authOptions={"enableK8sTokenAuth": True}), "without mode 'token'")
    job = ray_job("rj", groups=[workers("w", pod(), 1)])
    job[1]["spec"]["rayClusterSpec"].update(
        rayVersion="2.55.0", authOptions={"mode": "token", "enableK8sTokenAuth": True}
    )
    assert refused(job, "a RayJob does not support")


def test_network_policy() -> None:
    """TestValidateRayClusterSpec_NetworkPolicyRequiresFeatureGate and TestValidateNetworkPolicy."""
    assert refused(cluster(networkPolicy={}), "RayClusterNetworkPolicy")
    gate_on = kuberay_release()
    gate_on[1]["values"]["featureGates"] = [{"name": "RayClusterNetworkPolicy", "enabled": True}]
    assert clean(cluster(networkPolicy={"mode": "DenyAll"}), extra=(gate_on,))
    egress_only = {"mode": "DenyAllEgress", "head": {"ingressRules": [{}]}}
    assert refused(cluster(networkPolicy=egress_only), "ingressRules", extra=(gate_on,))
    unknown_group = {"workerGroups": [{"groupName": "nope"}]}
    assert refused(cluster(networkPolicy=unknown_group), "names no worker group", extra=(gate_on,))


def test_tls_options() -> None:
    """TestValidateRayClusterSpec_TLSOptionsRequiresFeatureGate and TestValidateTLSOptions."""
    assert refused(cluster(tlsOptions={"enabled": True}), "RayClusterMTLS")
    gate_on = kuberay_release()
    gate_on[1]["values"]["featureGates"] = [{"name": "RayClusterMTLS", "enabled": True}]
    assert clean(cluster(tlsOptions={"enabled": True}), extra=(gate_on,))
    assert refused(
        cluster(head_env={"RAY_USE_TLS": "1"}, tlsOptions={"enabled": True}), "RAY_USE_TLS", extra=(gate_on,)
    )


def test_history_server_gate() -> None:
    """TestValidateRayClusterSpec_HistoryServerRequiresFeatureGate."""
    assert refused(
        cluster(historyServerOptions={"collectorOptions": {"image": "x"}}), "RayClusterHistoryServer"
    )


def test_worker_priority() -> None:
    """TestValidateRayClusterSpec_Priority: needs Ray 2.56.0 and autoscaler v2."""
    reg = cluster(rayVersion="2.56.0", enableInTreeAutoscaling=True, autoscalerOptions={"version": "v2"})
    reg[1]["spec"]["workerGroupSpecs"][0]["priority"] = 5
    assert clean(reg)
    old = cluster(rayVersion="2.55.0", enableInTreeAutoscaling=True, autoscalerOptions={"version": "v2"})
    old[1]["spec"]["workerGroupSpecs"][0]["priority"] = 5
    assert refused(old, "2.56.0")
    v1 = cluster(rayVersion="2.56.0")
    v1[1]["spec"]["workerGroupSpecs"][0]["priority"] = 5
    assert refused(v1, "without autoscaler v2")


def test_autoscaler_start_cmd_env() -> None:
    reg = cluster(autoscalerOptions={"env": [{"name": "KUBERAY_GEN_AUTOSCALER_START_CMD", "value": "x"}]})
    assert refused(reg, "KUBERAY_GEN_AUTOSCALER_START_CMD")


def test_cluster_upgrade_strategy() -> None:
    """TestValidateRayClusterUpgradeOptions."""
    assert clean(cluster(upgradeStrategy={"type": "Recreate"}))
    assert refused(cluster(upgradeStrategy={"type": "Rolling"}), "upgradeStrategy.type 'Rolling'")
    owned = cluster(upgradeStrategy={"type": "Recreate"})
    owned[1]["metadata"]["labels"] = {"ray.io/originated-from-crd": "RayJob"}
    assert refused(owned, "created by a RayJob")


def rayjob(**spec: Any) -> Registration:
    reg = ray_job("rj", groups=[workers("w", pod(), 1)])
    reg[1]["spec"].update(spec)
    return reg


def test_legacy_deletion_policies() -> None:
    """TestValidateRayJobSpecWithFeatureGate: ClusterSelector with DeleteCluster/DeleteWorkers, one of
    onSuccess/onFailure only, DeleteNone with shutdownAfterJobFinishes, and a valid pair."""
    both = {"onSuccess": {"policy": "DeleteCluster"}, "onFailure": {"policy": "DeleteCluster"}}
    assert clean(rayjob(deletionStrategy=both), rule=DELETION)
    selector = rayjob(deletionStrategy=both, clusterSelector={"ray.io/cluster": "c"})
    del selector[1]["spec"]["rayClusterSpec"]
    assert refused(selector, "clusterSelector", rule=DELETION)
    assert refused(
        rayjob(deletionStrategy={"onSuccess": {"policy": "DeleteSelf"}}), "only one of", rule=DELETION
    )
    none = {"onSuccess": {"policy": "DeleteNone"}, "onFailure": {"policy": "DeleteNone"}}
    assert refused(rayjob(deletionStrategy=none, shutdownAfterJobFinishes=True), "DeleteNone", rule=DELETION)


def test_deletion_rules() -> None:
    """TestValidateRayJobSpecWithFeatureGate, the deletionRules cases."""

    def rule(policy: str, ttl: int = 0, **condition: Any) -> dict[str, Any]:
        return {
            "policy": policy,
            "condition": {"ttlSeconds": ttl, **(condition or {"jobStatus": "SUCCEEDED"})},
        }

    ordered = [rule("DeleteWorkers", 10), rule("DeleteCluster", 20), rule("DeleteSelf", 30)]
    assert clean(rayjob(deletionStrategy={"deletionRules": ordered}), rule=DELETION)
    unordered = [rule("DeleteCluster", 30), rule("DeleteSelf", 10)]
    assert refused(
        rayjob(deletionStrategy={"deletionRules": unordered}), "DeleteSelf TTL (10)", rule=DELETION
    )
    twice = [rule("DeleteSelf"), rule("DeleteSelf")]
    assert refused(rayjob(deletionStrategy={"deletionRules": twice}), "repeats the rule", rule=DELETION)
    neither = [{"policy": "DeleteSelf", "condition": {"ttlSeconds": 0}}]
    assert refused(rayjob(deletionStrategy={"deletionRules": neither}), "exactly one of", rule=DELETION)
    with_shutdown = rayjob(deletionStrategy={"deletionRules": ordered}, shutdownAfterJobFinishes=True)
    assert refused(with_shutdown, "both shutdownAfterJobFinishes", rule=DELETION)
    assert refused(rayjob(deletionStrategy={}), "neither", rule=DELETION)


@pytest.mark.parametrize(
    ("text", "below"),
    [
        ("2.52.0", False),
        ("2.51.9", True),
        ("v2.53", False),
        ("3.0.0rc1", False),
        ("01.2", None),
        ("2", None),
        ("x", None),
    ],
)
def test_parse_generic(text: str, below: bool | None) -> None:
    """apimachinery ``version.ParseGeneric``: two or more numeric fields, trailing data allowed."""
    assert ray_version_below(text, (2, 52, 0)) is below
