"""A Kubernetes provider for the new cluster, authenticated the way GKE wants today.

The kubeconfig uses the ``gke-gcloud-auth-plugin`` exec credential plugin: no static token or
client certificate ever lands in state, and the obsolete ``auth-provider: gcp`` form (still in
old Pulumi examples) is not used.  The kubeconfig is a secret output all the same: it names the
endpoint and CA of a private control plane.
"""

from __future__ import annotations

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

_KUBECONFIG = """apiVersion: v1
kind: Config
clusters:
- name: {name}
  cluster:
    server: https://{endpoint}
    certificate-authority-data: {ca}
contexts:
- name: {name}
  context:
    cluster: {name}
    user: {name}
current-context: {name}
users:
- name: {name}
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1beta1
      command: gke-gcloud-auth-plugin
      installHint: Install gke-gcloud-auth-plugin, see https://cloud.google.com/kubernetes-engine/docs/how-to/cluster-access-for-kubectl
      provideClusterInfo: true
"""


def kubeconfig_for(cluster: gcp.container.Cluster, *, dns_endpoint: bool = False) -> pulumi.Output[str]:
    """The cluster's exec-plugin kubeconfig, marked secret.

    With ``dns_endpoint`` the server is the cluster's DNS-based endpoint
    (``controlPlaneEndpointsConfig.dnsEndpointConfig.endpoint``, ``gke-....gke.goog``), which
    presents a publicly trusted certificate rather than the cluster CA (what
    ``gcloud container clusters get-credentials --dns-endpoint`` writes), so no CA is pinned.
    """
    if dns_endpoint:
        endpoint = cluster.control_plane_endpoints_config.apply(
            lambda c: c.dns_endpoint_config.endpoint if c and c.dns_endpoint_config else None
        )
        text = pulumi.Output.all(cluster.name, endpoint).apply(
            lambda a: _KUBECONFIG.replace("    certificate-authority-data: {ca}\n", "").format(
                name=a[0], endpoint=a[1]
            )
        )
        return pulumi.Output.secret(text)
    text = pulumi.Output.all(
        cluster.name, cluster.endpoint, cluster.master_auth.cluster_ca_certificate
    ).apply(lambda a: _KUBECONFIG.format(name=a[0], endpoint=a[1], ca=a[2]))
    return pulumi.Output.secret(text)


def cluster_provider(
    name: str,
    cluster: gcp.container.Cluster,
    kubeconfig: pulumi.Output[str],
    depends_on: list[pulumi.Resource],
    parent: pulumi.Resource | None = None,
    *,
    retained_objects: bool = False,
) -> k8s.Provider:
    """A provider that only talks to the cluster once ``depends_on`` (the system pool) exists.

    Operators are scheduled on the system pool, so applying anything before that pool is up
    would leave Helm waiting on pods that cannot be placed.

    ``retained_objects``: the provider of every ``retainOnDelete`` object, which *creates by
    upsert*.  Why: a retained object outlives its Pulumi resource -- disabling Kueue or KubeRay,
    renaming the component or moving the stack only makes the engine forget it -- so the next
    create finds it in the cluster.  pulumi-kubernetes >= 4.29 creates with a server-side apply
    PATCH only when the provider sets ``upsertExistingObjects`` (``provider/pkg/await/await.go``
    ``Creation``: ``c.ServerSideApply && (c.UpsertExistingObjects || kinds.IsPatchResource(...))``;
    CHANGELOG 4.29.0), else it POSTs and fails ``AlreadyExists``.  The re-created resource also
    gets a fresh random field manager (``provider/pkg/provider/provider.go`` ``fieldManagerName``:
    annotation, then state, then ``pulumi-kubernetes-<random>``), while the retained object's
    fields belong to the forgotten one, so any changed field (a chart bump while disabled) would
    conflict: the apply is forced (``enablePatchForce``; ``await.go`` ``patchForce``).  Only
    retained objects use that provider; every other object keeps create-conflict semantics, which
    guard against a renamed resource deleting its own object (the provider's
    ``upsertExistingObjects`` doc).
    """
    return k8s.Provider(
        name,
        kubeconfig=kubeconfig,
        # Server-side apply keeps Kueue's large CRDs within annotation limits.
        enable_server_side_apply=True,
        upsert_existing_objects=True if retained_objects else None,
        enable_patch_force=True if retained_objects else None,
        opts=pulumi.ResourceOptions(depends_on=[cluster, *depends_on], parent=parent),
    )
