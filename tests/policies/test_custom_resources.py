"""``custom-resource-schema``: custom resources judged by their CRD, as the API server judges them.

Each class has a broken and a clean case, written from the rule in the CRD the pinned chart ships
(kubernetes-sigs/kueue v0.19.2, ``charts/kueue/templates/crd/``; ray-project/kuberay v1.7.0
``helm-chart/kuberay-operator/crds/``), not from corpus files:

* enum: ClusterQueue ``spec.queueingStrategy`` is ``StrictFIFO`` or ``BestEffortFIFO``; LocalQueue
  ``spec.stopPolicy`` is ``None``, ``Hold`` or ``HoldAndDrain`` (kueue.x-k8s.io_clusterqueues.yaml,
  kueue.x-k8s.io_localqueues.yaml, v1beta1 and v1beta2);
* ResourceFlavor CEL: "supported taint effect values: 'NoSchedule', 'PreferNoSchedule',
  'NoExecute'" on ``spec.nodeTaints``, "operator must be Exists when 'key' is empty" on
  ``spec.tolerations`` (kueue.x-k8s.io_resourceflavors.yaml);
* Topology: ``spec.levels`` is required, 1-16 items, and "the kubernetes.io/hostname label can only
  be used at the lowest level of topology" (kueue.x-k8s.io_topologies.yaml);
* required fields: a ResourceFlavor taint needs ``key`` and ``effect``;
* unknown fields: server-side apply refuses a field the schema does not declare
  (k8s.io/apimachinery ``managedfields/internal/structuredmerge.go``, "field not declared in
  schema");
* a CRD the stack declares itself (``apiextensions.k8s.io/v1`` CustomResourceDefinition) is used
  for that group's objects;
* cannot check, never passed: a group no CRD defines, a version the CRD does not serve, an object
  nested past the limit, CEL rules on values unknown until apply.
"""

from __future__ import annotations

from typing import Any

from gpu_batch_policy.facts.schema.depth import MAX_SCHEMA_DEPTH
from gpu_batch_policy.rules.api_server.custom_resources import BUILT_IN_GROUPS

from tests.policies.pack_harness import UNKNOWN, Res, Run, policy, run

KUEUE = "kueue.x-k8s.io"
RULE = policy("custom-resource-schema")


def obj(kind: str, name: str, spec: Any, version: str = "v1beta2", group: str = KUEUE, **meta: Any) -> Res:
    api_version = f"{group}/{version}"
    props = {"apiVersion": api_version, "kind": kind, "metadata": {"name": name, **meta}, "spec": spec}
    return Res(f"kubernetes:{api_version}:{kind}", name, props)


def judged(*resources: Res) -> Run:
    return run(RULE, list(resources))


def test_queueing_strategy_enum_v1beta2_and_v1beta1() -> None:
    for version in ("v1beta2", "v1beta1"):
        broken = judged(obj("ClusterQueue", "cq", {"queueingStrategy": "StrictFifo"}, version))
        assert len(broken.violations) == 1, broken.text()
        message = broken.messages[0]
        assert f"ClusterQueue 'cq' ({KUEUE}/{version})" in message
        assert 'spec.queueingStrategy: unsupported value "StrictFifo"' in message
        assert '"StrictFIFO", "BestEffortFIFO"' in message
        assert judged(obj("ClusterQueue", "cq", {"queueingStrategy": "StrictFIFO"}, version)).clean


def test_local_queue_stop_policy_enum() -> None:
    broken = judged(obj("LocalQueue", "lq", {"clusterQueue": "cq", "stopPolicy": "Pause"}, namespace="team"))
    assert 'spec.stopPolicy: unsupported value "Pause"' in broken.text()
    assert judged(
        obj("LocalQueue", "lq", {"clusterQueue": "cq", "stopPolicy": "Hold"}, namespace="team")
    ).clean


