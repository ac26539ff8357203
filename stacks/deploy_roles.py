"""The IAM roles the identity that runs ``pulumi up`` needs, derived from what the program creates.

One entry per resource type token the program registers, with the predefined roles whose
permissions create, update and delete it (Google Cloud IAM "roles and permissions" reference:
``roles/container.admin`` holds ``container.clusters.*``, ``container.operations.*`` and full
access to the Kubernetes API objects of the project's clusters; ``roles/compute.networkAdmin``
``compute.routers.*``, ``compute.networks.*``, ``compute.subnetworks.*``; ``roles/compute.securityAdmin`` ``compute.firewalls.*``;
``roles/iam.serviceAccountAdmin`` ``iam.serviceAccounts.create/delete``;
``roles/resourcemanager.projectIamAdmin`` ``resourcemanager.projects.setIamPolicy``;
``roles/monitoring.editor`` ``monitoring.dashboards.*``, ``monitoring.alertPolicies.*``).  GKE also
checks ``iam.serviceAccounts.actAs`` on the nodes' service account when a cluster or node pool
is created with it (GKE security/configure-node-service-accounts): ``roles/iam.serviceAccountUser``
on that account.

Every Kubernetes object, Helm release and readiness gate goes through the cluster's API server
with the deploy identity's Google credentials, so it needs what ``roles/container.admin`` gives
(it creates CRDs, ClusterRoles, webhooks).  Providers are not cloud resources.

``tests/test_deploy_roles.py`` walks every stack's plan: a type missing here fails, and the roles
here must be exactly those ``docs/ci.md`` and ``docs/runbook.md`` list for the deploy identity.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

CONTAINER_ADMIN: Final = "roles/container.admin"
NODE_SA_USER: Final = "roles/iam.serviceAccountUser"

# Not a type token: a GKE cluster registered in the project's fleet (its ``fleet`` input set).
FLEET_MEMBER: Final = "gcp:container/cluster:Cluster[fleet]"

GCP_ROLES: Final[dict[str, tuple[str, ...]]] = {
    "gcp:container/cluster:Cluster": (CONTAINER_ADMIN, NODE_SA_USER),
    "gcp:container/nodePool:NodePool": (CONTAINER_ADMIN, NODE_SA_USER),
    "gcp:compute/router:Router": ("roles/compute.networkAdmin",),
    "gcp:compute/routerNat:RouterNat": ("roles/compute.networkAdmin",),
    "gcp:compute/firewall:Firewall": ("roles/compute.securityAdmin",),
    # GPUDirect's extra VPCs (stacks/compose/gpudirect.py): compute.networks.* / subnetworks.*.
    "gcp:compute/network:Network": ("roles/compute.networkAdmin",),
    "gcp:compute/subnetwork:Subnetwork": ("roles/compute.networkAdmin",),
    # The SkyPilot Gateway (components/gateway/cloud.py): the proxy-only subnet (above), its
    # reserved internal address (compute.addresses.*, in roles/compute.networkAdmin), the
    # Certificate Manager DNS authorization and certificate (certificatemanager.dnsauthorizations.*,
    # certificatemanager.certs.*: roles/certificatemanager.editor) and the Cloud DNS records
    # (dns.changes.*, dns.resourceRecordSets.*: roles/dns.admin).
    "gcp:compute/address:Address": ("roles/compute.networkAdmin",),
    "gcp:certificatemanager/dnsAuthorization:DnsAuthorization": ("roles/certificatemanager.editor",),
    "gcp:certificatemanager/certificate:Certificate": ("roles/certificatemanager.editor",),
    "gcp:dns/recordSet:RecordSet": ("roles/dns.admin",),
    "gcp:serviceaccount/account:Account": ("roles/iam.serviceAccountAdmin",),
    "gcp:projects/iAMMember:IAMMember": ("roles/resourcemanager.projectIamAdmin",),
    # Per-team Workload Identity (components/team_identity.py): the team account's own IAM policy
    # (iam.serviceAccounts.setIamPolicy) and each bucket's (storage.buckets.setIamPolicy).
    "gcp:serviceaccount/iAMMember:IAMMember": ("roles/iam.serviceAccountAdmin",),
    "gcp:storage/bucketIAMMember:BucketIAMMember": ("roles/storage.admin",),
    # The stack's dashboard and alert policies (components/observability/):
    # roles/monitoring.editor holds monitoring.dashboards.* and monitoring.alertPolicies.*.
    "gcp:monitoring/dashboard:Dashboard": ("roles/monitoring.editor",),
    "gcp:monitoring/alertPolicy:AlertPolicy": ("roles/monitoring.editor",),
    # multiKueue.credentials clusterProfile (components/multikueue_fleet.py): enabling the GKE Hub
    # and Connect Gateway APIs needs serviceusage.services.enable (roles/serviceusage.serviceUsageAdmin).
    "gcp:projects/service:Service": ("roles/serviceusage.serviceUsageAdmin",),
    # A cluster with fleet.project: GKE creates (and on delete removes) its fleet membership with
    # the caller's gkehub.memberships.create/delete, which roles/gkehub.admin ("Fleet Admin",
    # Google Cloud IAM "GKE Hub roles and permissions") holds.
    FLEET_MEMBER: ("roles/gkehub.admin",),
}

# The readiness gates (components/readiness_gate.py, runtime_class_gate.py) call the cluster's
# API server; registered as pulumi-python dynamic resources.
THROUGH_THE_CLUSTER: Final = ("kubernetes:", "pulumi-python:dynamic:")
NOT_CLOUD_RESOURCES: Final = ("pulumi:providers:",)


class UnknownResourceTypeError(LookupError):
    """A resource type with no entry: say which roles it needs before the program creates it."""


def roles_for(type_token: str) -> tuple[str, ...]:
    """The predefined roles that let the deploy identity manage resources of ``type_token``."""
    if type_token.startswith(NOT_CLOUD_RESOURCES):
        return ()
    if type_token.startswith(THROUGH_THE_CLUSTER):
        return (CONTAINER_ADMIN,)
    if type_token in GCP_ROLES:
        return GCP_ROLES[type_token]
    raise UnknownResourceTypeError(
        f"{type_token}: no deploy role recorded; add it to stacks/deploy_roles.py, docs/ci.md and docs/runbook.md"
    )


def role_keys(type_token: str, inputs: Mapping[str, Any]) -> tuple[str, ...]:
    """The keys one planned resource needs roles for: its type, plus :data:`FLEET_MEMBER` for a
    cluster that joins the fleet (the same type needs more when this input is set)."""
    if type_token == "gcp:container/cluster:Cluster" and inputs.get("fleet"):
        return (type_token, FLEET_MEMBER)
    return (type_token,)


def every_role() -> set[str]:
    """What the deploy identity needs for everything the program can create (what the docs list)."""
    return {CONTAINER_ADMIN} | {role for roles in GCP_ROLES.values() for role in roles}


def deploy_roles(type_tokens: Iterable[str]) -> set[str]:
    """Every role the deploy identity needs for a plan with these resource types."""
    return {role for token in type_tokens for role in roles_for(token)}
