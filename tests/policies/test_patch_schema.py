"""pulumi-kubernetes ``<Kind>Patch`` resources are judged as partial objects of the patched kind.

A patch is a server-side apply of part of an existing object (pulumi/pulumi-kubernetes
``provider/pkg/kinds/util.go`` ``IsPatchResource``, v4.32.0; its docs: "The name of the resource
must be specified, but all other properties are optional").  So ``required`` is dropped at every
level (a patch setting only ``spec.replicas`` is fine), but a wrong type or an undeclared field is
still refused, an associative list item still needs the keys its item schema requires
(structured-merge-diff ``keyedAssociativeListItemToPathElement``), and the name is required.
The pack (over the analyzer gRPC protocol, as the engine runs it) and the offline preview agree.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import pytest
from gpu_batch_policy.facts.schema.core import GKE_NEWEST_MINOR, CoreValidator, kubernetes_minor
from gpu_batch_policy.facts.schema.crd import Outcome
from gpu_batch_policy.facts.schema.patches import is_patch, patched_kind
from gpu_batch_policy.rules.api_server.builtin_objects import POLICIES
from gpu_batch_policy.rules.api_server.custom_resources import POLICIES as CUSTOM_RESOURCE_POLICIES

from preview.analyzer import PolicyPackProcess
from preview.manifests import patch_identities, validate_manifests
from preview.records import RecordedResource
from tests.policies.corpus import STACK_URN
from tests.policies.test_corpus_e2e import POLICIES_DIR
from tests.policies.workload_stack import registration, run

VALIDATOR = CoreValidator("1.33")


def scale_patch(**spec: Any) -> dict[str, Any]:
    """A DeploymentPatch's inputs: only what it changes."""
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "api", "namespace": "team-a"},
        "spec": spec,
    }


def namespace_patch(labels: Any) -> dict[str, Any]:
    """The NamespacePatch the tenancy component sends for a namespace that already exists."""
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default", "labels": labels}}


def messages(doc: dict[str, Any]) -> list[str]:
    return [str(v) for v in VALIDATOR.validate(doc, patch=True).violations]


def test_a_partial_patch_passes_where_the_whole_object_would_miss_required_fields() -> None:
    doc = scale_patch(replicas=3)
    assert messages(doc) == []
    whole = [str(v) for v in VALIDATOR.validate(doc).violations]
    assert "spec.selector: required field missing" in whole
    assert "spec.template: required field missing" in whole


@pytest.mark.parametrize(
    ("doc", "expected"),
    [
        (scale_patch(replicas="three"), 'spec.replicas: expected integer, got string "three"'),
        (scale_patch(replica=3), "spec.replica: field not declared in the Kubernetes schema"),
        (
            scale_patch(template={"spec": {"containers": [{"name": "api", "image": 7}]}}),
            "spec.template.spec.containers[0].image: expected string, got integer 7",
        ),
        (namespace_patch(["team=ml"]), "metadata.labels: expected object, got array"),
    ],
)
def test_a_wrong_type_or_an_undeclared_field_is_still_refused(doc: dict[str, Any], expected: str) -> None:
    assert any(m.startswith(expected) for m in messages(doc)), messages(doc)


def test_an_associative_list_item_needs_the_keys_its_schema_requires() -> None:
    keyed = {"containers": [{"name": "api", "ports": [{"containerPort": 8080}]}]}
    assert messages(scale_patch(template={"spec": keyed})) == []  # protocol: a key, not required
    unkeyed = {"containers": [{"image": "registry.k8s.io/pause:3.10"}]}
    assert messages(scale_patch(template={"spec": unkeyed})) == [
        "spec.template.spec.containers[0].name: required field missing"
    ]
    portless = {"containers": [{"name": "api", "ports": [{"protocol": "UDP"}]}]}
    assert messages(scale_patch(template={"spec": portless})) == [
        "spec.template.spec.containers[0].ports[0].containerPort: required field missing"
    ]


def test_a_patch_names_the_object_it_patches() -> None:
    for meta in ({"namespace": "team-a"}, {"name": "", "namespace": "team-a"}):
        doc = {**scale_patch(replicas=1), "metadata": meta}
        assert messages(doc) == ["metadata.name: required field missing: a patch names the object it patches"]
    # The shape (memo) is shared with a named patch; the verdict on the name is not.
    assert messages(scale_patch(replicas=1)) == []


