"""A team's own cloud identity: its pods act as a per-team Google service account.

GKE Workload Identity, "link a Kubernetes ServiceAccount to an IAM service account" (GKE docs,
how-to/workload-identity): the cluster's workload pool is ``<project>.svc.id.goog`` (set on the
cluster, ``components/gke.py``) and every node pool serves the GKE metadata server
(``workloadMetadataConfig.mode: GKE_METADATA``).  Then

* a Google service account per team (``gcp.serviceaccount.Account``);
* ``roles/iam.workloadIdentityUser`` on it for the member
  ``serviceAccount:<project>.svc.id.goog[<namespace>/<ksa>]``: only that Kubernetes
  ServiceAccount, in that team's namespace, may act as it (``gcp.serviceaccount.IAMMember``);
* the Kubernetes ServiceAccount, annotated ``iam.gke.io/gcp-service-account: <email>``;
* per bucket in config, ``roles/storage.objectViewer`` (read) or ``roles/storage.objectUser``
  (read-write) on that bucket only (``gcp.storage.BucketIAMMember``).

A pod of the team that runs as the ServiceAccount gets the team's credentials from the metadata
server; a pod of another team cannot name it (a pod may only use ServiceAccounts of its own
namespace), and another team's namespace/ServiceAccount pair is not a member of the binding.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

GSA_ANNOTATION: Final = "iam.gke.io/gcp-service-account"
BUCKET_ROLES: Final = {"read": "roles/storage.objectViewer", "write": "roles/storage.objectUser"}


@dataclass(frozen=True)
class BucketAccess:
    bucket: str
    access: Literal["read", "write"] = "read"


@dataclass(frozen=True)
class TeamIdentityArgs:
    project: str
    team: str
    namespace: str
    service_account: str  # the Kubernetes ServiceAccount's name
    buckets: Sequence[BucketAccess] = ()

    @property
    def account_id(self) -> str:
        """6-30 characters, a lowercase letter first (IAM service account id rules)."""
        base = f"team-{self.team}"[:30].rstrip("-")
        return base if len(base) >= 6 else f"{base}-wi"

    @property
    def member(self) -> str:
        return f"serviceAccount:{self.project}.svc.id.goog[{self.namespace}/{self.service_account}]"


class TeamIdentity(pulumi.ComponentResource):
    def __init__(self, name: str, args: TeamIdentityArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("gpu-batch:tenancy:TeamIdentity", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        account = gcp.serviceaccount.Account(
            f"{name}-account",
            account_id=args.account_id,
            project=args.project,
            display_name=f"gpu-batch team {args.team} workloads",
            opts=child,
        )
        gcp.serviceaccount.IAMMember(
            f"{name}-workload-identity-user",
            service_account_id=account.name,
            role="roles/iam.workloadIdentityUser",
            member=args.member,
            opts=child,
        )
        k8s.core.v1.ServiceAccount(
            f"{name}-ksa",
            metadata=k8s.meta.v1.ObjectMetaArgs(
                name=args.service_account,
                namespace=args.namespace,
                annotations={GSA_ANNOTATION: account.email},
                labels={"app.kubernetes.io/managed-by": "pulumi", "gpu-batch/team": args.team},
            ),
            opts=child,
        )
        for access in args.buckets:
            gcp.storage.BucketIAMMember(
                f"{name}-{access.bucket}",
                bucket=access.bucket,
                role=BUCKET_ROLES[access.access],
                member=account.email.apply(lambda email: f"serviceAccount:{email}"),
                opts=child,
            )
        self.register_outputs({"email": account.email, "service_account": args.service_account})
