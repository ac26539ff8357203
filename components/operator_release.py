"""The shape every cluster-wide operator shares: its own Namespace plus one pinned Helm release.

Why a ``helm.v3.Release`` (not ``helm.v4.Chart``): it is a real Helm release users can inspect
and roll back with ``helm``, chart hooks run (KAI's config and default-queue hooks depend on
them), and under the SDK mocks it records as one resource with its chart, version and values
(reference/pulumi.md §1.4).  Why a Pulumi-managed Namespace instead of ``create_namespace``:
it shows in the plan, and deleting the stack removes it.

The release name is always set explicitly: Pulumi would otherwise append a random suffix, and
charts derive Service/Secret names from it (Kueue's webhook certificate wiring does).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

import pulumi
import pulumi_kubernetes as k8s

# The post-renderer that drops a release's CustomResourceDefinitions (see the script's header).
# Relative to the project root, which is where pulumi-kubernetes resolves a Release's local paths
# (its ``helm.v3.Release`` docs, "Local Chart Directory": ``chart="./nginx-ingress"``); Helm turns
# a path with a separator into an absolute one (helm/helm v3.20.2 pkg/postrender/exec.go
# ``getFullPath``).  Relative, so the Release's inputs are the same on every machine.
DROP_CRDS_POSTRENDER: Final = "./components/helm_postrender/drop-crds"


@dataclass(frozen=True)
class ChartRef:
    """Where a chart comes from: an ``oci://`` reference, or a name in a classic repository."""

    chart: str
    version: str
    repository: str | None = None


def depends_on_of(opts: pulumi.ResourceOptions | None) -> list[pulumi.Resource]:
    """The resources a component was told to wait for.

    Pulumi does not pass a component's ``depends_on`` to its children, so components hand it to
    their release explicitly (otherwise an operator could install before the one it needs).
    """
    deps = opts.depends_on if opts is not None else None
    if deps is None:
        return []
    if isinstance(deps, pulumi.Resource):
        return [deps]
    return [d for d in deps if isinstance(d, pulumi.Resource)] if isinstance(deps, list) else []


def operator_namespace(
    resource_name: str, namespace: str, parent: pulumi.Resource, labels: Mapping[str, str] | None = None
) -> k8s.core.v1.Namespace:
    return k8s.core.v1.Namespace(
        resource_name,
        metadata=k8s.meta.v1.ObjectMetaArgs(
            name=namespace, labels={"app.kubernetes.io/managed-by": "pulumi", **(labels or {})}
        ),
        opts=pulumi.ResourceOptions(parent=parent),
    )


def operator_release(
    resource_name: str,
    *,
    release_name: str,
    chart: ChartRef,
    namespace: k8s.core.v1.Namespace,
    values: Mapping[str, Any],
    parent: pulumi.Resource,
    timeout_seconds: int,
    depends_on: list[pulumi.Resource] | None = None,
    skip_crds: bool = False,
    postrender: str | None = None,
) -> k8s.helm.v3.Release:
    """One Helm release in ``namespace``, created after the namespace exists.

    ``timeout_seconds`` is how long Helm waits for the release's objects to be ready: ``atomic``
    implies ``--wait`` (Helm ``pkg/action/install.go``: ``if i.Atomic { i.Wait = true }``), which
    waits for Deployments, DaemonSets on every node, bound PVCs and LoadBalancer addresses
    (``pkg/kube/ready.go``), and rolls back when the time runs out.  pulumi-kubernetes defaults
    ``timeout`` to Helm's 300 s, too short for some of what these releases wait for, so each
    caller sizes it from what its chart waits for (the constants beside each component).

    ``skip_crds`` / ``postrender``: for a chart whose CRDs the stack manages itself
    (components/chart_crds.py): Helm's ``--skip-crds`` leaves out ``crds/``, a post-renderer
    (``DROP_CRDS_POSTRENDER``) the CRDs a chart renders from templates."""
    return k8s.helm.v3.Release(
        resource_name,
        name=release_name,
        chart=chart.chart,
        version=chart.version,
        repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=chart.repository) if chart.repository else None,
        namespace=namespace.metadata.name,
        create_namespace=False,
        values=dict(values),
        # Roll back a failed install/upgrade instead of leaving a half-installed operator whose
        # webhooks reject every later request.
        atomic=True,
        cleanup_on_fail=True,
        max_history=10,
        timeout=timeout_seconds,
        skip_crds=skip_crds or None,
        postrender=postrender,
        opts=pulumi.ResourceOptions(parent=parent, depends_on=[namespace, *(depends_on or [])]),
    )
