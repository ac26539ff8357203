"""Every custom resource against its CRD's structural schema and CEL rules, as the API server does.

Why: a fresh-cluster ``pulumi preview`` cannot ask the API server (the CRDs are not installed
yet), so without this an enum typo (``queueingStrategy: StrictFifo``), a ResourceFlavor taint
without an effect, a Topology with no levels or a missing required field would pass the preview
and fail ``pulumi up``.  The API server validates a custom resource on create by its CRD:

* the structural schema (types, enums, required, bounds, patterns, list-type/map keys):
  kubernetes/kubernetes v1.34.0 ``staging/src/k8s.io/apiextensions-apiserver/pkg/registry/
  customresource/validator.go`` ``customResourceValidator.Validate``;
* unknown fields: server-side apply (pulumi-kubernetes 4.x's default) refuses a field the schema
  does not declare, "failed to create typed patch object ...: .spec.x: field not declared in
  schema" (``staging/src/k8s.io/apimachinery/pkg/util/managedfields/internal/structuredmerge.go``
  ``structuredMergeManager.Apply``); a client-side apply would prune it silently;
* the CRD's ``x-kubernetes-validations`` CEL rules (``.../apiserver/schema/cel/validation.go``
  ``Validator.Validate``), run here with cel-python (:mod:`..schema.cel`).

So a violation is **mandatory**: the API server would reject the object.  What cannot be decided
before deploy is advisory "cannot check", never passed: a group or kind no CRD of the stack or of
the pinned charts defines, a version the found CRD does not serve (another install may serve it;
``kueue-served-api-version`` judges Kueue's), an object nested past
:data:`..schema.depth.MAX_SCHEMA_DEPTH`, and CEL rules cel-python cannot decide (Kubernetes CEL
library functions, values unknown until apply).  Transition rules (``oldSelf`` without
``optionalOldSelf``) are not evaluated on create, so they leave nothing unchecked here.

A pulumi-kubernetes ``<Kind>Patch`` of a custom resource (``CustomResourcePatch``) is judged by the
patched kind's CRD as a partial object (:meth:`..schema.crd.CrdCatalog.validate` ``patch``): types,
enums and undeclared fields as for a whole object, nothing required but its name and the keys of
associative-list items; its CEL rules are "cannot check", since the API server runs them on the
object the patch merges into, which only the cluster holds.

The validator is the one the offline preview runs on ``manifests.yaml`` (:mod:`..schema.crd`);
CRDs come from the stack itself first, then from the pinned charts (:mod:`..schema.pinned`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Final

from pulumi_policy import Policy

from ...facts.model import StackModel
from ...facts.model.base import KubeObject
from ...facts.schema.cel import TRANSITION_RULE
from ...facts.schema.crd import CrdCatalog, Outcome
from ...facts.schema.depth import MAX_SCHEMA_DEPTH, nesting_depth
from ...facts.schema.markers import UNKNOWN_DISPLAY
from ...facts.schema.patches import is_patch, patched_kind
from ...facts.schema.pinned import catalog_with, pinned_problems
from ...primitives.values import Unknown
from ..kit.builders import stack_policy
from ..kit.report import Reporter

# API groups the kube-apiserver serves itself (Kubernetes API reference v1.34, "API Groups"):
# their objects have no CRD; the preview checks them against the OpenAPI schema instead.
BUILT_IN_GROUPS: Final = frozenset(
    {
        "",
        "admissionregistration.k8s.io",
        "apiextensions.k8s.io",
        "apiregistration.k8s.io",
        "apps",
        "authentication.k8s.io",
        "authorization.k8s.io",
        "autoscaling",
        "batch",
        "certificates.k8s.io",
        "coordination.k8s.io",
        "discovery.k8s.io",
        "events.k8s.io",
        "flowcontrol.apiserver.k8s.io",
        "internal.apiserver.k8s.io",
        "networking.k8s.io",
        "node.k8s.io",
        "policy",
        "rbac.authorization.k8s.io",
        "resource.k8s.io",
        "scheduling.k8s.io",
        "storage.k8s.io",
        "storagemigration.k8s.io",
    }
)
CRD_KIND: Final = ("apiextensions.k8s.io", "CustomResourceDefinition")
# A CRD's own document nests its schema two levels per field (properties -> field); the pack
# decodes at most 120 levels, so every CRD that reaches a rule is read.
CRD_MAX_DEPTH: Final = 120
# How a stack's own CRD is named as a source: rendered by a release, or declared as a resource.
STACK_CRD_PREFIXES: Final = ("release ", "resource ")


def _display(value: Any) -> Any:
    """Plain props with :class:`Unknown` as the display marker the validator counts, not checks."""
    if isinstance(value, Unknown):
        return UNKNOWN_DISPLAY
    if isinstance(value, dict):
        return {key: _display(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_display(item) for item in value]
    return value


def manifest_of(obj: KubeObject) -> dict[str, Any]:
    """The object as the provider sends it: apiVersion and kind from the wire type token, and an
    auto-named object's name unknown until apply (pulumi-kubernetes names it ``<name>-<random>``)."""
    doc: dict[str, Any] = _display(obj.props) if isinstance(obj.props, dict) else {}
    doc["apiVersion"] = obj.api_version
    doc["kind"] = obj.kind
    meta = doc.get("metadata")
    if obj.auto_named and obj.rendered_from is None:
        meta = dict(meta) if isinstance(meta, dict) else {}
        if meta.get("name") is None and meta.get("generateName") is None:
            meta["name"] = UNKNOWN_DISPLAY
        doc["metadata"] = meta
    return doc


