"""Kueue objects Kueue 0.19.2 refuses outright (rules.webhooks.kueue_objects): broken caught, clean passes;
the served-version table agrees with the pinned chart's CRDs (read from ../shared/vendor)."""

from __future__ import annotations

from pathlib import Path

from gpu_batch_policy.rules.webhooks import kueue_objects as rules_kueue_webhook
from gpu_batch_policy.rules.webhooks.kueue_objects import SERVED_KINDS, SERVED_VERSIONS

from tests.policies.workload_stack import cluster_queue, k8s, run

POLICY = {p.name: p for p in rules_kueue_webhook.POLICIES}
CHART_CRDS = Path(__file__).resolve().parents[3] / "shared" / "vendor" / "kueue-0.19.2" / "templates" / "crd"


def test_served_table_matches_the_pinned_chart() -> None:
    kinds: set[str] = set()
    for path in sorted(CHART_CRDS.glob("*.yaml")):
        text = path.read_text()
        head = text[: text.index("versions:")]  # the names block is plain YAML before the templated part
        kind = next(
            line.split(":", 1)[1].strip()
            for line in head.splitlines()
            if line.strip().startswith("kind:") and "CustomResourceDefinition" not in line
        )
        kinds.add(kind)
        served = [
            line.split(":", 1)[1].strip()
            for line in text.splitlines()
            if line.strip().startswith("name: v") or line.strip().startswith("- name: v")
        ]
        assert set(served) == set(SERVED_VERSIONS), (path.name, served)
    assert kinds == set(SERVED_KINDS)


def test_v1alpha1_cohort_is_caught_and_v1beta2_passes() -> None:
    old = k8s("kueue.x-k8s.io/v1alpha1", "Cohort", "c", spec={})
    assert run(POLICY["kueue-served-api-version"], [old]).mentions("Cohort 'c'", "no longer serves")
    new = k8s("kueue.x-k8s.io/v1beta2", "Cohort", "c", spec={})
    assert run(POLICY["kueue-served-api-version"], [new, cluster_queue("cq", {"f": {}})]).violations == []


def test_clusterqueue_size_limits() -> None:
    quotas = {f"f{i}": {"cpu": 1} for i in range(257)}
    big = cluster_queue("cq", quotas, covered=("cpu",))
    assert run(POLICY["kueue-clusterqueue-size-limits"], [big]).mentions("257 flavors")
    combos = cluster_queue(
        "cq", {f"f{i}": {} for i in range(200)}, covered=("cpu", "memory", "nvidia.com/gpu")
    )
    assert run(POLICY["kueue-clusterqueue-size-limits"], [combos]).mentions(
        "600 flavor-resource combinations"
    )
    ok = cluster_queue("cq", {f"f{i}": {} for i in range(100)}, covered=("cpu", "memory", "nvidia.com/gpu"))
    assert run(POLICY["kueue-clusterqueue-size-limits"], [ok]).violations == []
