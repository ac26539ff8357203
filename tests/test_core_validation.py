"""Built-in objects against the strict Kubernetes OpenAPI schema (``gpu_batch_policy.facts.schema.core``).

Each broken object is rejected at the exact path the API server would name; the fixed one
passes; every object the pinned charts render with their default values validates too.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from gpu_batch_policy.facts.schema import core
from gpu_batch_policy.facts.schema.core import (
    GKE_NEWEST_MINOR,
    CoreValidator,
    kubernetes_minor,
    shipped_minors,
)
from gpu_batch_policy.facts.schema.markers import SECRET_DISPLAY, UNKNOWN_DISPLAY

from preview.crd_validation import Outcome, ValidationResult
from preview.manifests import validate_manifests

VENDOR = Path(__file__).resolve().parents[1].parent / "shared" / "vendor"
VALIDATOR = CoreValidator("1.33")


def paths(result: ValidationResult) -> list[str]:
    return [v.path for v in result.violations]


def deployment() -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "api", "namespace": "team-a", "labels": {"app": "api"}},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "api"}},
            "template": {
                "metadata": {"labels": {"app": "api"}},
                "spec": {
                    "containers": [
                        {
                            "name": "api",
                            "image": "registry.k8s.io/pause:3.10",
                            "ports": [{"containerPort": 8080}],
                            "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}},
                        }
                    ],
                    "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
                },
            },
        },
    }


def role() -> dict[str, Any]:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": {"name": "submitter", "namespace": "team-a"},
        "rules": [{"apiGroups": ["ray.io"], "resources": ["rayjobs"], "verbs": ["create", "get"]}],
    }


def service() -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "api", "namespace": "team-a"},
        "spec": {"selector": {"app": "api"}, "ports": [{"name": "http", "port": 80, "targetPort": "http"}]},
    }


@pytest.mark.parametrize("make", [deployment, role, service])
def test_correct_objects_pass(make: Any) -> None:
    result = VALIDATOR.validate(make())
    assert result.outcome is Outcome.VALID, result.messages()
    assert result.schema.startswith("kubernetes 1.33 ")


def test_deployment_with_an_unknown_field_is_rejected_at_its_path() -> None:
    obj = deployment()
    obj["spec"]["template"]["spec"]["containers"][0]["resource"] = {"limits": {"cpu": "1"}}
    obj["spec"]["replica"] = 3
    result = VALIDATOR.validate(obj)
    assert result.outcome is Outcome.INVALID
    assert paths(result) == ["spec.replica", "spec.template.spec.containers[0].resource"]
    assert all(v.message == "field not declared in the Kubernetes schema" for v in result.violations)


def test_role_with_a_wrong_type_is_rejected_at_its_path() -> None:
    obj = role()
    obj["rules"][0]["verbs"] = "create"
    result = VALIDATOR.validate(obj)
    assert result.messages() == ['Role/team-a/submitter: rules[0].verbs: expected array, got string "create"']


@pytest.mark.parametrize(
    ("port", "path", "expected"),
    [
        ({"port": "eighty"}, "spec.ports[0].port", 'expected integer, got string "eighty"'),
        ({"targetPort": 8080}, "spec.ports[0].port", "required field missing"),
        ({"port": 80, "protocol": 6}, "spec.ports[0].protocol", "expected string, got integer 6"),
    ],
)
def test_service_with_a_bad_port_is_rejected_at_its_path(
    port: dict[str, Any], path: str, expected: str
) -> None:
    obj = service()
    obj["spec"]["ports"] = [port]
    result = VALIDATOR.validate(obj)
    assert [(v.path, v.message) for v in result.violations] == [(path, expected)]


def test_int_or_string_accepts_both_and_rejects_others() -> None:
    obj = service()
    obj["spec"]["ports"][0]["targetPort"] = 8080
    assert VALIDATOR.validate(obj).ok
    obj["spec"]["ports"][0]["targetPort"] = [8080]
    assert paths(VALIDATOR.validate(obj)) == ["spec.ports[0].targetPort"]


def test_markers_are_accepted_for_any_type_and_counted() -> None:
    obj = deployment()
    obj["spec"]["replicas"] = UNKNOWN_DISPLAY
    obj["spec"]["template"]["spec"]["containers"][0]["ports"] = SECRET_DISPLAY
    obj["metadata"]["namespace"] = UNKNOWN_DISPLAY
    result = VALIDATOR.validate(obj)
    assert result.outcome is Outcome.VALID, result.messages()
    assert result.unchecked_values == 3
    obj["spec"]["replicas"] = "(not known)"
    assert paths(VALIDATOR.validate(obj)) == ["spec.replicas"]


def test_a_secrets_values_never_appear_in_messages() -> None:
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "auth", "namespace": "team-a"},
        "stringData": {"password": 1234567},
    }
    (violation,) = VALIDATOR.validate(secret).violations
    assert violation.path == "stringData.password"
    assert "1234567" not in violation.message and "value hidden" in violation.message


def test_objects_differing_only_in_identity_share_one_verdict_but_not_their_identity() -> None:
    first, second = role(), role()
    second["metadata"] = {"name": "other", "namespace": "team-b", "labels": {"team": "b"}}
    first["metadata"]["labels"] = {"team": "a"}
    assert VALIDATOR.validate(first).ok and VALIDATOR.validate(second).ref == "Role/team-b/other"
    broken = copy.deepcopy(second)
    broken["metadata"]["labels"] = {"team": 7}  # a non-string label value is not stood in for
    assert paths(VALIDATOR.validate(broken)) == ["metadata.labels.team"]
    second["rules"][0]["verbs"] = "get"
    assert paths(VALIDATOR.validate(second)) == ["rules[0].verbs"]


def validating_admission_policy(team: str) -> dict[str, Any]:
    """The per-team policy shape of components/queue_admission.py: team strings in CEL expressions."""
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": f"gpu-batch-queue-{team}", "labels": {"gpu-batch/team": team}},
        "spec": {
            "failurePolicy": "Fail",
            "matchConstraints": {
                "resourceRules": [
                    {
                        "apiGroups": ["batch"],
                        "apiVersions": ["*"],
                        "resources": ["jobs"],
                        "operations": ["CREATE"],
                    }
                ]
            },
            "validations": [
                {
                    "expression": f"object.metadata.labels['kueue.x-k8s.io/queue-name'] in ['{team}-lq']",
                    "message": f"{team} submits to {team}-lq",
                }
            ],
        },
    }


def test_strings_the_schema_cannot_refuse_share_one_check(monkeypatch: pytest.MonkeyPatch) -> None:
    # A thousand teams' policies differ in names, labels and CEL expressions, all plain strings in
    # the schema: one check serves them all, each result keeps its own identity.
    checks: list[str] = []
    real_check = core._check

    def counted(validator: Any, obj: dict[str, Any]) -> Any:
        checks.append(obj["metadata"]["name"])
        return real_check(validator, obj)

    monkeypatch.setattr(core, "_check", counted)
    core._memo.cache_clear()
    results = [
        CoreValidator("1.33").validate(validating_admission_policy(t)) for t in ("t0000", "t0001", "t0002")
    ]
    assert all(r.ok for r in results) and [r.name for r in results] == [
        "gpu-batch-queue-t0000",
        "gpu-batch-queue-t0001",
        "gpu-batch-queue-t0002",
    ]
    assert checks == ["gpu-batch-queue-t0000"]
    # A number where the schema wants a string is part of the key: checked, and refused.
    odd = validating_admission_policy("t0003")
    odd["spec"]["validations"][0]["message"] = 3
    assert paths(CoreValidator("1.33").validate(odd)) == ["spec.validations[0].message"]
    assert checks == ["gpu-batch-queue-t0000", "gpu-batch-queue-t0003"]


def test_only_a_string_the_schema_says_nothing_else_about_is_stood_in() -> None:
    # core._memo_key's rule on a schema with every constraint a string can meet or fail.
    schema = {
        "type": "object",
        "properties": {
            "plain": {"type": ["string", "null"], "description": "d", "format": "f", "x-kubernetes-x": 1},
            "enum": {"type": "string", "enum": ["A", "B"]},
            "pattern": {"type": "string", "pattern": "^a"},
            "longest": {"type": "string", "maxLength": 3},
            "either": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
            "number": {"type": "integer"},
            "meta": {"$ref": "_definitions.json#/$defs/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"},
            "list": {"type": "array", "items": {"type": "string"}},
            "unique": {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
            "map": {"type": "object", "additionalProperties": {"type": "string"}},
            "sized": {"type": "object", "additionalProperties": {"type": "string"}, "maxProperties": 1},
        },
    }
    obj = {
        "plain": "p",
        "enum": "A",
        "pattern": "ab",
        "longest": "abc",
        "either": "http",
        "number": "7",
        "meta": {"name": "n", "labels": {"k": "v"}},
        "list": ["x", "y"],
        "unique": ["x", "y"],
        "map": {"k": "v"},
        "sized": {"k": "v"},
        "undeclared": "u",
    }
    unknown = UNKNOWN_DISPLAY
    assert json.loads(core._memo_key("1.33", schema, {**obj, "plain": unknown})) == {
        **obj,
        "plain": unknown,  # a marker is kept: it is counted, not checked
        "meta": {"name": "name", "labels": {"k": "name"}},
        "list": ["name", "name"],
        "map": {"k": "name"},
    }
    assert json.loads(core._memo_key("1.33", schema, obj))["plain"] == "name"


def test_a_kind_the_schema_lacks_is_not_validated_and_manifests_say_so() -> None:
    obj = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}}
    assert VALIDATOR.validate(obj).outcome is Outcome.NO_SCHEMA
    (error,) = validate_manifests([obj])
    assert error.startswith("Widget/w: not validated: no example.com/v1 Widget in the Kubernetes")


@pytest.mark.parametrize(
    ("api_version", "kind"),
    [("v1", "../../_definitions"), ("../v1", "Service"), ("apps/v1", "deployment-apps")],
)
def test_odd_identities_name_no_schema_file(api_version: str, kind: str) -> None:
    obj = {"apiVersion": api_version, "kind": kind, "metadata": {"name": "x"}}
    assert VALIDATOR.validate(obj).outcome is Outcome.NO_SCHEMA


def test_validate_manifests_routes_built_in_objects_to_the_kubernetes_schema() -> None:
    bad = deployment()
    bad["spec"]["template"]["spec"]["nodeSelectr"] = {"pool": "gpu"}
    assert validate_manifests([bad, role()], kubernetes=kubernetes_minor("1.33")) == [
        "Deployment/team-a/api: spec.template.spec.nodeSelectr: field not declared in the Kubernetes schema"
    ]


def test_a_field_added_in_a_later_minor_is_unknown_to_an_older_one() -> None:
    # Pod-level `resources` entered the API in 1.32 (PodLevelResources, KEP-2837); 1.31 lacks it.
    obj = deployment()
    obj["spec"]["template"]["spec"]["resources"] = {"requests": {"cpu": "1"}}
    newest = CoreValidator(GKE_NEWEST_MINOR).validate(obj)
    assert newest.ok, newest.messages()
    older = CoreValidator("1.31").validate(copy.deepcopy(obj))
    assert paths(older) == ["spec.template.spec.resources"]


@pytest.mark.parametrize(
    ("pinned", "minor", "source"),
    [
        ("1.33", "1.33", "the cluster's minMasterVersion 1.33"),
        ("1.33.5-gke.1080000", "1.33", "the cluster's minMasterVersion 1.33.5-gke.1080000"),
        (None, GKE_NEWEST_MINOR, "no minMasterVersion: the newest minor GKE serves"),
        ("latest", GKE_NEWEST_MINOR, "names no minor"),
        (UNKNOWN_DISPLAY, GKE_NEWEST_MINOR, "minMasterVersion unknown until deploy"),
        ("1.99", shipped_minors()[-1], "ships no 1.99 schema"),
        ("1.20", shipped_minors()[0], "ships no 1.20 schema"),
    ],
)
def test_kubernetes_minor_comes_from_the_stack(pinned: str | None, minor: str, source: str) -> None:
    chosen = kubernetes_minor(pinned)
    assert chosen.minor == minor and source in chosen.source


# --------------------------------------------------------------------------------------------
# What the pinned charts render


CHARTS = [
    ("kueue-0.19.2", "kueue-system"),
    ("kai-scheduler-v0.17.0", "kai-scheduler"),
    ("kuberay-operator-1.7.0", "kuberay-system"),
    ("skypilot-0.13.0", "skypilot"),
]


def rendered_documents(chart: str, namespace: str) -> list[dict[str, Any]]:
    helm_python = pytest.importorskip("helm_python")
    rendered = helm_python.Chart.load(str(VENDOR / chart)).render({}, name="release", namespace=namespace)
    return [
        doc
        for path, text in rendered.items()
        if path.endswith((".yaml", ".yml"))
        for doc in yaml.safe_load_all(text)
        if isinstance(doc, dict)
    ]


@pytest.mark.skipif(not VENDOR.is_dir(), reason="needs ../shared/vendor")
@pytest.mark.parametrize(("chart", "namespace"), CHARTS)
def test_every_built_in_object_a_pinned_chart_renders_validates(chart: str, namespace: str) -> None:
    checked = 0
    for doc in rendered_documents(chart, namespace):
        result = VALIDATOR.validate(doc)
        if result.outcome is Outcome.NO_SCHEMA:
            continue  # a custom resource: crd_validation's job
        assert result.outcome is Outcome.VALID, (result.ref, result.messages())
        checked += 1
    assert checked >= 10, f"{chart}: only {checked} built-in objects rendered"


def _replaced(original: Any, shaped: Any, new: str) -> Any:
    """``original`` with ``new`` in every place its memo key stood a string in for."""
    if isinstance(original, str):
        return new if shaped == "name" else original
    if isinstance(original, dict) and isinstance(shaped, dict):
        return {k: _replaced(v, shaped[k], new) for k, v in original.items()}
    if isinstance(original, list) and isinstance(shaped, list):
        return [_replaced(v, s, new) for v, s in zip(original, shaped, strict=True)]
    return original


@pytest.mark.skipif(not VENDOR.is_dir(), reason="needs ../shared/vendor")
@pytest.mark.parametrize(("chart", "namespace"), CHARTS)
def test_any_string_where_the_memo_key_stands_one_in_gets_the_same_verdict(
    chart: str, namespace: str
) -> None:
    # The memo's premise, against the real validator on real objects: whatever string fills the
    # places the key stands in for, the schema's verdict is the one the object got.
    for doc in rendered_documents(chart, namespace):
        validator = core._validator(VALIDATOR.minor.minor, doc["apiVersion"], doc["kind"])
        if validator is None:
            continue
        shaped = json.loads(core._memo_key(VALIDATOR.minor.minor, validator.schema, doc))
        verdict = core._check(validator, doc)
        for new in ("", "0", "not a DNS name, with spaces", "x" * 300, "Always"):
            assert core._check(validator, _replaced(doc, shaped, new)) == verdict, (doc["kind"], new)
