"""Kueue references resolve (or the queue stays inactive): caught, clean, and unknown-safe."""

from __future__ import annotations

from typing import Any

from tests.policies.pack_harness import UNKNOWN, Res, run
from tests.policies.pack_harness import policy as get_policy
from tests.policies.pack_objects import (
    DELETE,
    admission_check,
    cluster_queue,
    cohort,
    k8s,
    local_queue,
    namespace,
    patch,
    provisioning_request_config,
    resource_flavor,
)

LQ_TARGET = get_policy("kueue-localqueue-target-exists")
CQ_REFS = get_policy("kueue-clusterqueue-references")
AC_PARAMS = get_policy("kueue-admissioncheck-parameters")
CLOSED = {"closedWorld": True}  # what this repository's own stacks set (policies/config.<stack>.json)
COHORTS = get_policy("kueue-cohort-hierarchy")
SELECTOR = get_policy("kueue-namespace-selector-admits")

CHECKS_V1BETA2: dict[str, Any] = {"admissionChecksStrategy": {"admissionChecks": [{"name": "dws"}]}}


def wired() -> list[Res]:
    """A complete, correctly wired v1beta2 set."""
    return [
        namespace("team-a"),
        resource_flavor(),
        admission_check(),
        provisioning_request_config(),
        cluster_queue(**CHECKS_V1BETA2),
        local_queue(),
    ]


def test_wired_set_is_clean_for_every_reference_rule() -> None:
    for pol in (LQ_TARGET, CQ_REFS, AC_PARAMS, COHORTS, SELECTOR):
        result = run(pol, wired())
        assert result.clean and result.cannot_check is None, (pol.name, result.text())


def test_localqueue_to_missing_clusterqueue_is_caught_with_its_urn() -> None:
    lq = local_queue(target="typo-cq")
    result = run(LQ_TARGET, [*wired()[:-1], lq])
    assert len(result.violations) == 1
    message, urn = result.violations[0]
    assert "LocalQueue 'team-a/team-lq'" in message and "'typo-cq'" in message and "team-cq" in message
    assert urn == lq.urn


def test_localqueue_without_clusterqueue_is_caught() -> None:
    lq = patch(local_queue(), "spec.clusterQueue", DELETE)
    assert "spec.clusterQueue is empty" in run(LQ_TARGET, [lq]).text()


def test_auto_named_clusterqueue_is_found_by_pulumi_name() -> None:
    cq = patch(cluster_queue(), "metadata.name", DELETE)  # Pulumi auto-names: name = resource name
    assert run(LQ_TARGET, [cq, local_queue()]).clean


def test_unknown_clusterqueue_name_is_cannot_check() -> None:
    cq = patch(cluster_queue("other"), "metadata.name", UNKNOWN)
    result = run(LQ_TARGET, [cq, local_queue()])
    assert result.clean and result.cannot_check is not None and "team-cq" in result.cannot_check
    lq = patch(local_queue(), "spec.clusterQueue", UNKNOWN)
    result = run(LQ_TARGET, [cluster_queue(), lq])
    assert result.clean and result.cannot_check is not None


def test_clusterqueue_missing_flavor_and_check_are_caught() -> None:
    items = [r for r in wired() if r.props["kind"] not in ("ResourceFlavor", "AdmissionCheck")]
    result = run(CQ_REFS, items, CLOSED)
    text = result.text()
    assert "ResourceFlavor 'gpu-flavor'" in text and "FlavorNotFound" in text
    assert "AdmissionCheck 'dws'" in text and "AdmissionCheckNotFound" in text
    assert all(urn == items[-2].urn for _, urn in result.violations)


def test_v1beta1_admission_check_list_is_resolved_too() -> None:
    cq = cluster_queue(version="v1beta1", admissionChecks=["missing-check"])
    cq = patch(cq, "spec.namespaceSelector", {})
    result = run(CQ_REFS, [resource_flavor(), cq], CLOSED)
    assert len(result.violations) == 1 and "'missing-check'" in result.messages[0]


