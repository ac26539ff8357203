"""Per-team Workload Identity (issue 27 #8): a team's pods act as its own Google service account,
and only its own.  GKE how-to/workload-identity ("link a Kubernetes ServiceAccount to an IAM
service account"): the IAM member ``serviceAccount:<project>.svc.id.goog[<ns>/<ksa>]`` holds
``roles/iam.workloadIdentityUser`` on the account, the KSA carries
``iam.gke.io/gcp-service-account``, every node pool serves the GKE metadata server."""

from __future__ import annotations

import pytest

from preview.harness import RunResult
from stacks.errors import ConfigError
from tests.stack_runner import config_value, of_type, run_stack

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
SA_IAM = "gcp:serviceaccount/iAMMember:IAMMember"
BUCKET_IAM = "gcp:storage/bucketIAMMember:BucketIAMMember"
KSA = "kubernetes:core/v1:ServiceAccount"


@pytest.fixture(scope="module")
def prod() -> RunResult:
    teams = config_value("prod", "gpu-batch:teams")
    teams[0]["workloadIdentity"] = {
        "buckets": [{"bucket": "research-datasets"}, {"bucket": "research-checkpoints", "access": "write"}]
    }
    return run_stack("prod", {"gpu-batch:teams": teams})


def test_only_the_team_s_service_account_may_act_as_its_account(prod: RunResult) -> None:
    (binding,) = of_type(prod, SA_IAM)
    assert binding.inputs["role"] == "roles/iam.workloadIdentityUser"
    assert binding.inputs["member"] == "serviceAccount:gpu-batch-prod.svc.id.goog[research/workload]"
    (ksa,) = [r for r in of_type(prod, KSA) if r.inputs["metadata"]["namespace"] == "research"]
    assert ksa.inputs["metadata"]["name"] == "workload"
    assert "iam.gke.io/gcp-service-account" in ksa.inputs["metadata"]["annotations"]
    # applied asked for nothing: no account, no binding naming its namespace.
    assert not [r for r in of_type(prod, KSA) if r.inputs["metadata"]["namespace"] == "applied"]


def test_bucket_access_is_per_bucket_and_as_declared(prod: RunResult) -> None:
    roles = {r.inputs["bucket"]: r.inputs["role"] for r in of_type(prod, BUCKET_IAM)}
    assert roles == {
        "research-datasets": "roles/storage.objectViewer",
        "research-checkpoints": "roles/storage.objectUser",
    }


def test_every_pool_serves_the_gke_metadata_server(prod: RunResult) -> None:
    pools = of_type(prod, "gcp:container/nodePool:NodePool")
    assert pools and all(
        p.inputs["nodeConfig"]["workloadMetadataConfig"]["mode"] == "GKE_METADATA" for p in pools
    )


def test_a_wrong_access_is_one_config_line() -> None:
    teams = config_value("prod", "gpu-batch:teams")
    teams[0]["workloadIdentity"] = {"buckets": [{"bucket": "x", "access": "admin"}]}
    with pytest.raises(ConfigError, match=r"gpu-batch:teams\[0\]\.workloadIdentity\.buckets\[0\]\.access"):
        run_stack("prod", {"gpu-batch:teams": teams})


CLUSTER = "gcp:container/cluster:Cluster"


def test_a_mounted_bucket_turns_on_gke_s_gcs_fuse_driver_in_place() -> None:
    teams = config_value("prod", "gpu-batch:teams")
    teams[0]["workloadIdentity"] = {"buckets": [{"bucket": "research-datasets", "mount": True}]}
    (cluster,) = of_type(run_stack("prod", {"gpu-batch:teams": teams}), CLUSTER)
    assert cluster.inputs["addonsConfig"] == {"gcsFuseCsiDriverConfig": {"enabled": True}}
    # Turning it on for a running cluster updates it in place (facts derived from the provider).
    import json

    from tests.stack_runner import ROOT

    facts = json.loads((ROOT / "preview" / "replacement_facts" / "gcp.json").read_text())
    paths = facts["types"][CLUSTER]["paths"]
    assert paths["addonsConfig.gcsFuseCsiDriverConfig.enabled"]["action"] == "update"


def test_without_a_mount_the_cluster_has_no_add_on(prod: RunResult) -> None:
    (cluster,) = of_type(prod, CLUSTER)
    assert "addonsConfig" not in cluster.inputs


def test_a_gcs_fuse_pod_passes_pod_security_restricted() -> None:
    """The pod a team writes (annotation, CSI volume, its ServiceAccount) plus what GKE's webhook
    injects: GoogleCloudPlatform/gcs-fuse-csi-driver pkg/webhook/sidecar_spec.go
    ``GetSidecarContainerSpec`` ("follows Restricted Pod Security Standard": no privilege
    escalation, drop ALL, RuntimeDefault seccomp, runAsNonRoot as 65534) and emptyDir volumes
    (``GetSidecarContainerVolumeSpec``).  A ``csi`` volume is one restricted allows
    (pod-security-admission v0.36.2 policy/check_restrictedVolumes.go)."""
    from gpu_batch_policy.facts.pod_security import enforce_policy

    from components.workloads import RESTRICTED_SECURITY_CONTEXT

    sidecar_context = {
        "allowPrivilegeEscalation": False,
        "readOnlyRootFilesystem": True,
        "capabilities": {"drop": ["ALL"]},
        "seccompProfile": {"type": "RuntimeDefault"},
        "runAsNonRoot": True,
        "runAsUser": 65534,
        "runAsGroup": 65534,
    }
    meta = {"annotations": {"gke-gcsfuse/volumes": "true"}}
    spec = {
        "serviceAccountName": "workload",
        "initContainers": [
            {"name": "gke-gcsfuse-sidecar", "image": "gcs-fuse", "securityContext": sidecar_context}
        ],
        "containers": [
            {
                "name": "train",
                "image": "rayproject/ray:2.52.0",
                "securityContext": RESTRICTED_SECURITY_CONTEXT,
                "volumeMounts": [{"name": "data", "mountPath": "/data"}],
            }
        ],
        "volumes": [
            {
                "name": "data",
                "csi": {"driver": "gcsfuse.csi.storage.gke.io", "volumeAttributes": {"bucketName": "b"}},
            },
            {"name": "gke-gcsfuse-tmp", "emptyDir": {}},
            {"name": "gke-gcsfuse-buffer", "emptyDir": {}},
            {"name": "gke-gcsfuse-cache", "emptyDir": {}},
        ],
    }
    restricted = enforce_policy({"pod-security.kubernetes.io/enforce": "restricted"}, (1, 33))
    assert restricted.forbidden(meta, spec) == []
    # The check can fail: a hostPath in place of the CSI volume is refused.
    host = {**spec, "volumes": [{"name": "data", "hostPath": {"path": "/mnt"}}, *spec["volumes"][1:]]}
    assert restricted.forbidden(meta, host)
