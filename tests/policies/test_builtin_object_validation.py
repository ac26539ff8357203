"""``builtin-object-schema`` judges a built-in object's name as the API server's validation of its
kind does (``facts.schema.object_names``; kubernetes v1.37.2 ``pkg/apis/*/validation``).

Found by the pack-vs-server differential (issue 41): a Service named ``Not_A_DNS_Name-22``, a
ConfigMap, Namespace, PriorityClass or Job of 254 characters passed the pack and were refused by
kube-apiserver v1.37.2 with ``metadata.name: Invalid value``.  Each kind keeps its own grammar:
an RBAC name needs only to be a path segment, a CRD is named after its plural and group.
"""

from __future__ import annotations

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