def test_v1beta1_list_on_a_v1beta2_queue_attaches_nothing() -> None:
    # Pruned by the API server: no reference to resolve (kueue-api-version-fields reports it).
    cq = cluster_queue(admissionChecks=["missing-check"])
    assert run(CQ_REFS, [resource_flavor(), cq]).clean


def test_on_flavors_must_name_the_queues_flavors() -> None:
    cq = cluster_queue(admissionChecksStrategy={"admissionChecks": [{"name": "dws", "onFlavors": ["spot"]}]})
    result = run(CQ_REFS, [resource_flavor(), admission_check(), cq])
    assert len(result.violations) == 1 and "onFlavors names flavor 'spot'" in result.messages[0]
    ok = cluster_queue(
        admissionChecksStrategy={"admissionChecks": [{"name": "dws", "onFlavors": ["gpu-flavor"]}]}
    )
    assert run(CQ_REFS, [resource_flavor(), admission_check(), ok]).clean


def test_multikueue_with_provisioning_request_is_caught() -> None:
    mk = k8s(
        "kueue.x-k8s.io/v1beta2", "AdmissionCheck", "mk", spec={"controllerName": "kueue.x-k8s.io/multikueue"}
    )
    cq = cluster_queue(admissionChecksStrategy={"admissionChecks": [{"name": "dws"}, {"name": "mk"}]})
    result = run(CQ_REFS, [resource_flavor(), admission_check(), mk, cq])
    assert len(result.violations) == 1 and "MultiKueueWithProvisioningRequest" in result.messages[0]


def test_admission_check_parameters() -> None:
    assert run(AC_PARAMS, [admission_check(), provisioning_request_config()]).clean
    missing = run(AC_PARAMS, [admission_check()], CLOSED)
    assert len(missing.violations) == 1 and "ProvisioningRequestConfig 'dws-config'" in missing.messages[0]
    bad_kind = patch(admission_check(), "spec.parameters.kind", "ConfigMap")
    assert "kind is 'ConfigMap'" in run(AC_PARAMS, [bad_kind, provisioning_request_config()]).text()
    bad_group = patch(admission_check(), "spec.parameters.apiGroup", "autoscaling.x-k8s.io")
    assert "BadParametersRef" in run(AC_PARAMS, [bad_group, provisioning_request_config()]).text()
    no_params = patch(admission_check(), "spec.parameters", DELETE)
    assert "missing parameters reference" in run(AC_PARAMS, [no_params]).text()
    no_name = patch(admission_check(), "spec.parameters.name", "")
    assert "spec.parameters.name is empty" in run(AC_PARAMS, [no_name, provisioning_request_config()]).text()


def test_other_controllers_need_no_provisioning_config() -> None:
    other = patch(admission_check(), "spec.controllerName", "example.com/my-check")
    other = patch(other, "spec.parameters", DELETE)
    assert run(AC_PARAMS, [other]).clean


def test_cohort_parent_must_exist_and_bare_cq_cohort_is_fine() -> None:
    cq = cluster_queue(cohortName="bare-name-no-object")
    assert run(COHORTS, [cq, cohort("root"), cohort("org", parent="root")]).clean
    result = run(COHORTS, [cohort("root"), cohort("org", parent="roto")])
    assert len(result.violations) == 1 and "Cohort 'roto'" in result.messages[0]
    assert "did you mean 'root'?" in result.messages[0]
    # The only Cohort here: its parent lives in another stack unless the world is closed.
    alone = run(COHORTS, [cohort("org", parent="roto")])
    assert alone.clean and alone.cannot_check is not None and "not in this stack" in alone.cannot_check
    assert len(run(COHORTS, [cohort("org", parent="roto")], CLOSED).violations) == 1


