"""gcs-fuse-mount-served: a GCS FUSE mount works only with GKE's sidecar annotation and on a cluster
with the driver add-on (gcs-fuse-csi-driver NodePublishVolume: "failed to find the sidecar
container in Pod spec"; terraform-provider-google addons_config.gcs_fuse_csi_driver_config)."""

from __future__ import annotations

from typing import Any

from gpu_batch_policy.rules.gke.gcs_fuse import check_gcs_fuse

from tests.policies.pack_harness import policy as get_policy
from tests.policies.pack_harness import run
from tests.policies.pack_objects import gke_cluster, k8s
from tests.stack_runner import config_value
from tests.test_tenancy_findings import findings, items, model

RULE = get_policy("gcs-fuse-mount-served")
ADD_ON = {"gcsFuseCsiDriverConfig": {"enabled": True}}


def job(annotated: bool = True, driver: str = "gcsfuse.csi.storage.gke.io") -> Any:
    template: dict[str, Any] = {
        "spec": {
            "serviceAccountName": "workload",
            "restartPolicy": "Never",
            "containers": [
                {"name": "c", "image": "busybox", "volumeMounts": [{"name": "data", "mountPath": "/d"}]}
            ],
            "volumes": [{"name": "data", "csi": {"driver": driver, "volumeAttributes": {"bucketName": "b"}}}],
        }
    }
    if annotated:
        template["metadata"] = {"annotations": {"gke-gcsfuse/volumes": "true"}}
    return k8s("batch/v1", "Job", "train", namespace="research", spec={"template": template})


def test_a_served_mount_passes() -> None:
    assert run(RULE, [gke_cluster(addonsConfig=ADD_ON), job()]).clean


def test_a_mount_without_the_add_on_is_caught() -> None:
    (message,) = run(RULE, [gke_cluster(), job()]).messages
    assert "add-on" in message and "data" in message


def test_a_mount_without_the_sidecar_annotation_is_caught() -> None:
    (message,) = run(RULE, [gke_cluster(addonsConfig=ADD_ON), job(annotated=False)]).messages
    assert "gke-gcsfuse/volumes" in message


def test_other_csi_drivers_and_foreign_programs_are_not_judged() -> None:
    assert run(RULE, [gke_cluster(), job(driver="pd.csi.storage.gke.io")]).clean
    assert run(RULE, [job()]).clean  # no GKE cluster here: another program's objects


def test_the_stack_turns_the_add_on_on_for_a_mounted_bucket() -> None:
    """prod with a Job mounting a team bucket: caught until the team's bucket entry says mount."""
    teams = config_value("prod", "gpu-batch:teams")
    teams[0]["workloadIdentity"] = {"buckets": [{"bucket": "research-datasets"}]}
    urn = "urn:pulumi:prod::gpu-batch::kubernetes:batch/v1:Job::train"
    mounting = ("kubernetes:batch/v1:Job", job().props, urn, "train")
    without = model([*items("prod", {"gpu-batch:teams": teams}), mounting])
    assert findings(check_gcs_fuse, without, "prod", "gcs-fuse-mount-served")
    teams[0]["workloadIdentity"]["buckets"][0]["mount"] = True
    served = model([*items("prod", {"gpu-batch:teams": teams}), mounting])
    assert not findings(check_gcs_fuse, served, "prod", "gcs-fuse-mount-served")