def test_resource_flavor_taint_effect_and_required_fields() -> None:
    broken = judged(obj("ResourceFlavor", "rf", {"nodeTaints": [{"key": "gpu", "effect": "NoRun"}]}))
    assert "supported taint effect values" in broken.text()
    missing = judged(obj("ResourceFlavor", "rf", {"nodeTaints": [{"key": "gpu"}]}))
    assert "spec.nodeTaints[0].effect: required field missing" in missing.text()
    clean = judged(obj("ResourceFlavor", "rf", {"nodeTaints": [{"key": "gpu", "effect": "NoSchedule"}]}))
    assert clean.clean, clean.text()


def test_resource_flavor_toleration_without_key_must_use_exists() -> None:
    broken = judged(obj("ResourceFlavor", "rf", {"tolerations": [{"operator": "Equal", "value": "x"}]}))
    assert "operator must be Exists when 'key' is empty" in broken.text()
    assert judged(obj("ResourceFlavor", "rf", {"tolerations": [{"operator": "Exists"}]})).clean


def test_topology_levels() -> None:
    assert "spec.levels: required field missing" in judged(obj("Topology", "t", {})).text()
    assert "must have at least 1 items" in judged(obj("Topology", "t", {"levels": []})).text()
    hostname_first = [
        {"nodeLabel": "kubernetes.io/hostname"},
        {"nodeLabel": "cloud.google.com/gce-topology-block"},
    ]
    assert (
        "can only be used at the lowest level"
        in judged(obj("Topology", "t", {"levels": hostname_first})).text()
    )
    clean = judged(obj("Topology", "t", {"levels": hostname_first[::-1]}))
    assert clean.clean, clean.text()


def test_a_field_the_schema_does_not_declare_is_refused() -> None:
    broken = judged(obj("ClusterQueue", "cq", {"cohort": "team"}))  # v1beta1's name; v1beta2 says cohortName
    assert "spec.cohort: field not declared in schema kueue.x-k8s.io/v1beta2" in broken.text()
    assert "declared in v1beta1" in broken.text()
    assert judged(obj("ClusterQueue", "cq", {"cohortName": "team"})).clean


def test_a_crd_the_stack_declares_is_used() -> None:
    schema = {
        "type": "object",
        "properties": {
            "spec": {"type": "object", "properties": {"size": {"type": "integer", "maximum": 3}}},
        },
    }
    crd = Res(
        "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition",
        "widgets",
        {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com"},
            "spec": {
                "group": "example.com",
                "names": {"kind": "Widget", "plural": "widgets"},
                "scope": "Namespaced",
                "versions": [
                    {"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": schema}}
                ],
            },
        },
    )
    broken = judged(crd, obj("Widget", "w", {"size": 4}, "v1", "example.com", namespace="a"))
    assert "spec.size: must be <= 3, got 4" in broken.text()
    assert judged(crd, obj("Widget", "w", {"size": 3}, "v1", "example.com", namespace="a")).clean
    # Without the CRD, the same object is "cannot check", never passed and never failed.
    alone = judged(obj("Widget", "w", {"size": 4}, "v1", "example.com", namespace="a"))
    assert alone.clean and alone.cannot_check and "no CRD for API group example.com" in alone.cannot_check


def test_cannot_check_an_unserved_version_or_a_group_without_crd() -> None:
    cohort = judged(obj("Cohort", "c", {}, "v1alpha1"))
    assert cohort.clean and cohort.cannot_check and "version v1alpha1 of Cohort" in cohort.cannot_check
    jobset = judged(obj("JobSet", "js", {"replicatedJobs": []}, "v1alpha2", "jobset.x-k8s.io", namespace="a"))
    assert jobset.clean and jobset.cannot_check and "jobset.x-k8s.io" in jobset.cannot_check


