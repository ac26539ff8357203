"""The project IAM a team member needs to reach the cluster, and nothing broader.

Kubernetes RBAC (the team's Role) decides what a member may do *inside* the cluster; Google IAM
decides whether they can fetch the cluster's endpoint and credentials at all
(``gcloud container clusters get-credentials`` reads the cluster: ``container.clusters.get``).
``roles/container.clusterViewer`` is GKE's role for exactly that, with no Kubernetes object
permissions of its own (GKE docs, how-to/iam and how-to/google-groups-rbac, "grant IAM roles"),
so RBAC alone decides the rest.  Broader roles (``roles/container.developer``,
``roles/editor``) would reach every namespace through IAM and bypass the team's Role.
"""

from __future__ import annotations

from collections.abc import Sequence

import pulumi_gcp as gcp

CLUSTER_VIEWER_ROLE = "roles/container.clusterViewer"


def iam_member(kind: str, email: str) -> str:
    """``group:ml@example.com`` / ``user:alice@example.com``: IAM's member syntax."""
    return f"{kind}:{email}"


def grant_cluster_access(project: str, members: Sequence[str]) -> list[gcp.projects.IAMMember]:
    """One additive ``IAMMember`` per member (never a whole-policy ``IAMPolicy``/``IAMBinding``,
    which would drop bindings other stacks or people made on the same role)."""
    return [
        gcp.projects.IAMMember(
            f"cluster-viewer-{member.replace(':', '-').replace('@', '-at-')}",
            project=project,
            role=CLUSTER_VIEWER_ROLE,
            member=member,
        )
        for member in sorted(set(members))
    ]
