"""MultiKueue worker credentials through GKE Fleet ClusterProfiles (``multiKueue.credentials: clusterProfile``).

Follows GoogleCloudPlatform/gke-fleet-management ``multikueue-clusterprofile`` (commit dbf58b5e):

* ``1-infrastructure/main.tf`` ``google_project_service.default``: the project's GKE Hub and
  Connect Gateway APIs (:data:`FLEET_APIS`; the other three it lists, Cloud Resource Manager,
  Compute and Container, every stack already needs), ``disable_on_destroy = false``.
* ``google_container_cluster.hub`` / ``.clusters``: every cluster with ``fleet { project }`` and
  Workload Identity; the hub (our manager) alone with the two resource labels
  :data:`MANAGER_LABELS` that make GKE write the fleet's ClusterProfiles into ``kueue-system``
  (GKE fleet-management docs, generate-inventory-for-integrations).
* ``google_project_iam_member.hub-wi-kueue-controller-manager``: :data:`KUEUE_ROLES` for the Kueue
  controller's Kubernetes ServiceAccount as a Workload Identity principal (:func:`kueue_principal`).
* ``2-multikueue/modules/kueue/controller-manager-config.yaml``: the ``MultiKueueClusterProfile``
  gate and the ``google`` provider running ``/plugins/gcp-auth-plugin`` (:func:`access_providers`;
  written as ``accessProviders``, the 0.19.2 name of the setup's deprecated ``credentialsProviders``,
  kubernetes-sigs/kueue v0.19.2 ``apis/config/v1beta2/configuration_types.go`` ``ClusterProfile``).
* ``2-multikueue/modules/kueue/kueue-patches/patch.yaml``: an ``emptyDir`` ``clusterprofile-plugins``,
  an ``add-plugins`` init container copying the plugin from the user-built image into it, and the
  ``manager`` container mounting it read-only at ``/plugins`` (:class:`AuthPluginPatch`).  The
  Kueue 0.19.2 chart has no value for init containers or extra volumes (``values.yaml``), so the
  patch is a server-side-apply ``DeploymentPatch`` of the chart's Deployment.
* ``multikueue-setup.yaml``: each worker's ``MultiKueueCluster`` names ``clusterProfileRef``
  ``<cluster name>-<cluster location>`` (:func:`cluster_profile_name`); Kueue reads that
  ClusterProfile from its own namespace (v0.19.2 ``multikueuecluster.go``
  ``getRestConfigFromClusterProfile``, ``c.configNamespace``).  The naming is the setup's, for
  regional clusters; for a zonal cluster it is assumed the same (``<name>-<zone>``), not verified.
* kubernetes-sigs/kueue v0.19.2 ``site/content/en/docs/tasks/manage/setup_multikueue.md``
  ("Setup MultiKueue with ClusterProfile API"): the provider's name must match the
  ``accessProviders`` name GKE writes into its ClusterProfiles (``google``), and ClusterProfiles
  live in Kueue's namespace; gke-fleet-management ``gcp-auth-plugin/Dockerfile`` puts the
  plugin at ``/gcp-auth-plugin`` in its image, which the init container copies.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

from components import service_apis
from components.kueue_config import KUEUE_NAMESPACE, KUEUE_RELEASE_NAME

FLEET_APIS: Final = ("gkehub.googleapis.com", "connectgateway.googleapis.com")
KUEUE_ROLES: Final = ("roles/container.developer", "roles/gkehub.gatewayEditor")
MANAGER_LABELS: Final = {
    "fleet-clusterinventory-management-cluster": "true",
    "fleet-clusterinventory-namespace": KUEUE_NAMESPACE,
}
PROVIDER_NAME: Final = "google"
PLUGIN_DIR: Final = "/plugins"
PLUGIN_COMMAND: Final = f"{PLUGIN_DIR}/gcp-auth-plugin"
PLUGIN_VOLUME: Final = "clusterprofile-plugins"
# The chart's Deployment and ServiceAccount: ``{{ include "kueue.fullname" . }}-controller-manager``
# (kueue 0.19.2 chart templates/manager/manager.yaml; fullname is the release name when it
# contains the chart name), its container ``manager``.
KUEUE_DEPLOYMENT: Final = f"{KUEUE_RELEASE_NAME}-controller-manager"
KUEUE_CONTAINER: Final = "manager"


def access_providers() -> tuple[dict[str, Any], ...]:
    """``multiKueue.clusterProfile.accessProviders`` as the setup writes its provider."""
    return (
        {
            "name": PROVIDER_NAME,
            "execConfig": {
                "apiVersion": "client.authentication.k8s.io/v1beta1",
                "command": PLUGIN_COMMAND,
                "interactiveMode": "Never",
            },
        },
    )


def cluster_profile_name(cluster: str, location: str) -> str:
    """The ClusterProfile GKE's fleet writes for a member cluster, as the setup's
    ``multikueue-setup.yaml`` names them (cluster ``multikueue-worker`` in ``europe-west4`` ->
    ``multikueue-worker-europe-west4``)."""
    return f"{cluster}-{location}"


def kueue_principal(project_number: str, project: str) -> str:
    """The Kueue controller's KSA as a Workload Identity Federation for GKE principal."""
    return (
        f"principal://iam.googleapis.com/projects/{project_number}/locations/global/"
        f"workloadIdentityPools/{project}.svc.id.goog/subject/ns/{KUEUE_NAMESPACE}/sa/{KUEUE_DEPLOYMENT}"
    )