def applied_manifest(obj: KubeObject) -> tuple[dict[str, Any], bool]:
    """:func:`manifest_of`, and whether the object is a pulumi-kubernetes ``<Kind>Patch``
    (:mod:`..schema.patches`): a patch's manifest has the patched kind, and no stand-in name
    (the provider names no patch; it refuses one without a name)."""
    manifest = manifest_of(obj)
    patched = patched_kind(obj.kind, obj.props.get("kind") if isinstance(obj.props, Mapping) else None)
    if patched is None or not is_patch(obj.kind, patched):
        return manifest, False
    manifest["kind"] = patched
    if obj.auto_named and isinstance(manifest.get("metadata"), dict):
        manifest["metadata"] = {k: v for k, v in manifest["metadata"].items() if k != "name"}
    return manifest, True


def too_deep(obj: KubeObject, reporter: Reporter) -> bool:
    """An object nested past what schema validation reads: "cannot check", and True."""
    levels = nesting_depth(obj.props)
    if levels > MAX_SCHEMA_DEPTH:
        reporter.cannot_check(
            obj,
            f"its properties are nested {levels} levels deep and schema validation reads at most "
            f"{MAX_SCHEMA_DEPTH} levels; its schema is not checked",
        )
    return levels > MAX_SCHEMA_DEPTH


def _stack_crds(model: StackModel) -> Iterator[tuple[Path, Mapping[str, Any]]]:
    """The CRDs the stack declares or its releases render, readable ones only (display form)."""
    for obj in model.kube_objects(*CRD_KIND):
        if nesting_depth(obj.props) <= CRD_MAX_DEPTH:
            where = STACK_CRD_PREFIXES[obj.rendered_from is None]
            yield Path(f"{where}{obj.pulumi_name}"), {**_display(obj.props), "kind": CRD_KIND[1]}


def stack_catalog(model: StackModel) -> CrdCatalog:
    """The CRD catalog for this stack (its own CRDs first, then the pinned charts'), per model."""
    return model.memo("custom-resources:catalog", lambda: catalog_with(_stack_crds(model)))


class _Unchecked:
    """CEL rules not decided, by reason, over the whole stack: one line per reason, not per object."""

    def __init__(self) -> None:
        self.by_reason: dict[str, tuple[int, KubeObject, int]] = {}

    def add(self, obj: KubeObject, reasons: tuple[str, ...]) -> None:
        for counted in reasons:
            if counted.startswith(TRANSITION_RULE):
                continue  # not evaluated on create (see TRANSITION_RULE): nothing is left unchecked
            reason = counted.rsplit(" (", 1)[0]  # "<reason> (<rules>)"
            count, first, objects = self.by_reason.get(reason, (0, obj, 0))
            self.by_reason[reason] = (count + 1, first, objects + 1)

    def report(self, reporter: Reporter) -> None:
        for reason, (_, first, objects) in sorted(self.by_reason.items()):
            more = f" (and {objects - 1} more objects)" if objects > 1 else ""
            reporter.cannot_check(first, f"CEL rules not checked before deploy{more}: {reason}")


def check_custom_resources(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    """Each custom resource passes its CRD's schema and CEL rules; see the module docstring."""
    objects = [o for o in model.objects if o.group not in BUILT_IN_GROUPS]
    if not objects:
        return
    catalog = stack_catalog(model)
    problems = pinned_problems()
    unchecked = _Unchecked()
    told = False
    for obj in objects:
        if too_deep(obj, reporter):
            continue
        manifest, patch = applied_manifest(obj)
        try:
            result = catalog.validate(manifest, patch=patch)
        except (TypeError, AttributeError, KeyError, ValueError):
            crd = catalog.crd(obj.group, obj.kind)
            if crd is None or not str(crd.source).startswith(STACK_CRD_PREFIXES):
                raise  # a pinned chart's CRD: a bug of the pack, reported as one by the guard
            reporter.cannot_check(
                obj,
                f"its CRD, declared by {crd.source}, has a schema the validator cannot read; the API "
                "server would refuse such a CRD first",
            )
            continue
        if result.outcome in (Outcome.NOT_CUSTOM_RESOURCE, Outcome.NO_SCHEMA, Outcome.TOO_DEEP):
            why = ""
            if problems:  # said in full once; each later object points back to it
                why = (
                    f"; pinned charts not read: {'; '.join(problems)}"
                    if not told
                    else ("; pinned charts not read (as above)")
                )
                told = True
            reporter.cannot_check(obj, f"schema and CEL rules not checked: {result.note}{why}")
            continue
        if result.unserved_version:
            reporter.cannot_check(obj, f"schema not checked: {result.violations[0].message}")
            continue
        for violation in result.violations:
            reporter.violation(
                obj,
                f"the API server would reject it (CRD {result.schema}): {violation}",
                "change the field as the message says; the CRD's schema and x-kubernetes-validations "
                "rules decide, and `kubectl apply --dry-run=server` on a cluster with the CRD shows "
                "the same error",
            )
        unchecked.add(obj, result.cel_unchecked_reasons)
    unchecked.report(reporter)


POLICIES: list[Policy] = [
    stack_policy(
        "custom-resource-schema",
        "Every custom resource passes its CRD's structural schema and CEL rules "
        "(x-kubernetes-validations), as the API server checks them on create; CRDs from the stack "
        "and the pinned charts.",
        check_custom_resources,
    ),
]
