"""Pod Security of tenant namespaces and of the pod templates in them (issue 27 item 1).

Upstream: kubernetes/pod-security-admission v0.36.2 ``policy/check_*.go`` (one check per file,
each with its ``MinimumVersion`` steps), ``policy/registry.go`` ``EvaluatePod`` (restricted runs
baseline too, minus ``OverrideCheckIDs``), ``api/helpers.go`` ``PolicyToEvaluate`` /
``ParseLevel`` (an invalid level evaluates as restricted) / ``ParseVersion``.
"""

from __future__ import annotations

from typing import Any

import pytest
from gpu_batch_policy.facts.pod_security import enforce_policy
from gpu_batch_policy.facts.pod_security.checks import CHECKS, UPSTREAM_CHECK_IDS, evaluate

from tests.policies.pack_harness import Res, run
from tests.policies.pack_harness import policy as get_policy
from tests.policies.pack_objects import gke_cluster, k8s, local_queue, namespace, patch, ray_job

NAMESPACES = get_policy("namespace-pod-security")
WORKLOADS = get_policy("workload-pod-security")
ENFORCE = "pod-security.kubernetes.io/enforce"

RESTRICTED_CONTAINER: dict[str, Any] = {
    "name": "c",
    "securityContext": {
        "allowPrivilegeEscalation": False,
        "capabilities": {"drop": ["ALL"]},
        "runAsNonRoot": True,
        "seccompProfile": {"type": "RuntimeDefault"},
    },
}


def spec(**top: Any) -> dict[str, Any]:
    return {"containers": [{"name": "c"}], **top}


class TestChecks:
    def test_every_upstream_check_has_a_port(self) -> None:
        assert {c.id for c in CHECKS} == UPSTREAM_CHECK_IDS

    @pytest.mark.parametrize(
        "bad",
        [
            spec(hostNetwork=True),
            spec(hostPID=True),
            spec(containers=[{"name": "c", "securityContext": {"privileged": True}}]),
            spec(volumes=[{"name": "root", "hostPath": {"path": "/"}}]),
            spec(containers=[{"name": "c", "ports": [{"containerPort": 80, "hostPort": 80}]}]),
            spec(containers=[{"name": "c", "securityContext": {"capabilities": {"add": ["SYS_ADMIN"]}}}]),
            spec(securityContext={"sysctls": [{"name": "kernel.msgmax", "value": "1"}]}),
            spec(securityContext={"seccompProfile": {"type": "Unconfined"}}),
            spec(initContainers=[{"name": "i", "securityContext": {"privileged": True}}]),
        ],
    )
    def test_baseline_refuses_what_upstream_refuses(self, bad: dict[str, Any]) -> None:
        assert evaluate("baseline", (1, 37), {}, bad)
        assert evaluate("restricted", (1, 37), {}, bad)
        assert evaluate("privileged", (1, 37), {}, bad) == []

    def test_a_plain_pod_is_baseline_but_not_restricted(self) -> None:
        assert evaluate("baseline", (1, 37), {}, spec()) == []
        reasons = evaluate("restricted", (1, 37), {}, spec())
        assert {r.split(":")[0] for r in reasons} == {
            "allowPrivilegeEscalation != false",
            "unrestricted capabilities",
            "runAsNonRoot != true",
            "seccompProfile",
        }
        assert evaluate("restricted", (1, 37), {}, spec(containers=[RESTRICTED_CONTAINER])) == []

    def test_restricted_overrides_the_baseline_check_it_replaces(self) -> None:
        # restrictedVolumes overrides hostPathVolumes: one reason, not two.
        bad = {
            **spec(containers=[RESTRICTED_CONTAINER]),
            "volumes": [{"name": "r", "hostPath": {"path": "/"}}],
        }
        assert len(evaluate("restricted", (1, 37), {}, bad)) == 1
        assert evaluate("restricted", (1, 37), {}, {**bad, "volumes": [{"name": "d", "emptyDir": {}}]}) == []

    def test_versions_step_as_upstream(self) -> None:
        # net.ipv4.tcp_rmem is safe from 1.32 (check_sysctls.go sysctlsAllowedV1Dot32).
        rmem = spec(securityContext={"sysctls": [{"name": "net.ipv4.tcp_rmem", "value": "1"}]})
        assert evaluate("baseline", (1, 31), {}, rmem) and not evaluate("baseline", (1, 32), {}, rmem)
        # Probe hosts are judged from 1.34 (check_hostProbesAndhostLifecycle.go).
        probe = spec(
            containers=[{"name": "c", "livenessProbe": {"httpGet": {"host": "10.0.0.1", "port": 80}}}]
        )
        assert not evaluate("baseline", (1, 33), {}, probe) and evaluate("baseline", (1, 34), {}, probe)
        # A user-namespace pod may run as root from 1.35 (runAsNonRoot1_35).
        userns = {
            **spec(
                containers=[
                    {
                        **RESTRICTED_CONTAINER,
                        "securityContext": {**RESTRICTED_CONTAINER["securityContext"], "runAsNonRoot": False},
                    }
                ]
            ),
            "hostUsers": False,
        }
        assert evaluate("restricted", (1, 34), {}, userns) and not evaluate("restricted", (1, 35), {}, userns)

    def test_labels_evaluate_as_the_api_server_does(self) -> None:
        assert enforce_policy({}, (1, 33)).level == "privileged"
        assert enforce_policy({ENFORCE: "baseline"}, (1, 33)).minor == (1, 33)
        assert enforce_policy({ENFORCE: "Baseline"}, (1, 33)).level == "restricted"  # ParseLevel error
        pinned = enforce_policy({ENFORCE: "baseline", f"{ENFORCE}-version": "v1.29"}, (1, 33))
        assert pinned.minor == (1, 29)
        assert enforce_policy({ENFORCE: "baseline", f"{ENFORCE}-version": "v1.40"}, (1, 33)).minor == (1, 33)