def test_cohort_cycle_is_caught_once_on_a_member() -> None:
    items = [
        cohort("a", parent="b"),
        cohort("b", parent="c"),
        cohort("c", parent="a"),
        cohort("leaf", parent="a"),
    ]
    result = run(COHORTS, items)
    cycles = [m for m in result.messages if "cycle" in m]
    assert len(cycles) == 1
    urn = next(u for m, u in result.violations if "cycle" in m)
    assert urn in {r.urn for r in items[:3]}


def test_v1alpha1_cohort_parent_field_is_read() -> None:
    old = k8s("kueue.x-k8s.io/v1alpha1", "Cohort", "child", spec={"parent": "nowhere"})
    assert "Cohort 'nowhere'" in run(COHORTS, [old], CLOSED).text()


def test_omitted_namespace_selector_admits_nothing() -> None:
    cq = patch(cluster_queue(), "spec.namespaceSelector", DELETE)
    result = run(SELECTOR, [cq, local_queue()])
    assert len(result.violations) == 1 and "admits no namespace" in result.messages[0]
    # Without a LocalQueue pointing at it, nothing can be wrong yet.
    assert run(SELECTOR, [cq]).clean


def test_selector_that_misses_the_localqueue_namespace_is_caught() -> None:
    lq = local_queue(namespace="team-b")
    result = run(SELECTOR, [namespace("team-b"), cluster_queue(), lq])
    assert len(result.violations) == 1 and "does not select namespace 'team-b'" in result.messages[0]


def test_selector_on_declared_namespace_labels() -> None:
    selector = {"matchExpressions": [{"key": "team", "operator": "In", "values": ["team-a"]}]}
    cq = patch(cluster_queue(), "spec.namespaceSelector", selector)
    assert run(SELECTOR, [namespace("team-a"), cq, local_queue()]).clean
    # Undeclared namespace: its labels are not visible, so the pack cannot tell.
    result = run(SELECTOR, [cq, local_queue()])
    assert result.clean and result.cannot_check is not None


def test_empty_selector_admits_everything() -> None:
    cq = patch(cluster_queue(), "spec.namespaceSelector", {})
    assert run(SELECTOR, [cq, local_queue(namespace="anything")]).clean


def test_a_tas_flavor_needs_its_topology() -> None:
    """Kueue v0.19.2 ``pkg/cache/scheduler/clusterqueue.go``: a TAS flavor without its Topology
    leaves the ClusterQueue inactive (TopologyNotFound)."""
    from tests.policies.workload_stack import cluster_queue, k8s
    from tests.policies.workload_stack import run as run_stack

    rule = get_policy("kueue-clusterqueue-references")
    tas_flavor = k8s("kueue.x-k8s.io/v1beta2", "ResourceFlavor", "tas", spec={"topologyName": "gke-default"})
    queue = cluster_queue("cq", {"tas": {"cpu": 1}})
    other = k8s(
        "kueue.x-k8s.io/v1beta2",
        "Topology",
        "other",
        spec={"levels": [{"nodeLabel": "kubernetes.io/hostname"}]},
    )
    outcome = run_stack(rule, [tas_flavor, queue, other])
    assert outcome.mentions("topologyName 'gke-default'", "TopologyNotFound")
    topology = k8s(
        "kueue.x-k8s.io/v1beta2",
        "Topology",
        "gke-default",
        spec={"levels": [{"nodeLabel": "kubernetes.io/hostname"}]},
    )
    assert run_stack(rule, [tas_flavor, queue, topology]).violations == []
    # No Topology in the stack at all: it may live elsewhere.
    elsewhere = run_stack(rule, [tas_flavor, queue])
    assert elsewhere.violations == [] and elsewhere.cannot_check is not None
    # The TopologyAwareScheduling gate off: Kueue does not look for it.
    off = {"kueueConfiguration": {"featureGates": {"TopologyAwareScheduling": False}}}
    assert run_stack(rule, [tas_flavor, queue, other], off).violations == []
