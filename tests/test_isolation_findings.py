"""Issue 27's review findings, put back into today's stacks one at a time: the pack (with the
stack's own policy config) catches each, and the shipped stacks pass the same rules.

Each case starts from the real program's resources (``tests/stack_runner.py``), undoes one fix
by editing the planned resources, and runs the rule that stands for the finding over the pack's
model (declared objects plus every Helm release rendered by the real Helm engine).
"""

from __future__ import annotations

from typing import Any

import pytest
from gpu_batch_policy.rules.kueue import managed_namespaces as kueue_managed_namespaces
from gpu_batch_policy.rules.tenancy import pod_security

from tests.stack_runner import config_value
from tests.test_tenancy_findings import Item, findings, items, level, model

NAMESPACE = "kubernetes:core/v1:Namespace"
NAMESPACE_PATCH = "kubernetes:core/v1:NamespacePatch"
RAY_JOB = "kubernetes:ray.io/v1:RayJob"
PSA = "pod-security.kubernetes.io/"


def strip_pod_security(declared: list[Item]) -> list[Item]:
    for t, props, _, _ in declared:
        if t in (NAMESPACE, NAMESPACE_PATCH):
            labels = props["metadata"].get("labels", {})
            for key in [k for k in labels if k.startswith(PSA)]:
                del labels[key]
    return declared


class TestPodSecurity:
    @pytest.mark.parametrize("stack", ["prod", "kai", "skypilot"])
    def test_a_team_namespace_without_pod_security_is_caught(self, stack: str) -> None:
        # (dev's team namespace is `default`, which exists: a patch without the label leaves
        # whatever labels it has, so the pack cannot tell -- "cannot check yet", no finding.)
        rule = "namespace-pod-security"
        assert not findings(pod_security.check_namespaces, model(items(stack)), stack, rule)
        found = findings(pod_security.check_namespaces, model(strip_pod_security(items(stack))), stack, rule)
        assert found and all("has no enforce label" in f for f in found)

    def test_the_level_is_mandatory_where_tenants_share_the_cluster(self) -> None:
        rule = "namespace-pod-security"
        assert level(rule, "prod") == level(rule, "skypilot") == "mandatory"
        assert level(rule, "dev") == "advisory"

    @pytest.mark.parametrize(
        ("edit", "reason"),
        [
            ({"hostNetwork": True}, "hostNetwork=true"),
            ({"volumes": [{"name": "root", "hostPath": {"path": "/"}}]}, "hostPath volumes"),
            (
                {"containers": [{"name": "x", "image": "x", "securityContext": {"privileged": True}}]},
                "privileged",
            ),
        ],
    )
    def test_a_privileged_pod_in_a_team_namespace_is_refused(self, edit: dict[str, Any], reason: str) -> None:
        """dev's RayJobs run in `default`, labelled baseline by the stack's NamespacePatch."""
        declared = items("dev")
        rule = "workload-pod-security"
        assert not findings(pod_security.check_workloads, model(declared), "dev", rule)
        (job, *_) = [p for t, p, _, _ in declared if t == RAY_JOB]
        head = job["spec"]["rayClusterSpec"]["headGroupSpec"]["template"]["spec"]
        if "containers" in edit:
            head["containers"] = head["containers"] + edit["containers"]
        else:
            head.update(edit)
        found = findings(pod_security.check_workloads, model(declared), "dev", rule)
        assert len(found) == 1 and reason in found[0] and "baseline:v1.33" in found[0]
        assert level(rule, "dev") == "mandatory"


class TestExistingNamespaceBypass:
    def test_strict_tenancy_in_an_existing_namespace_without_the_patch_is_caught(self) -> None:
        teams = config_value("prod", "gpu-batch:teams")
        teams[0]["namespace"] = "default"
        teams[0]["createNamespace"] = False
        declared = items("prod", {"gpu-batch:teams": teams})
        rule = "kueue-localqueue-namespace-managed"
        assert not findings(kueue_managed_namespaces.check, model(declared), "prod", rule)
        # What the stack did before issue 27: no patch, so `default` never got the label.
        without = [i for i in declared if i[0] != NAMESPACE_PATCH]
        found = findings(kueue_managed_namespaces.check, model(without), "prod", rule)
        assert len(found) == 1 and "namespace default is neither created nor patched" in found[0]
        assert level(rule, "prod") == "mandatory"

    @pytest.mark.parametrize("stack", ["dev", "prod", "kai", "skypilot", "gpudirect"])
    def test_the_stacks_are_clean(self, stack: str) -> None:
        m = model(items(stack))
        for check, rule in (
            (kueue_managed_namespaces.check, "kueue-localqueue-namespace-managed"),
            (pod_security.check_workloads, "workload-pod-security"),
        ):
            assert not findings(check, m, stack, rule), (stack, rule)
