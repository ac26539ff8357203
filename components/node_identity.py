"""A dedicated, least-privilege service account for the cluster's nodes.

Without one, GKE nodes run as the Compute Engine default service account, which projects get
with the Editor role, and with the ``cloud-platform`` scope every pod on a node can borrow that
identity from the metadata server.  GKE's "Configure GKE node service accounts"
(cloud.google.com/kubernetes-engine/docs/security/configure-node-service-accounts, "Grant the
minimum required role for GKE") names ``roles/container.defaultNodeServiceAccount`` (logging,
monitoring, node status) as the minimum, and ``roles/artifactregistry.reader`` for pulling images
from the project's Artifact Registry; cluster-toolkit's GKE blueprints likewise create a node
service account (``modules/project/service-account``) instead of using the default one.
Workloads get their own access through Workload Identity, never through the node's account.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_gcp as gcp

NODE_ROLES: tuple[str, ...] = ("roles/container.defaultNodeServiceAccount", "roles/artifactregistry.reader")


@dataclass(frozen=True)
class NodeServiceAccountArgs:
    project: str
    # The account id (6-30 characters, lowercase letters, digits, '-').
    account_id: str


class NodeServiceAccount(pulumi.ComponentResource):
    """A service account and its project roles; ``email`` is what node pools run as."""

    account: gcp.serviceaccount.Account
    email: pulumi.Output[str]

    def __init__(
        self, name: str, args: NodeServiceAccountArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpu-batch:gke:NodeServiceAccount", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.account = gcp.serviceaccount.Account(
            f"{name}-account",
            account_id=args.account_id,
            project=args.project,
            display_name="gpu-batch GKE nodes (least privilege)",
            opts=child,
        )
        bindings = [
            gcp.projects.IAMMember(
                f"{name}-{role.split('/')[-1]}",
                project=args.project,
                role=role,
                member=self.account.email.apply(lambda email: f"serviceAccount:{email}"),
                opts=child,
            )
            for role in NODE_ROLES
        ]
        # The email as pools should read it: known only once every role is bound, so each pool
        # (and the cluster's default pool) depends on the bindings, not just on the account.
        # Nodes created before `roles/container.defaultNodeServiceAccount` is bound cannot write
        # logs and metrics or report node status (GKE "Configure GKE node service accounts").
        self.email = pulumi.Output.all(self.account.email, *(b.id for b in bindings)).apply(
            lambda values: str(values[0])
        )
        self.register_outputs({"email": self.email, "roles": list(NODE_ROLES)})


def node_account_id(cluster_name: str) -> str:
    """A valid account id derived from the cluster name (at most 30 characters)."""
    base = f"{cluster_name[:24].rstrip('-')}-nodes"
    return base if len(base) >= 6 else f"gke-{base}"
