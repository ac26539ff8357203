"""The roles the pull-request preview identity may hold: read-only, no Kubernetes writes, no Secrets.

A pull request's ``pulumi preview`` runs the branch's own, unreviewed code with the preview
identity's credentials, so that identity must not be able to change any cluster or read any
Secret (issue 27 #5).  The roles below are the only ones ``docs/ci.md`` (the
``gpu-batch-preview@`` row) and ``docs/runbook.md`` (step 3, "pull-request preview") may give it;
``tests/test_preview_roles.py`` fails when either names another role or when they disagree.

Why these are enough for a live preview of this program:

* **Kubernetes objects.** pulumi-kubernetes computes the diff itself, client-side, from the state
  and the new inputs (``provider/pkg/provider/provider.go``, ``kubeProvider.Diff``:
  ``inputPatch`` of the pruned old live object against the inputs; pulumi/pulumi-kubernetes, same
  code at tag v4.32.0 and at the newest stored snapshot 94977969d, the pinned v4.34.2 tag itself
  was not stored).  Only ``Create``/``Update`` in preview ask the API server for a server-side
  dry-run, and both fall back when it is refused: ``Create`` "unable to compute Server-side
  dry-run and defaulting to client-side" on ``apierrors.IsForbidden``, ``Update`` returns the new
  inputs on ``IsForbidden`` when ``req.GetPreview()``.  ``Check`` reads only the OpenAPI document
  (discovery, which Kubernetes' ``system:discovery`` ClusterRole grants every authenticated user).
  So ``enableServerSideApply`` stays on (deploys need it) and neither ``skipUpdateUnreachable``
  (only for an unreachable cluster) nor the removed v3 ``enableDryRun`` is needed.
* **Helm releases.** ``helmReleaseProvider.Diff`` compares state to inputs, and ``Create``/
  ``Update`` touch the cluster only ``if !req.GetPreview()`` (``helm_release.go``), so Helm's
  release Secrets are never read in preview.
* **Google Cloud.** Without ``--refresh`` (the workflow sets ``refresh: false``) pulumi-gcp reads
  nothing; the program's one invoke, ``gcp.container.get_engine_versions``
  (``stacks/gke_versions.py``, GKE ``getServerConfig``), lists cluster versions, which the
  cluster viewer role grants.

What a preview with these roles does not show: server-side defaults and admission webhooks' or
CEL validation's refusals (the pack and the offline preview judge those before), and drift
(no refresh).
"""

from __future__ import annotations

from typing import Final

# role -> its description in Google Cloud's IAM predefined-roles reference (GKE roles page,
# cloud.google.com/kubernetes-engine/docs/how-to/iam, "Predefined GKE roles").
READ_ONLY_ROLES: Final[dict[str, str]] = {
    "roles/container.clusterViewer": "Provides access to get and list GKE clusters.",
}

# Roles a reviewer might reach for: (IAM description, why the preview identity must not hold it).
REFUSED_ROLES: Final[dict[str, tuple[str, str]]] = {
    "roles/container.developer": (
        "Provides access to Kubernetes API objects inside clusters.",
        "writes every Kubernetes object and reads every Secret (container.secrets.list)",
    ),
    "roles/container.admin": (
        "Provides access to full management of clusters and their Kubernetes API objects.",
        "changes clusters and every object in them",
    ),
    "roles/container.viewer": (
        "Provides read-only access to resources within GKE clusters, such as nodes, pods, "
        "and GKE API objects.",
        "lists every pod's environment and every ConfigMap in every namespace; not needed, "
        "the dry-runs fall back without it",
    ),
    "roles/viewer": (
        "Permissions for read-only actions that do not affect state, such as viewing (but not "
        "modifying) existing resources or data.",
        "reads every service of the project; not needed without refresh",
    ),
}


def problems(roles: set[str]) -> list[str]:
    """One line per role outside the read-only list, naming what it is and why it is refused."""
    out = []
    for role in sorted(roles - READ_ONLY_ROLES.keys()):
        description, why = REFUSED_ROLES.get(role, ("", "not in the read-only list"))
        said = f" ({description})" if description else ""
        out.append(f"{role}{said}: {why}; the preview may hold only {sorted(READ_ONLY_ROLES)}")
    return out
