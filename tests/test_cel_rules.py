"""The CRDs' own CEL rules, run by ``preview.cel_rules`` through the strict CRD validator.

Each real rule is read from the CRD files in ``../shared/schemas`` (and KAI's v0.17.0 chart in
``../shared/vendor``): a broken object is rejected with the CRD's own message at the rule's
path, the fixed object passes, and rules that cannot run here are counted as not checked.
"""

from __future__ import annotations

import copy
import datetime
from pathlib import Path
from typing import Any

import pytest
from gpu_batch_policy.facts.schema.markers import UNKNOWN_DISPLAY

from preview.cel_rules import NodeRules, Verdict, compiled_rule, parse_field_path
from preview.crd_validation import CrdCatalog, Outcome, ValidationResult, validate_object

KUEUE = "kueue.x-k8s.io"
VENDOR = Path(__file__).resolve().parents[1].parent / "shared" / "vendor"


def failures(result: ValidationResult) -> dict[str, str]:
    return {v.path: v.message for v in result.violations}


def cluster_queue(version: str = "v1beta2", **spec: Any) -> dict[str, Any]:
    cohort_field = "cohortName" if version == "v1beta2" else "cohort"
    body: dict[str, Any] = {
        cohort_field: "research",
        "resourceGroups": [
            {
                "coveredResources": ["cpu", "nvidia.com/gpu"],
                "flavors": [
                    {
                        "name": "l4",
                        "resources": [
                            {"name": "cpu", "nominalQuota": 40},
                            {"name": "nvidia.com/gpu", "nominalQuota": 8, "borrowingLimit": 2},
                        ],
                    }
                ],
            }
        ],
    }
    body.update(spec)
    return {
        "apiVersion": f"{KUEUE}/{version}",
        "kind": "ClusterQueue",
        "metadata": {"name": "cq"},
        "spec": body,
    }


def assert_rejected_then_fixed(
    broken: dict[str, Any], fixed: dict[str, Any], path: str, message: str
) -> None:
    result = validate_object(broken)
    assert result.outcome is Outcome.INVALID, result.messages()
    assert failures(result).get(path, "").startswith("Invalid value: " + message), result.messages()
    fixed_result = validate_object(fixed)
    assert fixed_result.outcome is Outcome.VALID, fixed_result.messages()
    assert fixed_result.cel_rules_checked > 0


# --------------------------------------------------------------------------------------------
# Kueue


@pytest.mark.parametrize("version", ["v1beta1", "v1beta2"])
def test_cluster_queue_borrowing_limit_needs_a_cohort(version: str) -> None:
    broken = cluster_queue(version)
    del broken["spec"]["cohortName" if version == "v1beta2" else "cohort"]
    fixed = cluster_queue(version)
    assert_rejected_then_fixed(broken, fixed, "spec", "borrowingLimit must be nil when cohort is empty")


def test_cluster_queue_flavor_resources_must_match_covered_resources() -> None:
    broken = cluster_queue()
    broken["spec"]["resourceGroups"][0]["flavors"][0]["resources"].pop()
    assert_rejected_then_fixed(
        broken,
        cluster_queue(),
        "spec.resourceGroups[0]",
        "flavors must have the same number of resources as the coveredResources",
    )


def test_cluster_queue_preemption_rule_reads_the_schema_default() -> None:
    # reclaimWithinCohort is left out: the API server defaults it to Never before the rule runs.
    broken = cluster_queue(preemption={"borrowWithinCohort": {"policy": "LowerPriority"}})
    fixed = cluster_queue(
        preemption={"reclaimWithinCohort": "Any", "borrowWithinCohort": {"policy": "LowerPriority"}}
    )
    assert_rejected_then_fixed(
        broken, fixed, "spec.preemption", "reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never"
    )


def test_cluster_queue_fungibility_preference_needs_try_next_flavor() -> None:
    broken = cluster_queue(flavorFungibility={"preference": "BorrowingOverPreemption"})
    fixed = cluster_queue(
        flavorFungibility={
            "preference": "BorrowingOverPreemption",
            "whenCanBorrow": "TryNextFlavor",
            "whenCanPreempt": "TryNextFlavor",
        }
    )
    assert_rejected_then_fixed(
        broken, fixed, "spec.flavorFungibility", "preference can only be set when both whenCanBorrow"
    )


