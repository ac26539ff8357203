"""Network isolation between teams, evaluated over the objects the stacks render (issue 27 #3).

The NetworkPolicies come from the real program (``tests/stack_runner.py``); the pods are the ones
the operators create from the stack's objects: a Ray head carries the labels KubeRay v1.7.0 puts
on it (``ray-operator/controllers/ray/common/pod.go``: ``ray.io/node-type: head``,
``ray.io/cluster``, ``ray.io/is-ray-node``), on top of its template's; the KubeRay operator's pod
is the one its Helm chart renders.  ``tests/netpol_eval.py`` decides each connection.
"""

from __future__ import annotations

from typing import Any

import pytest
from gpu_batch_policy.primitives.values import plain
from gpu_batch_policy.rules.tenancy import network_isolation

from preview.harness import RunResult
from tests.netpol_eval import Cluster, Pod
from tests.policies.pack_harness import policy as get_policy
from tests.policies.pack_harness import run
from tests.policies.pack_objects import gke_cluster, k8s, local_queue, namespace
from tests.stack_runner import config_value, run_stack
from tests.test_tenancy_findings import findings, items, level, model

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

NETPOL = "kubernetes:networking.k8s.io/v1:NetworkPolicy"
RAY_JOB = "kubernetes:ray.io/v1:RayJob"
# KubeRay v1.7.0 default head ports (utils/constant.go: DefaultDashboardPort, DefaultGcsServerPort,
# DefaultClientPort, DefaultServingPort, DefaultMetricsPort).
DASHBOARD, GCS, CLIENT, SERVE, METRICS = 8265, 6379, 10001, 8000, 8080


@pytest.fixture(scope="module")
def prod() -> RunResult:
    """prod with a RayJob per team (the same template dev runs)."""
    workloads = [
        {"name": f"{team}-trainer", "template": "pytorch-text-classifier", "team": team, "scheduler": "kueue"}
        for team in ("research", "applied")
    ]
    return run_stack("prod", {"gpu-batch:workloads": workloads})


def cluster_of(result: RunResult) -> Cluster:
    labels: dict[str, dict[str, str]] = {}
    for r in result.resources:
        if r.type in ("kubernetes:core/v1:Namespace", "kubernetes:core/v1:NamespacePatch"):
            meta = plain(r.inputs)["metadata"]
            labels[meta["name"]] = dict(meta.get("labels") or {})
    return Cluster(labels, [plain(r.inputs) for r in result.resources if r.type == NETPOL])


def ray_head(result: RunResult, namespace: str) -> Pod:
    (job,) = [
        plain(r.inputs)
        for r in result.resources
        if r.type == RAY_JOB and r.inputs["metadata"]["namespace"] == namespace
    ]
    template = job["spec"]["rayClusterSpec"]["headGroupSpec"]["template"]
    labels = {
        **(template.get("metadata", {}).get("labels") or {}),
        "ray.io/node-type": "head",
        "ray.io/cluster": job["metadata"]["name"],
        "ray.io/is-ray-node": "yes",
    }
    # The Ray container's named ports: its template's, plus `metrics` 8080, which KubeRay v1.7.0
    # adds when the template has none (ray-operator/controllers/ray/common/pod.go,
    # utils.MetricsPortName / DefaultMetricsPort).
    container = template["spec"]["containers"][0]
    ports = {p["name"]: p["containerPort"] for p in container.get("ports") or [] if p.get("name")}
    return Pod(namespace, "head", labels, {"metrics": METRICS, **ports})


def operator_pod() -> Pod:
    """The KubeRay operator's pod as its pinned chart renders it (the pack's Helm engine)."""
    m = model(items("prod"))
    (deploy,) = [o for o in m.kube_objects("apps", "Deployment") if o.namespace == "kuberay-system"]
    labels: dict[str, Any] = deploy.props["spec"]["template"]["metadata"]["labels"]
    return Pod("kuberay-system", "kuberay-operator", labels)


