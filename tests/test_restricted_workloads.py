"""Issue 27 item 4: a team at Pod Security ``restricted`` whose workloads still run.

The kai stack's team-a enforces ``restricted``.  The templates' Ray containers carry the context
that level demands (``components.workloads.RESTRICTED_SECURITY_CONTEXT``), and a RayJob's
submitter pod, which KubeRay v1.7.0 creates without one (``common/job.go``
``GetDefaultSubmitterContainer``), gets a ``submitterPodTemplate`` with it.  The pack's
``workload-pod-security`` (the upstream pod-security-admission checks) decides, over the rendered
objects: the shipped stacks pass, and dropping either piece is caught.
"""

from __future__ import annotations

from typing import Any

import pytest
from gpu_batch_policy.rules.tenancy import pod_security

from components.workloads import RESTRICTED_SECURITY_CONTEXT
from tests.stack_runner import config_value, custom_objects, run_stack, unedited_run
from tests.test_tenancy_findings import Item, findings, items, model

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
RULE = "workload-pod-security"
ENFORCE = "pod-security.kubernetes.io/enforce"


def ray_containers(spec: dict[str, Any]) -> list[dict[str, Any]]:
    groups = [spec["headGroupSpec"], *spec.get("workerGroupSpecs", [])]
    return [c for g in groups for c in g["template"]["spec"]["containers"]]


def restricted_prod() -> dict[str, Any]:
    """prod with team applied at restricted and the text-classifier RayJob in it."""
    teams = config_value("prod", "gpu-batch:teams")
    (applied,) = [t for t in teams if t["name"] == "applied"]
    applied["podSecurity"] = "restricted"
    workloads = [
        {"name": "trainer", "template": "pytorch-text-classifier", "team": "applied", "scheduler": "kueue"}
    ]
    return {"gpu-batch:teams": teams, "gpu-batch:workloads": workloads}


def edited(declared: list[Item], kind: str, edit: Any) -> list[Item]:
    out: list[Item] = []
    for type_, given, urn, name in declared:
        props = edit(given) if type_ == f"kubernetes:ray.io/v1:{kind}" else given
        out.append((type_, props, urn, name))
    return out


class TestKaiTeamRestricted:
    def test_team_a_enforces_restricted_and_every_ray_container_complies(self) -> None:
        kai = unedited_run("kai")
        (ns,) = [n for n in custom_objects(kai, "Namespace") if n["metadata"]["name"] == "team-a"]
        assert ns["metadata"]["labels"][ENFORCE] == "restricted"
        clusters = list(custom_objects(kai, "RayCluster"))
        assert len(clusters) == 2
        for cluster in clusters:
            for container in ray_containers(cluster["spec"]):
                assert container["securityContext"] == RESTRICTED_SECURITY_CONTEXT
        assert not findings(pod_security.check_workloads, model(items("kai")), "kai", RULE)

    def test_a_container_without_the_context_is_refused(self) -> None:
        def strip(props: dict[str, Any]) -> dict[str, Any]:
            spec = props["spec"]
            head = spec["headGroupSpec"]["template"]["spec"]["containers"][0]
            head.pop("securityContext")
            return props

        found = findings(
            pod_security.check_workloads, model(edited(items("kai"), "RayCluster", strip)), "kai", RULE
        )
        assert found and all("restricted" in f for f in found)
        assert any("allowPrivilegeEscalation" in f for f in found)


class TestRayJobSubmitter:
    def test_a_restricted_team_s_rayjob_gets_a_compliant_submitter(self) -> None:
        result = run_stack("prod", restricted_prod())
        (job,) = custom_objects(result, "RayJob")
        (submitter,) = job["spec"]["submitterPodTemplate"]["spec"]["containers"]
        head = job["spec"]["rayClusterSpec"]["headGroupSpec"]["template"]["spec"]["containers"][0]
        assert submitter["name"] == "ray-job-submitter" and submitter["image"] == head["image"]
        assert submitter["securityContext"] == RESTRICTED_SECURITY_CONTEXT
        declared = items("prod", restricted_prod())
        assert not findings(pod_security.check_workloads, model(declared), "prod", RULE)

    def test_kuberay_s_default_submitter_is_caught_under_restricted(self) -> None:
        def default_submitter(props: dict[str, Any]) -> dict[str, Any]:
            props["spec"].pop("submitterPodTemplate")
            return props

        declared = edited(items("prod", restricted_prod()), "RayJob", default_submitter)
        (found,) = findings(pod_security.check_workloads, model(declared), "prod", RULE)
        assert "pod template submitter (KubeRay's default)" in found and "restricted" in found

    def test_a_baseline_team_keeps_kuberay_s_default_submitter(self) -> None:
        (job, _) = custom_objects(unedited_run("dev"), "RayJob")
        assert "submitterPodTemplate" not in job["spec"]
        head = job["spec"]["rayClusterSpec"]["headGroupSpec"]["template"]["spec"]["containers"][0]
        assert "securityContext" not in head


def test_sidecar_mode_under_restricted_is_caught() -> None:
    """KubeRay v1.7.0 appends its default submitter container, without a securityContext, to the
    head pod in SidecarMode (rayjob_controller.go ``getSubmitterContainer``): restricted refuses
    the head, whatever the Ray container carries."""
    edits = restricted_prod()
    edits["gpu-batch:workloads"][0]["submissionMode"] = "SidecarMode"
    (found,) = findings(pod_security.check_workloads, model(items("prod", edits)), "prod", RULE)
    assert "head with KubeRay's submitter sidecar" in found and "restricted" in found
    # The same job at baseline passes: the sidecar breaks nothing baseline forbids.
    teams = edits["gpu-batch:teams"]
    (applied,) = [t for t in teams if t["name"] == "applied"]
    applied["podSecurity"] = "baseline"
    assert not findings(pod_security.check_workloads, model(items("prod", edits)), "prod", RULE)