class FleetAccess(pulumi.ComponentResource):
    """The project side: the fleet APIs on and the Kueue principal's roles."""

    def __init__(self, name: str, project: str, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("gpu-batch:multikueue:FleetAccess", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        services = service_apis.enable(name, project, FLEET_APIS, child)
        number = gcp.organizations.get_project_output(project_id=project).number
        member = number.apply(lambda n: kueue_principal(str(n), project))
        for role in KUEUE_ROLES:
            gcp.projects.IAMMember(
                f"{name}-{role.removeprefix('roles/').replace('.', '-')}",
                project=project,
                role=role,
                member=member,
                opts=pulumi.ResourceOptions(parent=self, depends_on=services),
            )
        self.register_outputs({})


@dataclass(frozen=True)
class AuthPluginArgs:
    image: str
    namespace: str = KUEUE_NAMESPACE
    deployment: str = KUEUE_DEPLOYMENT


class AuthPluginPatch(pulumi.ComponentResource):
    """The setup's ``patch.yaml`` on the chart's Deployment, as a server-side-apply partial object
    (pulumi-kubernetes ``apps/v1`` ``DeploymentPatch``): only the fields below are owned by it."""

    def __init__(self, name: str, args: AuthPluginArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("gpu-batch:multikueue:AuthPlugin", name, None, opts)
        mount = k8s.core.v1.VolumeMountPatchArgs(name=PLUGIN_VOLUME, mount_path=PLUGIN_DIR)
        k8s.apps.v1.DeploymentPatch(
            f"{name}-deployment",
            metadata=k8s.meta.v1.ObjectMetaPatchArgs(name=args.deployment, namespace=args.namespace),
            spec=k8s.apps.v1.DeploymentSpecPatchArgs(
                template=k8s.core.v1.PodTemplateSpecPatchArgs(
                    spec=k8s.core.v1.PodSpecPatchArgs(
                        volumes=[
                            k8s.core.v1.VolumePatchArgs(
                                name=PLUGIN_VOLUME, empty_dir=k8s.core.v1.EmptyDirVolumeSourcePatchArgs()
                            )
                        ],
                        init_containers=[
                            k8s.core.v1.ContainerPatchArgs(
                                name="add-plugins",
                                image=args.image,
                                command=["cp"],
                                args=["/gcp-auth-plugin", PLUGIN_COMMAND],
                                volume_mounts=[mount],
                            )
                        ],
                        containers=[
                            k8s.core.v1.ContainerPatchArgs(
                                name=KUEUE_CONTAINER,
                                volume_mounts=[
                                    k8s.core.v1.VolumeMountPatchArgs(
                                        name=PLUGIN_VOLUME, mount_path=PLUGIN_DIR, read_only=True
                                    )
                                ],
                            )
                        ],
                    )
                )
            ),
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.register_outputs({})
