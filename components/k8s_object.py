"""A Kubernetes custom resource whose top-level fields are not all under ``spec``.

``pulumi_kubernetes.apiextensions.CustomResource`` (Python SDK 4.34.2) sends only
``apiVersion``, ``kind``, ``metadata`` and ``spec``: anything else is dropped before it reaches
the provider (see its ``_internal_init``).  Kueue's WorkloadPriorityClass keeps ``value`` and
``description`` at the top level (reference/kueue.md §3), so written that way it would reach
the cluster without its priority.  The provider itself takes the whole object -- the Node SDK
types its args as ``{apiVersion, kind, metadata, [othersFields: string]: any}`` -- so this
subclass registers the same ``kubernetes:<apiVersion>:<Kind>`` type with every field.

It is still a ``CustomResource`` (same type token, same outputs), so nothing downstream can
tell the difference; every custom resource of the stack goes through it for one code path.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, cast

import pulumi
import pulumi_kubernetes as k8s


def compact(fields: Mapping[str, Any]) -> dict[str, Any]:
    """``fields`` without the ones that are None or empty: what the object leaves to the API's defaults.

    ``False`` and ``0`` are values, and are kept.
    """
    return {key: value for key, value in fields.items() if value is not None and value not in ({}, [])}


def inherited_depends_on(opts: pulumi.ResourceOptions | None) -> list[pulumi.Resource]:
    """A component's own ``depends_on``, for its children to repeat.

    Pulumi passes a component's provider and ``protect`` on to its children but not its
    ``depends_on`` (the children of a component that depends on the Kueue release would
    otherwise be created before Kueue's webhooks serve), so components hand it down explicitly.
    """
    depends = opts.depends_on if opts is not None else None
    if depends is None:
        return []
    if isinstance(depends, pulumi.Resource):
        return [depends]
    if isinstance(depends, list):
        return [d for d in depends if isinstance(d, pulumi.Resource)]
    raise TypeError("depends_on must be given as resources, not an Output, to be handed to children")


# Fields a pinned CRD freezes with a transition rule (``self == oldSelf``, "field is immutable"),
# which the stack replaces instead of updating.  pulumi-kubernetes knows no CRD's rules: its replace
# table covers built-in kinds only (``provider/pkg/provider/diff.go`` ``forceNewProperties``), so it
# would send the change as an update that the API server refuses and ``pulumi up`` fails.  With
# ``replaceOnChanges`` the engine replaces, and ``deleteBeforeReplace`` deletes the old object
# first, as it must for an object that keeps its name (the provider's own rule for the replacements
# it decides, ``provider.go`` ``kubeProvider.Diff``).
# - LocalQueue ``spec.clusterQueue``: kueue v0.19.2 ``apis/kueue/v1beta2/localqueue_types.go``
#   ``LocalQueueSpec.ClusterQueue``.  Kueue puts no finalizer on a LocalQueue, so the delete ends.
# - RayCluster / RayJob ``managedBy`` and the GCS fault-tolerance ``backend``: kuberay v1.7.0
#   ``ray-operator/apis/ray/v1/raycluster_types.go`` / ``rayjob_types.go`` (XValidation
#   ``self == oldSelf``).  A RayJob's own cluster spec carries the RayCluster's rules.
# Kinds whose frozen fields are NOT listed, because Kueue's ``resource-in-use`` finalizer holds the
# deletion while a ClusterQueue (or flavor) names the object, so a replacement under the same name
# would wait forever (kueue v0.19.2 ``pkg/controller/core/admissioncheck_controller.go``,
# ``resourceflavor_controller.go``, ``pkg/controller/tas/topology_controller.go`` ``Reconcile``):
# AdmissionCheck ``spec.controllerName``, ResourceFlavor's TAS fields, Topology ``spec.levels``.  The
# preview reports a change there as a replacement the API server forces (``immutable_changes``);
# the way through is a new name.  ``tests/test_crd_immutable_fields.py`` holds this list against the
# pinned CRDs.
REPLACED_ON_CHANGE: dict[tuple[str, str], tuple[str, ...]] = {
    ("kueue.x-k8s.io", "LocalQueue"): ("spec.clusterQueue",),
    ("ray.io", "RayCluster"): ("spec.gcsFaultToleranceOptions.backend", "spec.managedBy"),
    ("ray.io", "RayJob"): (
        "spec.managedBy",
        "spec.rayClusterSpec.gcsFaultToleranceOptions.backend",
        "spec.rayClusterSpec.managedBy",
    ),
}
HELD_BY_FINALIZER: frozenset[tuple[str, str]] = frozenset(
    {
        ("kueue.x-k8s.io", "AdmissionCheck"),
        ("kueue.x-k8s.io", "ResourceFlavor"),
        ("kueue.x-k8s.io", "Topology"),
    }
)


def _replacement(api_version: str, kind: str) -> pulumi.ResourceOptions | None:
    paths = REPLACED_ON_CHANGE.get((api_version.split("/", 1)[0], kind))
    if not paths:
        return None
    return pulumi.ResourceOptions(replace_on_changes=list(paths), delete_before_replace=True)


def _sdk_version() -> str:
    """The provider plugin version matching the installed SDK (untyped helper of the SDK)."""
    return cast("Callable[[], str]", k8s._utilities.get_version)()


class KubeObject(k8s.apiextensions.CustomResource):
    """``kubernetes:<api_version>:<kind>`` with ``metadata``, optional ``spec`` and extra fields."""

    def __init__(
        self,
        resource_name: str,
        *,
        api_version: str,
        kind: str,
        metadata: Mapping[str, Any],
        spec: Mapping[str, Any] | None = None,
        fields: Mapping[str, Any] | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        props: dict[str, Any] = {"apiVersion": api_version, "kind": kind, "metadata": dict(metadata)}
        if spec is not None:
            props["spec"] = dict(spec)
        for key, value in (fields or {}).items():
            if key in props:
                raise ValueError(f"{kind}: field {key!r} is set twice")
            props[key] = value
        # The SDK pins the provider plugin version this way too (CustomResource.__init__).
        version = pulumi.ResourceOptions(version=_sdk_version())
        replacement = _replacement(api_version, kind)
        if replacement is not None:
            version = pulumi.ResourceOptions.merge(version, replacement)
        pulumi.CustomResource.__init__(
            self,
            f"kubernetes:{api_version}:{kind}",
            resource_name,
            props,
            pulumi.ResourceOptions.merge(version, opts),
        )
