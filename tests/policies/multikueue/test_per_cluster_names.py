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

from gpu_batch_policy.rules.kueue_refs import POLICIES as REF_POLICIES

from tests.policies.multikueue.fixtures import MANAGER, WORKERS, _obj, program, replace
from tests.policies.pack_harness import Res, run

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