def test_too_deep_is_one_cannot_check_naming_the_resource_and_the_limit() -> None:
    deep: Any = "x"
    for _ in range(MAX_SCHEMA_DEPTH + 5):
        deep = {"a": deep}
    result = judged(obj("ClusterQueue", "deep-cq", {"namespaceSelector": deep}))
    assert result.clean and result.cannot_check
    assert "ClusterQueue 'deep-cq'" in result.cannot_check
    assert f"schema validation reads at most {MAX_SCHEMA_DEPTH} levels" in result.cannot_check


def test_values_unknown_until_apply_are_not_failed_and_cel_on_them_is_not_passed() -> None:
    result = judged(obj("ResourceFlavor", "rf", {"tolerations": [{"operator": UNKNOWN}]}))
    assert result.clean
    assert result.cannot_check and "a value under its node is unknown until deploy" in result.cannot_check


def test_built_in_kinds_are_left_to_the_kubernetes_schema() -> None:
    assert {"", "apps", "batch", "scheduling.k8s.io"} <= BUILT_IN_GROUPS and KUEUE not in BUILT_IN_GROUPS
    namespace = Res("kubernetes:core/v1:Namespace", "team", {"metadata": {"name": "team"}, "bogus": 1})
    result = judged(namespace)
    assert result.clean and result.cannot_check is None


def test_a_stack_crd_with_values_unknown_until_apply_is_ignored_not_a_crash() -> None:
    crd = Res(
        "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition",
        "widgets",
        {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com"},
            "spec": {"group": "example.com", "names": UNKNOWN, "versions": UNKNOWN},
        },
    )
    result = judged(crd, obj("Widget", "w", {"size": 4}, "v1", "example.com", namespace="a"))
    assert result.clean and result.cannot_check and "no CRD for API group example.com" in result.cannot_check


def test_a_stack_crd_with_a_malformed_schema_is_cannot_check() -> None:
    schema = {"type": "object", "properties": {"spec": {"type": ["object"], "minProperties": "two"}}}
    crd = Res(
        "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition",
        "widgets",
        {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com"},
            "spec": {
                "group": "example.com",
                "names": {"kind": "Widget", "plural": "widgets"},
                "scope": "Namespaced",
                "versions": [{"name": "v1", "served": True, "schema": {"openAPIV3Schema": schema}}],
            },
        },
    )
    result = judged(crd, obj("Widget", "w", {"a": 1}, "v1", "example.com", namespace="a"))
    assert result.clean and result.cannot_check and "cannot read; the API server" in result.cannot_check


def _widget_crd(rule: dict[str, Any]) -> Res:
    """A stack CRD whose ``spec`` carries one CEL rule (x-kubernetes-validations)."""
    schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {"size": {"type": "integer"}},
                "x-kubernetes-validations": [rule],
            }
        },
    }
    return Res(
        "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition",
        "widgets",
        {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com"},
            "spec": {
                "group": "example.com",
                "names": {"kind": "Widget", "plural": "widgets"},
                "scope": "Namespaced",
                "versions": [
                    {"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": schema}}
                ],
            },
        },
    )


def test_transition_rules_do_not_run_on_create_but_optional_old_self_does() -> None:
    """kubernetes v1.34.0 ``apiextensions/v1/types_jsonschema.go`` ``ValidationRule``: a rule that
    reads ``oldSelf`` is a transition rule, evaluated only when an old value exists, so a create
    leaves nothing unchecked; with ``optionalOldSelf: true`` it also runs on create (``oldSelf``
    then an empty optional), which cel-python cannot evaluate: that one is "cannot check"."""
    widget = obj("Widget", "w", {"size": 1}, "v1", "example.com", namespace="a")
    transition = judged(_widget_crd({"rule": "self.size >= oldSelf.size"}), widget)
    assert transition.clean and not transition.cannot_check
    optional = judged(
        _widget_crd({"rule": "self.size >= 0 || oldSelf.hasValue()", "optionalOldSelf": True}), widget
    )
    assert optional.clean and optional.cannot_check and "optionalOldSelf" in optional.cannot_check