def test_which_types_are_patches_follows_is_patch_resource() -> None:
    assert is_patch("NamespacePatch", "Namespace")
    assert is_patch("NamespacePatch", None)  # kind unknown or absent: the SDK's own
    assert not is_patch("NamespacePatch", "Pod")
    assert not is_patch("Namespace", "Namespace")
    assert patched_kind("Namespace", "Namespace") is None
    assert patched_kind("DeploymentPatch", "Deployment") == "Deployment"


def _patch(type_: str, name: str, props: dict[str, Any]) -> Any:
    return registration(type_, name, props)


def test_the_pack_judges_patches_and_names_a_mismatched_kind() -> None:
    policy = POLICIES[0]
    good = run(policy, [_patch("kubernetes:core/v1:NamespacePatch", "ns", namespace_patch({"team": "ml"}))])
    assert good.violations == [] and good.cannot_check is None
    bad = run(policy, [_patch("kubernetes:core/v1:NamespacePatch", "ns", namespace_patch(["team=ml"]))])
    assert bad.mentions("NamespacePatch", "metadata.labels: expected object")
    partial = run(policy, [_patch("kubernetes:apps/v1:DeploymentPatch", "api", scale_patch(replicas=2))])
    assert partial.violations == [] and partial.cannot_check is None
    unnamed = scale_patch(replicas=2)
    unnamed["metadata"] = {"namespace": "team-a"}
    assert run(policy, [_patch("kubernetes:apps/v1:DeploymentPatch", "api", unnamed)]).mentions(
        "metadata.name: required field missing"
    )
    odd = run(policy, [_patch("kubernetes:apps/v1:DeploymentPatch", "api", {**scale_patch(), "kind": "Pod"})])
    assert odd.violations == [] and odd.cannot_check is not None
    assert "no apps/v1 DeploymentPatch in the Kubernetes" in odd.cannot_check


PATCHES: list[tuple[str, dict[str, Any]]] = [
    ("kubernetes:core/v1:NamespacePatch", namespace_patch({"team": "ml"})),
    ("kubernetes:apps/v1:DeploymentPatch", scale_patch(replicas=2)),
    ("kubernetes:apps/v1:DeploymentPatch", {**scale_patch(replicas="two"), "metadata": {"name": "bad"}}),
]


def _records() -> list[RecordedResource]:
    out = [RecordedResource(STACK_URN, "pulumi:pulumi:Stack", "gpu-batch-corpus", "", "", False, {}, {})]
    for index, (type_, doc) in enumerate(PATCHES):
        name = f"patch-{index}"
        urn = f"urn:pulumi:corpus::gpu-batch::{type_}::{name}"
        out.append(RecordedResource(urn, type_, name, STACK_URN, "", True, doc, doc))
    return out


def test_pack_and_preview_agree_on_patches() -> None:
    recorded = _records()
    docs = [doc for _, doc in PATCHES]
    preview_lines = validate_manifests(
        docs, kubernetes=kubernetes_minor(None), patches=patch_identities(recorded)
    )
    assert [line.split(": ", 1)[1] for line in preview_lines] == [
        'spec.replicas: expected integer, got string "two"'
    ]
    with PolicyPackProcess(POLICIES_DIR, stack="patches") as process:
        process.configure()
        diagnostics = [d for d in process.analyze(recorded) if d.policy_name == "builtin-object-schema"]
    assert len(diagnostics) == 1 and diagnostics[0].mandatory
    assert 'spec.replicas: expected integer, got string "two"' in diagnostics[0].message
    # Without the patch identities the preview judges whole objects: the partial ones fail.
    assert len(validate_manifests(docs, kubernetes=kubernetes_minor(None))) > 1


def cluster_queue_patch(spec: dict[str, Any]) -> Any:
    """A ClusterQueuePatch (pulumi-kubernetes ``CustomResourcePatch``'s type for a Kueue kind)."""
    props = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ClusterQueue",
        "metadata": {"name": "team"},
        "spec": spec,
    }
    return _patch("kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueuePatch", "cq", props)