def test_cohort_flavor_resources_must_match_covered_resources() -> None:
    fixed = cluster_queue()
    fixed["kind"] = "Cohort"
    del fixed["spec"]["cohortName"]
    fixed["spec"]["parentName"] = "root"
    broken = copy.deepcopy(fixed)
    broken["spec"]["resourceGroups"][0]["coveredResources"].append("memory")
    assert_rejected_then_fixed(
        broken,
        fixed,
        "spec.resourceGroups[0]",
        "flavors must have the same number of resources as the coveredResources",
    )


def test_local_queue_immutability_rule_is_not_checked_before_deploy() -> None:
    queue = {
        "apiVersion": f"{KUEUE}/v1beta2",
        "kind": "LocalQueue",
        "metadata": {"name": "user-queue", "namespace": "team-a"},
        "spec": {"clusterQueue": "cq"},
    }
    result = validate_object(queue)
    assert result.outcome is Outcome.VALID
    assert (result.cel_rules_checked, result.cel_rules_unchecked) == (0, 1)
    assert result.cel_unchecked_reasons == ("transition rule (oldSelf): runs only on update (1)",)


def resource_flavor(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": f"{KUEUE}/v1beta2",
        "kind": "ResourceFlavor",
        "metadata": {"name": "l4"},
        "spec": spec,
    }


def test_resource_flavor_topology_needs_a_node_label() -> None:
    # Without nodeLabels the rule's `self.nodeLabels` has no such key: the API server rejects it.
    assert_rejected_then_fixed(
        resource_flavor(topologyName="default"),
        resource_flavor(topologyName="default", nodeLabels={"cloud.google.com/gke-nodepool": "gpu"}),
        "spec",
        "at least one nodeLabel is required when topology is set",
    )


def test_resource_flavor_toleration_without_key_must_use_exists() -> None:
    assert_rejected_then_fixed(
        resource_flavor(tolerations=[{"operator": "Equal", "value": "x", "effect": "NoSchedule"}]),
        resource_flavor(tolerations=[{"operator": "Exists", "effect": "NoSchedule"}]),
        "spec.tolerations",
        "operator must be Exists when 'key' is empty",
    )


# --------------------------------------------------------------------------------------------
# KubeRay and KAI


def test_ray_job_deletion_strategy_needs_both_policies_or_rules() -> None:
    def ray_job(strategy: dict[str, Any]) -> dict[str, Any]:
        return {
            "apiVersion": "ray.io/v1",
            "kind": "RayJob",
            "metadata": {"name": "job"},
            "spec": {"entrypoint": "python train.py", "deletionStrategy": strategy},
        }

    assert_rejected_then_fixed(
        ray_job({"onSuccess": {"policy": "DeleteCluster"}}),
        ray_job({"onSuccess": {"policy": "DeleteCluster"}, "onFailure": {"policy": "DeleteNone"}}),
        "spec.deletionStrategy",
        "deletionStrategy requires either BOTH onSuccess and onFailure",
    )


def test_ray_cluster_managed_by_must_be_a_known_controller() -> None:
    def ray_cluster(managed_by: str) -> dict[str, Any]:
        return {
            "apiVersion": "ray.io/v1",
            "kind": "RayCluster",
            "metadata": {"name": "rc"},
            "spec": {
                "managedBy": managed_by,
                "headGroupSpec": {
                    "template": {"spec": {"containers": [{"name": "head", "image": "rayproject/ray"}]}}
                },
            },
        }

    broken, fixed = ray_cluster("example.com/other"), ray_cluster("kueue.x-k8s.io/multikueue")
    assert_rejected_then_fixed(broken, fixed, "spec.managedBy", "the managedBy field value must be either")
    # Its sibling rule `self == oldSelf` (immutability) is counted, not passed.
    assert validate_object(fixed).cel_rules_unchecked == 1


def test_kai_queue_crd_has_no_cel_rules_so_none_run() -> None:
    queue = {
        "apiVersion": "scheduling.run.ai/v2",
        "kind": "Queue",
        "metadata": {"name": "team-a"},
        "spec": {
            "parentQueue": "department-1",
            "resources": {"gpu": {"quota": 2, "limit": 4, "overQuotaWeight": 1}},
        },
    }
    result = validate_object(queue)
    assert result.outcome is Outcome.VALID, result.messages()
    assert (result.cel_rules_checked, result.cel_rules_unchecked) == (0, 0)