class TestReachability:
    def test_a_pod_of_team_a_cannot_reach_team_b_s_ray_head(self, prod: RunResult) -> None:
        net = cluster_of(prod)
        attacker = Pod("research", "notebook", {"app": "anything"})
        head = ray_head(prod, "applied")
        assert not net.allows(attacker, head, DASHBOARD)
        assert not net.allows(attacker, head, GCS)
        # ... whatever labels it forges: the namespace decides, and it cannot be relabelled.
        assert not net.allows(Pod("research", "forged", head.labels), head, DASHBOARD)

    def test_the_team_s_own_pods_and_the_platform_still_can(self, prod: RunResult) -> None:
        net = cluster_of(prod)
        head = ray_head(prod, "applied")
        worker = Pod(
            "applied",
            "worker",
            {"ray.io/node-type": "worker", "ray.io/cluster": head.labels["ray.io/cluster"]},
        )
        submitter = Pod("applied", "submitter", {"job-name": "applied-trainer"})
        assert net.allows(worker, head, GCS) and net.allows(submitter, head, DASHBOARD)
        assert net.allows(operator_pod(), head, DASHBOARD)
        assert net.allows(
            Pod("gmp-system", "collector", {"app.kubernetes.io/name": "collector"}), head, METRICS
        )

    def test_the_platform_reaches_only_the_ports_it_calls(self, prod: RunResult) -> None:
        """KubeRay's operator: the dashboard (job API) and Serve's proxy health, never GCS or the
        client port; GMP: only the metrics port its ClusterPodMonitoring scrapes."""
        net = cluster_of(prod)
        head = ray_head(prod, "applied")
        operator = operator_pod()
        assert [p for p in (DASHBOARD, SERVE, GCS, CLIENT, METRICS) if net.allows(operator, head, p)] == [
            DASHBOARD,
            SERVE,
        ]
        collector = Pod("gmp-system", "collector", {"app.kubernetes.io/name": "collector"})
        assert [p for p in (DASHBOARD, SERVE, GCS, CLIENT, METRICS) if net.allows(collector, head, p)] == [
            METRICS
        ]
        # A metrics port renumbered by the template is still the one scraped (by its name).
        moved = Pod(head.namespace, head.name, head.labels, {**head.named_ports, "metrics": 9090})
        assert net.allows(collector, moved, 9090) and not net.allows(collector, moved, METRICS)

    def test_the_platform_ports_come_from_what_the_platform_calls(self) -> None:
        from components.monitoring import ray_pods_scrape
        from components.tenant_network import KUBERAY_PORTS, PLATFORM_PORTS, platform_rules

        assert set(PLATFORM_PORTS) == {"kuberay-system", "gmp-system"}
        assert PLATFORM_PORTS["gmp-system"] == (ray_pods_scrape().endpoint.port,) == ("metrics",)
        assert KUBERAY_PORTS == (DASHBOARD, "dashboard", SERVE, "serve")
        # A platform namespace without a port list (the SkyPilot ingress) keeps every port.
        (open_rule,) = [r for r in platform_rules(["skypilot-ingress", "gmp-system"]) if "ports" not in r]
        assert open_rule["from"][0]["namespaceSelector"]["matchExpressions"][0]["values"] == [
            "skypilot-ingress"
        ]

    def test_without_the_policies_everything_was_reachable(self, prod: RunResult) -> None:
        """The check above can fail: the same connection with no policies is allowed."""
        bare = Cluster(cluster_of(prod).namespace_labels, [])
        assert bare.allows(Pod("research", "notebook", {}), ray_head(prod, "applied"), DASHBOARD)

    def test_another_namespace_of_no_team_is_denied_too(self, prod: RunResult) -> None:
        net = cluster_of(prod)
        assert not net.allows(Pod("kueue-system", "x", {}), ray_head(prod, "applied"), DASHBOARD)


ENFORCED = get_policy("networkpolicy-enforced")
DEFAULT_DENY = get_policy("namespace-default-deny")


def deny_all(ns: str = "team-a") -> Any:
    return k8s(
        "networking.k8s.io/v1",
        "NetworkPolicy",
        "deny",
        namespace=ns,
        spec={"podSelector": {}, "policyTypes": ["Ingress"]},
    )


class TestRules:
    def test_a_policy_nothing_enforces_is_caught(self) -> None:
        result = run(ENFORCED, [gke_cluster(), deny_all()])
        assert len(result.violations) == 1 and "stored and never applied" in result.messages[0]
        assert run(ENFORCED, [gke_cluster(datapathProvider="ADVANCED_DATAPATH"), deny_all()]).clean
        calico: dict[str, Any] = {
            "networkPolicy": {"enabled": True, "provider": "CALICO"},
            "addonsConfig": {"networkPolicyConfig": {"disabled": False}},
        }
        assert run(ENFORCED, [gke_cluster(**calico), deny_all()]).clean
        assert run(ENFORCED, [deny_all()]).clean  # no GKE cluster in the stack: not judged

    def test_a_tenant_namespace_without_default_deny_is_flagged(self) -> None:
        result = run(DEFAULT_DENY, [namespace("team-a"), local_queue()])
        assert len(result.violations) == 1 and "no NetworkPolicy isolating" in result.messages[0]
        assert run(DEFAULT_DENY, [namespace("team-a"), local_queue(), deny_all()]).clean
        # A policy selecting only some pods leaves the rest open.
        some = k8s(
            "networking.k8s.io/v1",
            "NetworkPolicy",
            "some",
            namespace="team-a",
            spec={"podSelector": {"matchLabels": {"app": "x"}}, "policyTypes": ["Ingress"]},
        )
        assert len(run(DEFAULT_DENY, [namespace("team-a"), local_queue(), some]).violations) == 1

    @pytest.mark.parametrize("stack", ["dev", "prod", "kai", "skypilot", "gpudirect"])
    def test_the_stacks_isolate_every_team_and_turning_dataplane_v2_off_is_caught(self, stack: str) -> None:
        for check, rule in (
            (network_isolation.check_enforced, "networkpolicy-enforced"),
            (network_isolation.check_default_deny, "namespace-default-deny"),
        ):
            assert not findings(check, model(items(stack)), stack, rule), (stack, rule)
        declared = items(stack)
        for t, props, _, _ in declared:
            if t == "gcp:container/cluster:Cluster":
                props.pop("datapathProvider")
        assert findings(network_isolation.check_enforced, model(declared), stack, "networkpolicy-enforced")
        assert level("networkpolicy-enforced", stack) == "mandatory"

    def test_no_dataplane_v2_no_policies(self) -> None:
        cluster = config_value("skypilot", "gpu-batch:cluster")
        cluster["dataplaneV2"] = False
        result = run_stack("skypilot", {"gpu-batch:cluster": cluster})
        assert not [r for r in result.resources if r.type == NETPOL]
