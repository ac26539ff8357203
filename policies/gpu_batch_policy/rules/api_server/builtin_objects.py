"""Every built-in object against the strict Kubernetes OpenAPI schema of the cluster's minor.

Why: ``custom-resource-schema`` judges custom resources only, yet most of what a stack installs is
built-in (Namespaces, RBAC, Services, Deployments, webhook configurations, and what charts render).
The API server validates a built-in object by its Go types and OpenAPI schema: a wrong type or a
missing required field is refused on create, and server-side apply (pulumi-kubernetes 4.x's
default) refuses a field the schema does not declare ("field not declared in schema",
kubernetes/kubernetes ``staging/src/k8s.io/apimachinery/pkg/util/managedfields/internal/
structuredmerge.go`` ``structuredMergeManager.Apply``).  So a violation is mandatory.

The validator is :mod:`..schema.core` (kubernetes-validate's strict JSON schemas, the version the
pack pins), the same one the offline preview runs on ``manifests.yaml``; the minor is the stack's
GKE cluster's ``minMasterVersion`` (:func:`..schema.core.kubernetes_minor`, as the preview picks
it), else the newest GKE serves.  A kind the minor's schema does not define is advisory "cannot
check" (an aggregated API or one another minor serves); values unknown until apply are counted,
not checked; a Secret's values never reach a message.  An object whose planned state arrives
empty (the offline preview's mocks leave a CustomResourceDefinition's outputs unknown rather than
echo its whole schema, ``preview.mocks.UNECHOED_TYPES``) is not judged here; the preview
validates its inputs in ``manifests.yaml``.  Such an object is skipped without a finding: the
engine never sends an empty state for an object being created (a real preview echoes its inputs,
unknown values marked), so only the offline harness produces one, and there the preview's own
check of the inputs reports the same violations.

pulumi-kubernetes' ``<Kind>Patch`` resources (``NamespacePatch``, ``DeploymentPatch``, ...) are
server-side apply patches of an existing object: a resource is one when its type's name is its
``kind`` plus ``Patch`` (pulumi/pulumi-kubernetes ``provider/pkg/kinds/util.go``
``IsPatchResource``, v4.32.0; the SDK sets ``kind`` to the patched kind).  They are validated
against the patched kind's schema as a partial object (:meth:`..schema.core.CoreValidator.validate`
``patch``): nothing required but ``metadata.name``, everything else typed and declared as in a
whole object.  A ``*Patch`` type whose ``kind`` names another kind is not a patch to the provider
and no kind the schema defines: "cannot check", as any unknown kind.

Names are judged by the kind's own name function (:mod:`..schema.object_names`: the schema says
only "a string"), except a patch's, which names an object that exists; enumerated fields by the
values the kind's Go validation supports (:mod:`..schema.builtin_enums`: the schema has no enums);
a CRD's schemas below ``items`` and ``additionalProperties`` as ``JSONSchemaProps``
(:mod:`..schema.crd_document`: the OpenAPI schema leaves them untyped).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from pulumi_policy import Policy

from ...facts.model import StackModel
from ...facts.schema.builtin_enums import enum_violations
from ...facts.schema.core import CoreValidator, KubernetesMinor, kubernetes_minor
from ...facts.schema.crd import Outcome
from ...facts.schema.crd_document import nested_schema_violations
from ...facts.schema.object_names import name_violations
from ...primitives.values import Unknown
from ..kit.builders import stack_policy
from ..kit.report import Reporter
from .custom_resources import BUILT_IN_GROUPS, applied_manifest, too_deep

CRD: Final = ("apiextensions.k8s.io", "CustomResourceDefinition")


def stack_minor(model: StackModel) -> KubernetesMinor:
    """The minor of the stack's (first) GKE cluster, as the preview's ``stack_kubernetes_minor``."""
    # URN order: a program with several clusters gets the same answer whatever the registration order.
    for cluster in sorted(model.gke_clusters(), key=lambda c: c.urn):
        version = cluster.min_master_version
        return kubernetes_minor(None if isinstance(version, Unknown) else version)
    return kubernetes_minor(None)


def check_builtin_objects(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    objects = [o for o in model.objects if o.group in BUILT_IN_GROUPS]
    if not objects:
        return
    validator = CoreValidator(stack_minor(model))
    for obj in objects:
        if not obj.props:
            continue  # the offline harness's unechoed state (see the module docstring)
        if too_deep(obj, reporter):
            continue
        manifest, patch = applied_manifest(obj)
        result = validator.validate(manifest, patch=patch)
        if result.outcome is Outcome.NO_SCHEMA:
            reporter.cannot_check(obj, f"schema not checked: {result.note}")
            continue
        names = [] if patch else name_violations(obj.group, obj.kind, manifest)
        enums = enum_violations(obj.group, obj.kind, manifest)
        nested = (
            nested_schema_violations(validator.minor.minor, manifest) if (obj.group, obj.kind) == CRD else []
        )
        for violation in [*result.violations, *names, *enums, *nested]:
            reporter.violation(
                obj,
                f"the API server would reject it ({result.schema or validator.minor}): {violation}",
                "change the field as the message says (the Kubernetes API reference of that minor lists "
                "the fields); `kubectl apply --dry-run=server` shows the same error",
            )


POLICIES: list[Policy] = [
    stack_policy(
        "builtin-object-schema",
        "Every built-in Kubernetes object (core, apps, batch, RBAC, admission, networking ...) passes the "
        "strict OpenAPI schema of the cluster's Kubernetes minor, as the offline preview checks it.",
        check_builtin_objects,
    ),
]