@pytest.mark.skipif(not (VENDOR / "kai-scheduler-v0.17.0" / "crds").is_dir(), reason="needs ../shared/vendor")
def test_kai_topology_levels_must_be_unique() -> None:
    catalog = CrdCatalog(VENDOR / "kai-scheduler-v0.17.0" / "crds")

    def topology(*labels: str) -> dict[str, Any]:
        return {
            "apiVersion": "kai.scheduler/v1alpha1",
            "kind": "Topology",
            "metadata": {"name": "gke"},
            "spec": {"levels": [{"nodeLabel": label} for label in labels]},
        }

    broken = catalog.validate(
        topology("cloud.google.com/gce-topology-block", "cloud.google.com/gce-topology-block")
    )
    assert failures(broken).get("spec.levels") == "Invalid value: nodeLabel must be unique", broken.messages()
    fixed = catalog.validate(topology("cloud.google.com/gce-topology-block", "kubernetes.io/hostname"))
    assert fixed.outcome is Outcome.VALID, fixed.messages()
    assert (fixed.cel_rules_checked, fixed.cel_rules_unchecked) == (2, 1)


# --------------------------------------------------------------------------------------------
# The rule machinery itself


def test_message_expression_field_path_and_reason_are_honoured() -> None:
    rule = compiled_rule(
        {
            "rule": "self.min <= self.max",
            "message": "static",
            "messageExpression": "'min ' + string(self.min) + ' exceeds max ' + string(self.max)",
            "fieldPath": ".min",
            "reason": "FieldValueForbidden",
        }
    )
    result = rule.evaluate({"min": 3, "max": 2}, {})
    assert result.verdict is Verdict.FAILED
    assert result.message == "Forbidden: min 3 exceeds max 2"
    assert result.field_path == ("min",)
    assert rule.evaluate({"min": 1, "max": 2}, {}).verdict is Verdict.PASSED


def test_message_falls_back_to_the_rule_text() -> None:
    assert (
        compiled_rule({"rule": "self > 1"}).evaluate(0, {}).message == "Invalid value: failed rule: self > 1"
    )


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ({"rule": "self == oldSelf"}, "transition rule (oldSelf)"),
        ({"rule": "self.x == 1", "optionalOldSelf": True}, "optionalOldSelf needs CEL optional types"),
        ({"rule": "isQuantity(self)"}, "needs isQuantity, which cel-python 0.5.0 lacks"),
        ({"rule": "self.lowerAscii() == 'a'"}, "needs lowerAscii, which cel-python 0.5.0 lacks"),
        ({"rule": "self.?a.orValue(1) == 1"}, "cel-python 0.5.0 cannot parse it"),
        ({"rule": "self.a == 1", "fieldPath": "spec[0]"}, "is not a supported path"),
    ],
)
def test_rules_this_library_cannot_decide_are_unchecked_never_passed(
    raw: dict[str, Any], reason: str
) -> None:
    result = compiled_rule(raw).evaluate({"a": 1}, {})
    assert result.verdict is Verdict.UNCHECKED
    assert reason in result.message


def test_a_value_unknown_until_deploy_leaves_the_rule_unchecked() -> None:
    rule = compiled_rule({"rule": "self.a != 'x'"})
    assert rule.evaluate({"a": UNKNOWN_DISPLAY}, {}).verdict is Verdict.UNCHECKED
    broken = cluster_queue()
    broken["spec"]["cohortName"] = UNKNOWN_DISPLAY
    result = validate_object(broken)
    assert result.outcome is Outcome.VALID
    assert "a value under its node is unknown until deploy" in " ".join(result.cel_unchecked_reasons)


def test_values_cel_python_cannot_convert_leave_the_rule_unchecked() -> None:
    rule = compiled_rule({"rule": "self.size() > 0"})
    result = rule.evaluate({"created": datetime.date(2026, 1, 1)}, {})  # an unquoted YAML date
    assert result.verdict is Verdict.UNCHECKED and "cel-python could not evaluate it" in result.message