def privileged_job(ns: str = "team-a") -> Res:
    return patch(ray_job(namespace=ns), "spec.rayClusterSpec.headGroupSpec.template.spec.hostNetwork", True)


class TestRules:
    def test_a_tenant_namespace_without_a_level_is_flagged(self) -> None:
        result = run(NAMESPACES, [namespace("team-a"), local_queue()])
        assert len(result.violations) == 1 and "has no enforce label" in result.messages[0]
        assert run(NAMESPACES, [namespace("team-a", **{ENFORCE: "baseline"}), local_queue()]).clean
        assert NAMESPACES.enforcement_level is not None and NAMESPACES.enforcement_level.value == "advisory"

    def test_an_undeclared_namespace_is_not_judged(self) -> None:
        # Its labels live elsewhere (open world): no finding, and no "cannot check" noise.
        result = run(NAMESPACES, [local_queue()])
        assert result.clean and result.cannot_check is None

    def test_a_patched_namespace_counts(self) -> None:
        ns_patch = k8s("v1", "NamespacePatch", "team-a", labels={ENFORCE: "restricted"})
        assert run(NAMESPACES, [ns_patch, local_queue()]).clean

    def test_a_privileged_pod_in_a_baseline_namespace_is_refused(self) -> None:
        ns = namespace("team-a", **{ENFORCE: "baseline"})
        result = run(WORKLOADS, [ns, privileged_job()])
        assert len(result.violations) == 1 and "hostNetwork=true" in result.messages[0]
        assert "baseline:v1.37" in result.messages[0]
        assert run(WORKLOADS, [ns, ray_job()]).clean
        # The same pod where nothing is enforced: PodSecurity admits it (the namespace rule speaks).
        assert run(WORKLOADS, [namespace("team-a"), privileged_job()]).clean

    def test_the_cluster_minor_decides(self) -> None:
        ns = namespace("team-a", **{ENFORCE: "baseline"})
        job = patch(
            ray_job(),
            "spec.rayClusterSpec.headGroupSpec.template.spec.securityContext",
            {"sysctls": [{"name": "net.ipv4.tcp_rmem", "value": "4096"}]},
        )
        assert len(run(WORKLOADS, [gke_cluster(minMasterVersion="1.31"), ns, job]).violations) == 1
        assert run(WORKLOADS, [gke_cluster(minMasterVersion="1.33"), ns, job]).clean
