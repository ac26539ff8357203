"""Tenant isolation judged per cluster (issue 45): the blind spots a MultiKueue program slipped through.

A program of three GKE clusters (a manager and two workers), each reached by its own Kubernetes
provider whose kubeconfig depends on the cluster (as ``stacks.compose.multikueue`` builds them),
each holding the team namespace ``research`` with its LocalQueue.  The correct program gives every
cluster Dataplane V2 and a default-deny policy; each case breaks one cluster only.
"""

from __future__ import annotations

from typing import Any

from tests.policies.pack_harness import Res, policy, run
from tests.policies.pack_objects import gke_cluster

ENFORCED = policy("networkpolicy-enforced")
DEFAULT_DENY = policy("namespace-default-deny")
UNIFORM = policy("tenant-isolation-uniform")
CLUSTERS = ("manager", "worker-us", "worker-eu")


def provider_urn(cluster: str) -> str:
    return f"urn:pulumi:test::gpu-batch::pulumi:providers:kubernetes::{cluster}-k8s"


def _obj(cluster: str, api_version: str, kind: str, name: str, **top: Any) -> Res:
    meta: dict[str, Any] = {"name": name}
    if kind != "Namespace":
        meta["namespace"] = "research"
    props = {"apiVersion": api_version, "kind": kind, "metadata": meta, **top}
    group_version = api_version if "/" in api_version else f"core/{api_version}"
    return Res(
        f"kubernetes:{group_version}:{kind}",
        f"{cluster}-{kind}-{name}",
        props,
        provider=provider_urn(cluster),
    )


def cluster(name: str, *, dataplane_v2: bool = True, deny: bool = True) -> list[Res]:
    gke = gke_cluster(
        f"{name}-cluster", **({"datapathProvider": "ADVANCED_DATAPATH"} if dataplane_v2 else {})
    )
    out = [
        gke,
        Res(
            "pulumi:providers:kubernetes",
            f"{name}-k8s",
            {},
            urn=provider_urn(name),
            property_dependencies={"kubeconfig": [gke.urn]},
        ),
        _obj(name, "v1", "Namespace", "research"),
        _obj(name, "kueue.x-k8s.io/v1beta2", "LocalQueue", "default", spec={"clusterQueue": "research-h100"}),
    ]
    if deny:
        out.append(
            _obj(
                name,
                "networking.k8s.io/v1",
                "NetworkPolicy",
                "deny",
                spec={"podSelector": {}, "policyTypes": ["Ingress"]},
            )
        )
    return out


def program(**broken: dict[str, bool]) -> list[Res]:
    return [r for c in CLUSTERS for r in cluster(c, **broken.get(c.replace("-", "_"), {}))]


def test_the_isolated_program_passes_every_rule() -> None:
    for rule in (ENFORCED, DEFAULT_DENY, UNIFORM):
        result = run(rule, program())
        assert result.clean and result.cannot_check is None, (rule.name, result.text())


def test_a_worker_without_dataplane_v2_is_caught_though_the_manager_has_it() -> None:
    """Before issue 45, one enforcing cluster anywhere in the stack passed every policy."""
    broken = program(worker_eu={"dataplane_v2": False})
    result = run(ENFORCED, broken)
    assert len(result.violations) == 1 and "GKE cluster worker-eu-cluster" in result.messages[0]
    (deny,) = run(DEFAULT_DENY, broken).messages
    assert "worker-eu-cluster, which enforces no NetworkPolicy" in deny
    (uniform,) = run(UNIFORM, broken).messages
    assert "is on a cluster that enforces none" in uniform
    # The violation names the worker's namespace object, not the manager's.
    assert (
        run(UNIFORM, broken).violations[0][1]
        == "urn:pulumi:test::gpu-batch::kubernetes:core/v1:Namespace::worker-eu-Namespace-research"
    )


def test_a_worker_namespace_without_default_deny_is_not_hidden_by_the_managers() -> None:
    """Namespaces were matched by name across clusters: the manager's ``research`` policy hid the
    worker's open ``research``."""
    broken = program(worker_us={"deny": False})
    (deny,) = run(DEFAULT_DENY, broken).messages
    assert "tenant namespace research has no NetworkPolicy isolating" in deny
    assert len(run(UNIFORM, broken).violations) == 1
    assert run(ENFORCED, broken).clean


def test_a_program_that_isolates_nothing_has_no_uniformity_finding() -> None:
    """Nothing isolated anywhere is namespace-default-deny's finding (once per cluster), not an
    inconsistency of the program."""
    bare = program(**{c.replace("-", "_"): {"dataplane_v2": False, "deny": False} for c in CLUSTERS})
    assert run(UNIFORM, bare).clean
    assert len(run(DEFAULT_DENY, bare).violations) == 3
    # No NetworkPolicy declared anywhere: networkpolicy-enforced has nothing to judge.
    assert run(ENFORCED, bare).clean


def test_a_single_cluster_on_the_default_provider_is_still_judged() -> None:
    """A provider linked to no GKE cluster reaches the program's only cluster."""
    single = [
        gke_cluster("only"),
        *[Res(r.type, r.name, r.props) for r in cluster("manager") if r.type.startswith("kubernetes:")],
    ]
    result = run(ENFORCED, single)
    assert len(result.violations) == 1 and "GKE cluster only" in result.messages[0]