def test_workload_exactly_one_of_rule_runs() -> None:
    # From Workload v1beta2's podCounts: a list literal filtered and sized.
    rule = compiled_rule(
        {"rule": "[has(self.universal),has(self.individual)].filter(x,x==true).size() == 1", "message": "one"}
    )
    assert rule.evaluate({"universal": 1}, {}).verdict is Verdict.PASSED
    assert rule.evaluate({"universal": 1, "individual": [1]}, {}).verdict is Verdict.FAILED
    assert rule.evaluate({}, {}).verdict is Verdict.FAILED


def test_field_paths_parse_like_the_api_server_spells_them() -> None:
    assert parse_field_path(".spec.x") == (("spec", "x"), True)
    assert parse_field_path(".labels['a.b/c']") == (("labels", "a.b/c"), True)
    assert parse_field_path("spec") == ((), False)


def test_each_rule_text_is_compiled_once() -> None:
    raw = {"rule": "self.size() > 0", "message": "m"}
    assert compiled_rule(raw) is compiled_rule(dict(raw))


def test_node_rules_memoise_per_value_without_mixing_values() -> None:
    rules = NodeRules(
        [{"rule": "self.a < self.b", "message": "a must be below b"}, {"rule": "self == oldSelf"}], {}
    )
    first = rules.run({"a": 1, "b": 2})
    assert [r.verdict for r in first] == [Verdict.PASSED, Verdict.UNCHECKED]
    assert rules.run({"b": 2, "a": 1}) is first  # same value, key order aside: one evaluation
    assert rules.run({"a": 3, "b": 2})[0].message == "Invalid value: a must be below b"


@pytest.mark.parametrize(
    ("rule", "fields"),
    [
        (
            "!has(self.cohortName) && has(self.resourceGroups) ? self.resourceGroups.size() > 0 : true",
            {"cohortName", "resourceGroups"},
        ),
        (
            "self.flavors.all(x, size(x.resources) == size(self.coveredResources))",
            {"flavors", "coveredResources"},
        ),
        ("self.all(x, has(x.key))", None),
        ("size(self) > 0", None),
        ("self.a == 1 || self == {}", None),
    ],
)
def test_rules_read_only_the_fields_of_self_they_name(rule: str, fields: set[str] | None) -> None:
    assert compiled_rule({"rule": rule}).self_fields == (None if fields is None else frozenset(fields))


def test_fields_a_node_rule_does_not_read_do_not_change_its_verdict_or_hide_it() -> None:
    rules = NodeRules([{"rule": "has(self.cohortName)", "message": "needs a cohort"}], {})
    first = rules.run({"cohortName": "ml", "namespaceSelector": {"team": "a"}})
    assert rules.run({"cohortName": "ml", "namespaceSelector": {"team": "b"}}) is first
    # An unknown value in a field the rule never reads does not make it unchecked.
    assert rules.run({"namespaceSelector": UNKNOWN_DISPLAY})[0].verdict is Verdict.FAILED


def test_escaped_property_names_read_the_declared_property() -> None:
    """kubernetes apiserver pkg/cel/escaping.go: ``x-prop`` is ``x__dash__prop``, the reserved word
    ``namespace`` is ``__namespace__``; a map's keys (additionalProperties) are not escaped."""
    schema = {
        "type": "object",
        "properties": {"x-prop": {"type": "integer"}, "namespace": {"type": "string"}},
    }
    dash = compiled_rule({"rule": "self.x__dash__prop > 0"})
    assert dash.evaluate({"x-prop": 1}, schema).verdict is Verdict.PASSED
    assert dash.evaluate({"x-prop": 0}, schema).verdict is Verdict.FAILED
    forbidden = compiled_rule({"rule": "!has(self.__namespace__)", "message": "Namespace not allowed"})
    assert forbidden.evaluate({"x-prop": 1}, schema).verdict is Verdict.PASSED
    assert forbidden.evaluate({"namespace": "other"}, schema).verdict is Verdict.FAILED
    as_map = {"type": "object", "additionalProperties": {"type": "integer"}}
    assert (
        compiled_rule({"rule": "self['x-prop'] == 1"}).evaluate({"x-prop": 1}, as_map).verdict
        is Verdict.PASSED
    )
