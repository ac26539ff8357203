"""A pod template that mounts a Cloud Storage bucket through GKE's GCS FUSE CSI driver, in a stack
whose cluster cannot serve it (issue 27 item 4: per-team buckets, optionally through GCS FUSE).

How the mount works on GKE (GoogleCloudPlatform/gcs-fuse-csi-driver): the pod declares a ``csi``
volume with ``driver: gcsfuse.csi.storage.gke.io``; GKE's mutating webhook injects the
``gke-gcsfuse-sidecar`` only into pods annotated ``gke-gcsfuse/volumes: "true"``
(``pkg/webhook/mutatingwebhook.go``; ``sidecar_spec.go`` ``GetSidecarContainerSpec``), and the
node driver refuses to publish the volume of a pod without that sidecar
(``pkg/csi_driver/node.go`` ``NodePublishVolume``, "failed to find the sidecar container in Pod
spec").  The driver itself runs only when the cluster enables the add-on,
``addonsConfig.gcsFuseCsiDriverConfig.enabled`` (terraform-provider-google
``addons_config.gcs_fuse_csi_driver_config``).  Either missing: the pod never starts
(ContainerCreating), so both are mandatory.  A stack without a GKE cluster (another program's
Kubernetes objects) is not judged for the add-on.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import Policy

from ...facts.model import StackModel
from ...facts.pod_templates import owned_templates
from ...primitives.values import Unknown, dig
from ..kit.builders import stack_policy
from ..kit.report import Reporter

GCS_FUSE_DRIVER = "gcsfuse.csi.storage.gke.io"
INJECT_ANNOTATION = "gke-gcsfuse/volumes"


def fuse_volumes(spec: Any) -> list[str]:
    """Names of the template's GCS FUSE CSI volumes."""
    volumes = dig(spec, "volumes")
    return [
        str(v.get("name"))
        for v in (volumes if isinstance(volumes, list) else [])
        if isinstance(v, dict) and dig(v, "csi", "driver") == GCS_FUSE_DRIVER
    ]


def add_on(model: StackModel) -> bool | None:
    """Whether a GKE cluster of the stack runs the driver; None: unknown until apply or no cluster."""
    verdicts = [c.res.get("addonsConfig", "gcsFuseCsiDriverConfig", "enabled") for c in model.gke_clusters()]
    if not verdicts or any(isinstance(v, Unknown) for v in verdicts):
        return None
    return any(v is True for v in verdicts)


def check_gcs_fuse(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    enabled: bool | Unknown | None = Unknown("")  # computed on first use
    for owned in owned_templates(model):
        raw = owned.template.raw
        if isinstance(raw, Unknown):
            continue
        volumes = fuse_volumes(dig(raw, "spec"))
        if not volumes:
            continue
        annotation = dig(raw, "metadata", "annotations", INJECT_ANNOTATION)
        if not isinstance(annotation, Unknown) and str(annotation).lower() != "true":
            reporter.violation(
                owned.owner,
                f"pod template {owned.name} mounts {', '.join(volumes)} through GCS FUSE without the "
                f'annotation {INJECT_ANNOTATION}: "true", so GKE injects no gke-gcsfuse-sidecar and the '
                "driver refuses the mount: the pod never starts",
                f'annotate the pod template {INJECT_ANNOTATION}: "true"',
            )
        if isinstance(enabled, Unknown):
            enabled = add_on(model)
        if enabled is False:
            reporter.violation(
                owned.owner,
                f"pod template {owned.name} mounts {', '.join(volumes)} through GCS FUSE, but no GKE cluster "
                "of the stack enables the GCS FUSE CSI driver add-on: the volume has no driver",
                "set addonsConfig.gcsFuseCsiDriverConfig.enabled on the cluster (gpu-batch: mount: true "
                "on the team's teams[].workloadIdentity.buckets[] entry)",
            )


POLICIES: list[Policy] = [
    stack_policy(
        "gcs-fuse-mount-served",
        "A pod template that mounts a bucket through GCS FUSE carries GKE's sidecar annotation, on a "
        "cluster with the GCS FUSE CSI driver add-on.",
        check_gcs_fuse,
    ),
]
