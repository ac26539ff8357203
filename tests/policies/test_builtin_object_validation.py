"""``builtin-object-schema`` judges a built-in object's name and its enumerated fields as the API
server's validation of its kind does (``facts.schema.object_names``, ``facts.schema.builtin_enums``;
kubernetes v1.37.2 ``pkg/apis/*/validation``); ``pod-template-api-validation`` the pod template's
(``facts.schema.pod_spec``).

Found by the pack-vs-server differential (issue 41): a Service named ``Not_A_DNS_Name-22``, a
ConfigMap, Namespace, PriorityClass or Job of 254 characters passed the pack and were refused by
kube-apiserver v1.37.2 with ``metadata.name: Invalid value``.  Each kind keeps its own grammar:
an RBAC name needs only to be a path segment, a CRD is named after its plural and group.  Likewise
a Job's ``completionMode``, a Service or NetworkPolicy port's ``protocol``, a webhook's
``failurePolicy`` or ``sideEffects``, a container's ``imagePullPolicy`` and a pod's ``dnsPolicy``
set to a value the server does not support: ``Unsupported value``.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.policies.corpus import token
from tests.policies.pack_harness import Res, policy, run

RULE = policy("builtin-object-schema")


def _object(api_version: str, kind: str, name: str, **body: Any) -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": kind, "metadata": {"name": name}, **body}


def _messages(doc: dict[str, Any]) -> list[str]:
    return run(RULE, [Res(token(doc), "object", doc)]).messages


SERVICE = {"spec": {"ports": [{"port": 80}]}}
JOB = {
    "spec": {
        "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox"}]}}
    }
}
CRD_SPEC = {
    "spec": {
        "group": "example.com",
        "scope": "Namespaced",
        "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
                },
            }
        ],
    }
}


@pytest.mark.parametrize(
    ("api_version", "kind", "name", "body", "words"),
    [
        ("v1", "Service", "Not_A_DNS_Name-22", SERVICE, "RFC 1123 label"),
        ("v1", "Service", "web.internal", SERVICE, "RFC 1123 label"),  # a label: no dot
        ("v1", "Namespace", "team.a", {}, "RFC 1123 label"),
        ("v1", "ConfigMap", "c" * 254, {}, "no more than 253"),
        ("scheduling.k8s.io/v1", "PriorityClass", "High", {"value": 10}, "RFC 1123 subdomain"),
        ("batch/v1", "Job", "j" * 64, JOB, "more than 63"),
        (
            "apiextensions.k8s.io/v1",
            "CustomResourceDefinition",
            "widgets.other.com",
            CRD_SPEC,
            "widgets.example.com",
        ),
        ("rbac.authorization.k8s.io/v1", "Role", "a/b", {"rules": []}, "may not contain '/'"),
    ],
)
def test_a_name_the_api_server_refuses_is_a_violation(
    api_version: str, kind: str, name: str, body: dict[str, Any], words: str
) -> None:
    found = _messages(_object(api_version, kind, name, **body))
    assert any("metadata.name" in m and words in m for m in found), found


@pytest.mark.parametrize(
    ("api_version", "kind", "name", "body"),
    [
        ("v1", "Service", "web", SERVICE),
        ("v1", "ConfigMap", "settings.v2", {}),  # a subdomain may have dots
        ("batch/v1", "Job", "j" * 63, JOB),
        ("rbac.authorization.k8s.io/v1", "ClusterRole", "system:Aggregate_To_Edit", {"rules": []}),
        ("apiextensions.k8s.io/v1", "CustomResourceDefinition", "widgets.example.com", CRD_SPEC),
    ],
)
def test_a_name_the_api_server_accepts_passes(
    api_version: str, kind: str, name: str, body: dict[str, Any]
) -> None:
    assert not [m for m in _messages(_object(api_version, kind, name, **body)) if "metadata.name" in m]


def test_a_job_with_its_own_selector_may_have_a_longer_name() -> None:
    """``manualSelector``: the API server adds no job-name label to its pods (``generateSelector``)."""
    body = {"spec": {**JOB["spec"], "manualSelector": True}}
    assert not [m for m in _messages(_object("batch/v1", "Job", "j" * 64, **body)) if "metadata.name" in m]


def test_a_generate_name_prefix_may_end_with_a_dash() -> None:
    doc: dict[str, Any] = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "run-"}}
    assert _messages(doc) == []
    doc["metadata"]["generateName"] = "Run_"
    assert any("generateName" in m for m in _messages(doc))


def _enum_messages(doc: dict[str, Any], rule: str = "builtin-object-schema") -> list[str]:
    return [
        m for m in run(policy(rule), [Res(token(doc), "object", doc)]).messages if "Unsupported value" in m
    ]


WEBHOOK = {
    "name": "v.example.com",
    "clientConfig": {"url": "https://example.com/validate"},
    "admissionReviewVersions": ["v1"],
    "sideEffects": "None",
    "failurePolicy": "Fail",
    "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"]}],
}


@pytest.mark.parametrize(
    ("api_version", "kind", "body", "path", "value"),
    [
        (
            "batch/v1",
            "Job",
            {**JOB, "spec": {**JOB["spec"], "completionMode": "Indexd"}},
            "spec.completionMode",
            "Indexd",
        ),
        (
            "v1",
            "Service",
            {"spec": {"ports": [{"port": 80, "protocol": "tcp"}]}},
            "spec.ports[0].protocol",
            "tcp",
        ),
        ("v1", "Service", {"spec": {"ports": [{"port": 80}], "type": "Internal"}}, "spec.type", "Internal"),
        (
            "networking.k8s.io/v1",
            "NetworkPolicy",
            {"spec": {"podSelector": {}, "ingress": [{"ports": [{"port": 53, "protocol": "DNS"}]}]}},
            "spec.ingress[0].ports[0].protocol",
            "DNS",
        ),
        (
            "admissionregistration.k8s.io/v1",
            "ValidatingWebhookConfiguration",
            {"webhooks": [{**WEBHOOK, "failurePolicy": "fail"}]},
            "webhooks[0].failurePolicy",
            "fail",
        ),
        (
            "admissionregistration.k8s.io/v1",
            "MutatingWebhookConfiguration",
            {"webhooks": [{**WEBHOOK, "sideEffects": "Some"}]},
            "webhooks[0].sideEffects",
            "Some",
        ),
        (
            "admissionregistration.k8s.io/v1",
            "ValidatingAdmissionPolicy",
            {"spec": {"failurePolicy": "Never", "validations": [{"expression": "true"}]}},
            "spec.failurePolicy",
            "Never",
        ),
    ],
)
def test_an_enumerated_field_out_of_its_values_is_a_violation(
    api_version: str, kind: str, body: dict[str, Any], path: str, value: str
) -> None:
    found = _enum_messages(_object(api_version, kind, "object", **body))
    assert [m for m in found if f'{path}: Unsupported value: "{value}"' in m], found
    # the same object with the field as upstream's examples write it passes
    assert _enum_messages(_object(api_version, kind, "object", **_fixed(body, value))) == []


def _fixed(body: Any, wrong: str) -> Any:
    """``body`` with ``wrong`` replaced by a supported value of its field."""
    good = {"Indexd": "Indexed", "tcp": "TCP", "Internal": "ClusterIP", "DNS": "UDP", "fail": "Fail"}
    good |= {"Some": "None", "Never": "Ignore"}
    if isinstance(body, dict):
        return {k: _fixed(v, wrong) for k, v in body.items()}
    if isinstance(body, list):
        return [_fixed(v, wrong) for v in body]
    return good[wrong] if body == wrong else body


@pytest.mark.parametrize(
    ("field", "value", "where"),
    [
        ("imagePullPolicy", "Sometimes", "containers[0].imagePullPolicy"),
        ("terminationMessagePolicy", "Stdout", "containers[0].terminationMessagePolicy"),
        ("dnsPolicy", "ClusterFirstly", "spec.dnsPolicy"),
        ("preemptionPolicy", "Always", "spec.preemptionPolicy"),
    ],
)
def test_a_pod_templates_enumerated_field_out_of_its_values_is_a_violation(
    field: str, value: str, where: str
) -> None:
    template: dict[str, Any] = {
        "spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox"}]}
    }
    if where.startswith("containers"):
        template["spec"]["containers"][0][field] = value
    else:
        template["spec"][field] = value
    doc = _object("batch/v1", "Job", "object", spec={"template": template})
    found = _enum_messages(doc, "pod-template-api-validation")
    assert len(found) == 1 and where in found[0] and value in found[0], found


def _crd_with_item_schema(item: Any) -> dict[str, Any]:
    doc = copy.deepcopy(
        _object("apiextensions.k8s.io/v1", "CustomResourceDefinition", "widgets.example.com", **CRD_SPEC)
    )
    doc["spec"]["versions"][0]["schema"]["openAPIV3Schema"] = {
        "type": "object",
        "properties": {
            "spec": {"type": "object", "properties": {"levels": {"type": "array", "items": item}}}
        },
    }
    return doc


@pytest.mark.parametrize(
    ("item", "where", "words"),
    [
        (
            {"type": "object", "properties": {"nodeLabel": {"type": "string", "maxLength": "316"}}},
            "levels.items.properties.nodeLabel.maxLength",
            'expected integer, got string "316"',
        ),
        ({"type": {"wrong": "type"}}, "levels.items.type", "expected string"),
        ("string", "levels.items", "expected a schema object or a list of them"),
        (
            {
                "type": "object",
                "additionalProperties": {"type": "string", "x-kubernetes-preserve-unknown-fields": "yes"},
            },
            'levels.items.additionalProperties["x-kubernetes-preserve-unknown-fields"]',
            "expected boolean",
        ),
    ],
)
def test_a_crd_schema_below_items_is_typed_as_the_api_server_decodes_it(
    item: Any, where: str, words: str
) -> None:
    """``items`` and ``additionalProperties`` are untyped in the OpenAPI schema; the server decodes
    them as JSONSchemaProps (apiextensions-apiserver v0.37.2 ``JSONSchemaPropsOrArray.UnmarshalJSON``)."""
    found = _messages(_crd_with_item_schema(item))
    assert [m for m in found if where in m and words in m], found


def test_a_well_typed_crd_schema_below_items_passes() -> None:
    item = {
        "type": "object",
        "required": ["name"],
        "properties": {"name": {"type": "string", "maxLength": 63}},
    }
    assert _messages(_crd_with_item_schema(item)) == []
    assert _messages(_crd_with_item_schema([item, {"type": "integer"}])) == []