def test_a_custom_resource_patch_is_judged_by_its_crd_as_a_partial_object() -> None:
    policy = next(p for p in CUSTOM_RESOURCE_POLICIES if p.name == "custom-resource-schema")
    hold = run(policy, [cluster_queue_patch({"stopPolicy": "Hold"})])
    assert hold.violations == []  # no resourceGroups, namespaceSelector ...: the live object has them
    # CEL rules run on the merged object, which only the cluster holds: counted, not passed.
    assert hold.cannot_check is not None and "a patch: the API server runs CEL rules" in hold.cannot_check
    assert "ClusterQueuePatch 'team' " in hold.cannot_check  # cluster-scoped, as its kind
    assert run(policy, [cluster_queue_patch({"stopPolicy": "Halt"})]).mentions(
        'spec.stopPolicy: unsupported value "Halt"'
    )
    assert run(policy, [cluster_queue_patch({"stopPolicy": "Hold", "stopPolcy": "Hold"})]).mentions(
        "spec.stopPolcy: field not declared"
    )
    unkeyed = {"resourceGroups": [{"coveredResources": ["cpu"], "flavors": [{"resources": []}]}]}
    assert run(policy, [cluster_queue_patch(unkeyed)]).mentions(
        "spec.resourceGroups[0].flavors[0].name: required field missing"
    )


def test_a_custom_resource_patch_drops_required_where_the_whole_object_keeps_it() -> None:
    policy = next(p for p in CUSTOM_RESOURCE_POLICIES if p.name == "custom-resource-schema")
    keyed = {"resourceGroups": [{"coveredResources": ["cpu"], "flavors": [{"name": "gpu-flavor"}]}]}
    assert run(policy, [cluster_queue_patch(keyed)]).violations == []  # merged into the live flavor
    whole_props = {**cluster_queue_patch(keyed)[1], "metadata": {"name": "team"}}
    whole = _patch("kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue", "cq", whole_props)
    assert run(policy, [whole]).mentions(
        "spec.resourceGroups[0].flavors[0].resources: required field missing"
    )


# Kinds the OpenAPI document defines that are not API resources (no pulumi-kubernetes resource, so
# no Patch), and StorageVersion, the apiserver-internal kind (internal.apiserver.k8s.io).
NOT_RESOURCES = frozenset(
    {"APIGroup", "APIVersions", "DeleteOptions", "Status", "StorageVersion", "WatchEvent"}
)


def _top_level_kinds(minor: str) -> list[tuple[str, str]]:
    """Every (apiVersion, kind) kubernetes-validate ships a top-level schema for, lists left out
    (pulumi-kubernetes has no Patch for a List)."""
    root = resources.files("kubernetes_validate").joinpath(
        "kubernetes-json-schema", f"v{minor}.0-local-strict"
    )
    found = set()
    for path in root.iterdir():
        if path.name.startswith("_") or not path.name.endswith(".json"):
            continue
        for gvk in json.loads(path.read_text(encoding="utf-8")).get("x-kubernetes-group-version-kind") or ():
            api_version = f"{gvk['group']}/{gvk['version']}" if gvk["group"] else gvk["version"]
            if not gvk["kind"].endswith("List"):
                found.add((api_version, gvk["kind"]))
    return sorted(found)


def test_every_kind_a_patch_can_target_takes_a_patch_of_just_its_name() -> None:
    """Complete, from the schemas themselves: no ``required`` leaks into a patch of any kind, and
    any kind the validator cannot find a schema for is one of the non-resources above."""
    validator = CoreValidator(GKE_NEWEST_MINOR)
    judged, whole_invalid, no_schema = 0, 0, set()
    for api_version, kind in _top_level_kinds(GKE_NEWEST_MINOR):
        doc = {"apiVersion": api_version, "kind": kind, "metadata": {"name": "x"}}
        result = validator.validate(doc, patch=True)
        if result.outcome is Outcome.NO_SCHEMA:
            no_schema.add(kind)
            continue
        judged += 1
        assert result.outcome is Outcome.VALID, (api_version, kind, result.violations)
        whole_invalid += bool(validator.validate(doc).violations)
    assert no_schema == NOT_RESOURCES
    assert judged >= 100 and whole_invalid >= 40  # as whole objects, many miss a required field
