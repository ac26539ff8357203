"""Names resolve per cluster: each API server (and each Kueue) sees only its own objects.

A MultiKueue program sends the same names (ClusterQueue ``team-a``, flavor ``h100``, check
``dws``, LocalQueue ``team-a/team-a``) to several clusters; the single-cluster rules used to find
a name on any of them.  Kueue v0.19.2 resolves a ClusterQueue's flavors and admission checks in
its own cache (``pkg/cache/scheduler/clusterqueue.go`` ``inactiveReason``: ``FlavorNotFound``,
``CheckNotFoundOrInactive``) and a LocalQueue's ClusterQueue likewise, so a name declared only on
another cluster is missing.  ``StackModel.lookup(..., near=...)`` keeps the candidates on the
referencing object's cluster (its Kubernetes provider, or the GKE cluster that provider reaches).
"""

from __future__ import annotations

from gpu_batch_policy.rules.kueue.refs import POLICIES as REF_POLICIES

from tests.policies.multikueue.fixtures import MANAGER, WORKERS, _cq, _obj, program, replace, with_pools
from tests.policies.pack_harness import Res, policy, run

RULES = {p.name: p for p in REF_POLICIES}


def test_the_mirrored_program_resolves_every_name_on_its_own_cluster() -> None:
    for name in (
        "kueue-clusterqueue-references",
        "kueue-localqueue-target-exists",
        "kueue-admissioncheck-parameters",
    ):
        out = run(RULES[name], program())
        assert out.violations == [] and out.cannot_check is None, name


def test_a_flavor_only_on_other_clusters_is_missing_on_this_one() -> None:
    """worker-us's ClusterQueue names flavor h100, declared only on the manager and worker-eu."""
    resources = replace(program(), "worker-us-k8s-h100", None)
    out = run(RULES["kueue-clusterqueue-references"], resources)
    assert len(out.violations) == 1, out.messages
    message, urn = out.violations[0]
    assert "h100" in message and urn == next(r.urn for r in program() if r.name == "worker-us-k8s-team-a")


def test_an_admission_check_only_on_another_worker_is_missing() -> None:
    resources = replace(program(), "worker-eu-k8s-dws", None)
    out = run(RULES["kueue-clusterqueue-references"], resources)
    assert [u for _, u in out.violations] == [
        next(r.urn for r in program() if r.name == "worker-eu-k8s-team-a")
    ]
    assert "dws" in out.messages[0]


def test_a_localqueue_whose_clusterqueue_is_on_another_cluster_is_missing() -> None:
    resources = replace(program(), "manager-k8s-team-a", None)  # the manager's ClusterQueue team-a
    out = run(RULES["kueue-localqueue-target-exists"], resources)
    assert [u for _, u in out.violations] == [
        next(r.urn for r in program() if r.name == "manager-k8s-team-a-team-a")
    ]


def test_an_object_through_the_default_provider_is_visible_from_every_cluster() -> None:
    """The default provider's cluster is not in the program: its objects are not judged missing."""
    shared = _obj("ResourceFlavor", "h100", {}, "")
    shared.name = "shared-h100"
    resources = [*replace(program(), "worker-us-k8s-h100", None), shared]
    assert run(RULES["kueue-clusterqueue-references"], resources).violations == []


def test_the_fixture_names_what_these_tests_remove() -> None:
    names = {r.name for r in program()}
    assert {
        "worker-us-k8s-h100",
        "worker-eu-k8s-dws",
        "manager-k8s-team-a",
        "manager-k8s-team-a-team-a",
    } <= names
    assert all(isinstance(r, Res) for r in program()) and MANAGER and WORKERS


def _without_worker_checks(resources: list[Res]) -> list[Res]:
    """Each worker's ClusterQueue without its DWS check (so quota must be backed by nodes)."""
    out = [r for r in resources if not (r.type.endswith(":ClusterQueue") and r.provider != MANAGER)]
    return out + [_cq("team-a", [], 8, provider) for provider in WORKERS.values()]


def test_a_flavor_selects_only_its_own_clusters_pools() -> None:
    """Both workers have pools of the same GKE names: worker-us's flavor reaches worker-us's."""
    from gpu_batch_policy.facts.model import StackModel
    from gpu_batch_policy.rules.kueue.capacity import flavor_selection

    from tests.policies.pack_harness import policy_resources

    model = StackModel.from_policy_resources(policy_resources(with_pools(max_nodes=4)))
    for name, provider in WORKERS.items():
        flavor = next(f for f in model.resource_flavors() if model.provider_of(f.obj) == provider)
        chosen = sorted(p.res.pulumi_name for p in flavor_selection(model, flavor).matched)
        assert chosen == [f"{name}-dws-0", f"{name}-dws-1"]


def test_quota_within_capacity_is_judged_per_cluster_and_the_managers_dispatching_quota_is_exempt() -> None:
    """Each worker's 8 GPUs of quota against its own two 2-node one-GPU pools (4 GPUs): flagged on
    both workers.  Counting every cluster's pools (8 GPUs) hid it.  The manager's 16 GPUs carry the
    MultiKueue check: dispatched, not run there, so its flavor is not judged against nodes."""
    rule = policy("kueue-quota-within-capacity")
    out = run(rule, _without_worker_checks(with_pools(max_nodes=2)))
    flagged = sorted(u or "" for _, u in out.violations)
    workers = sorted(
        r.urn for r in with_pools(max_nodes=2) if r.type.endswith(":ResourceFlavor") and r.provider != MANAGER
    )
    assert flagged == workers, out.messages
    assert all("at most 4 GPUs" in m for m in out.messages)
    assert run(rule, _without_worker_checks(with_pools(max_nodes=4))).violations == []
