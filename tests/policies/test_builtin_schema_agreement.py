"""``pulumi preview --policy-pack`` and ``make preview`` report the same invalid built-in objects.

One validator (``gpu_batch_policy.facts.schema.core``): the pack's ``builtin-object-schema`` rule, run
here as its own process over the analyzer gRPC protocol (``preview.analyzer``, as the engine runs
it), and the offline preview's ``preview.manifests.validate_manifests`` judge the same test stack
of built-in objects, some invalid: the same objects and the same violations come out of both.
"""

from __future__ import annotations

import copy
from typing import Any

from gpu_batch_policy.facts.schema.core import GKE_NEWEST_MINOR, kubernetes_minor

from preview.analyzer import PolicyPackProcess
from preview.manifests import validate_manifests
from preview.records import RecordedResource
from tests.policies.corpus import STACK_URN, token
from tests.policies.test_corpus_e2e import POLICIES_DIR

CONTAINER = {"name": "app", "image": "busybox:1.36"}
DEPLOYMENT: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "good", "namespace": "ml"},
    "spec": {
        "replicas": 1,
        "selector": {"matchLabels": {"app": "a"}},
        "template": {"metadata": {"labels": {"app": "a"}}, "spec": {"containers": [CONTAINER]}},
    },
}


def _variant(name: str, change: Any) -> dict[str, Any]:
    doc = copy.deepcopy(DEPLOYMENT)
    doc["metadata"]["name"] = name
    change(doc)
    return doc


OBJECTS: list[dict[str, Any]] = [
    DEPLOYMENT,
    _variant("misspelt", lambda d: d["spec"].update(replica=2)),  # field not declared
    _variant("wrong-type", lambda d: d["spec"].update(replicas="two")),
    _variant("no-selector", lambda d: d["spec"].pop("selector")),  # required field missing
    {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "svc", "namespace": "ml"},
        "spec": {"ports": [{"port": "http", "protocol": "TCP"}], "type": "ClusterIP"},
    },
    {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": {"name": "reader", "namespace": "ml"},
        "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": "get"}],
    },
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ml"}},
]


def records(objects: list[dict[str, Any]]) -> list[RecordedResource]:
    stack = RecordedResource(STACK_URN, "pulumi:pulumi:Stack", "gpu-batch-corpus", "", "", False, {}, {})
    out = [stack]
    for doc in objects:
        name = f"{doc['kind'].lower()}-{doc['metadata']['name']}"
        urn = f"urn:pulumi:corpus::gpu-batch::{token(doc)}::{name}"
        out.append(RecordedResource(urn, token(doc), name, STACK_URN, "", True, doc, doc))
    return out


def test_pack_and_preview_report_the_same_invalid_built_in_objects() -> None:
    preview_lines = validate_manifests(OBJECTS, kubernetes=kubernetes_minor(None))
    with PolicyPackProcess(POLICIES_DIR, stack="agreement") as process:
        process.configure()
        diagnostics = [
            d for d in process.analyze(records(OBJECTS)) if d.policy_name == "builtin-object-schema"
        ]
    assert diagnostics and all(d.mandatory for d in diagnostics)
    # Preview: "Kind/ns/name: path: message"; pack: "... would reject it (kubernetes 1.37 ...): path: message".
    preview_found = {
        (line.split(": ", 1)[0].rsplit("/", 1)[1], line.split(": ", 1)[1]) for line in preview_lines
    }
    pack_found = set()
    for d in diagnostics:
        name = d.message.split("'")[1].rsplit("/", 1)[-1]
        pack_found.add((name, d.message.split("): ", 1)[1].split(". Fix:")[0]))
    assert pack_found == preview_found
    assert {name for name, _ in pack_found} == {"misspelt", "wrong-type", "no-selector", "svc", "reader"}
    assert GKE_NEWEST_MINOR in diagnostics[0].message


def test_an_object_sent_without_properties_is_not_judged() -> None:
    """The offline preview's mocks send a CRD's planned state empty (``preview.mocks.UNECHOED_TYPES``):
    the preview validates its inputs instead: never a missing-field violation."""
    from gpu_batch_policy.rules.api_server.builtin_objects import POLICIES

    from tests.policies.workload_stack import registration, run

    empty = registration("kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition", "crd", {})
    outcome = run(POLICIES[0], [empty])
    assert outcome.violations == [] and outcome.cannot_check is None
    bad = registration(
        "kubernetes:core/v1:Service", "svc", {"metadata": {"name": "svc"}, "spec": {"ports": "80"}}
    )
    assert run(POLICIES[0], [bad]).mentions("spec.ports: expected array")
