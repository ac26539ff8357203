"""Builders for test cases ported from Kueue v0.19.2's Go tests (kubernetes-sigs/kueue@v0.19.2).

A ported case states its objects in Kueue's own terms (ClusterQueues with
``Resource(name, nominal, borrowingLimit, lendingLimit)`` quotas, cohorts, admitted workloads
with their flavor assignment) and asserts the same admissions, flavors and preemptions as the Go
test.  The objects go through the same path as a stack's: plain v1beta2 manifests -> the pack's
``StackModel`` -> ``whatif.cluster.build_cluster``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml

from whatif.amounts import to_amount
from whatif.capacity import Pool
from whatif.cluster import Cluster, build_cluster
from whatif.pack import StackModel, quantity
from whatif.preemption import Preemptor
from whatif.tree import FlavorResource, add_all
from whatif.workload import ADMITTED, PodSet, Workload

API = "kueue.x-k8s.io/v1beta2"
# Resource(name, nominal, borrowingLimit, lendingLimit), as utiltestingapi.MakeFlavorQuotas has it
Res = tuple[str, ...]


def amount(raw: str) -> int:
    q = quantity(raw)
    assert q.value is not None, raw
    return to_amount(q.value)


def resource(name: str, nominal: str, borrowing: str = "", lending: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "nominalQuota": nominal}
    if borrowing:
        out["borrowingLimit"] = borrowing
    if lending:
        out["lendingLimit"] = lending
    return out


def flavor_quotas(flavor: str, *resources: Res) -> dict[str, Any]:
    return {"name": flavor, "resources": [resource(*r) for r in resources]}


def group(*flavors: dict[str, Any]) -> dict[str, Any]:
    # in the flavors' order, as ``MakeClusterQueue(...).ResourceGroup`` builds it: the webhook
    # rejects a flavor whose resources are not coveredResources in that order
    covered = list(dict.fromkeys(r["name"] for f in flavors for r in f["resources"]))
    return {"coveredResources": covered, "flavors": list(flavors)}


def cluster_queue(
    name: str,
    *groups: dict[str, Any],
    cohort: str | None = None,
    preemption: dict[str, Any] | None = None,
    fungibility: dict[str, Any] | None = None,
    strategy: str | None = None,
    weight: str | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {"resourceGroups": list(groups), "namespaceSelector": {}}
    if weight is not None:
        spec["fairSharing"] = {"weight": weight}
    if cohort:
        spec["cohortName"] = cohort
    if preemption:
        spec["preemption"] = preemption
    if fungibility:
        spec["flavorFungibility"] = fungibility
    if strategy:
        spec["queueingStrategy"] = strategy
    return {"apiVersion": API, "kind": "ClusterQueue", "metadata": {"name": name}, "spec": spec}


def cohort(
    name: str, parent: str | None = None, *groups: dict[str, Any], weight: str | None = None
) -> dict[str, Any]:
    spec: dict[str, Any] = {"resourceGroups": list(groups)}
    if parent:
        spec["parentName"] = parent
    if weight is not None:
        spec["fairSharing"] = {"weight": weight}
    return {"apiVersion": API, "kind": "Cohort", "metadata": {"name": name}, "spec": spec}


def flavor(name: str) -> dict[str, Any]:
    return {"apiVersion": API, "kind": "ResourceFlavor", "metadata": {"name": name}, "spec": {}}


def local_queue(namespace: str, name: str, cq: str) -> dict[str, Any]:
    return {
        "apiVersion": API,
        "kind": "LocalQueue",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"clusterQueue": cq},
    }


def fair_sharing(*strategies: str) -> dict[str, Any]:
    """Kueue's Configuration with ``fairSharing`` (the chart's ``kueue-manager-config`` ConfigMap),
    as the Go tests' ``&config.FairSharing{PreemptionStrategies: ...}``."""
    config: dict[str, Any] = {"apiVersion": "config.kueue.x-k8s.io/v1beta2", "kind": "Configuration"}
    config["fairSharing"] = {"preemptionStrategies": list(strategies)} if strategies else {}
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "kueue-manager-config", "namespace": "kueue-system"},
        "data": {"controller_manager_config.yaml": yaml.safe_dump(config)},
    }


def build(docs: list[dict[str, Any]]) -> Cluster:
    items = []
    for doc in docs:
        group_name, _, version = doc["apiVersion"].rpartition("/")
        meta = doc["metadata"]
        urn = f"test:{doc['kind']}/{meta.get('namespace', '')}/{meta['name']}"
        items.append((f"kubernetes:{group_name or 'core'}/{version}:{doc['kind']}", doc, urn, meta["name"]))
    return build_cluster(StackModel.from_plain(items))


@dataclass
class Admitted:
    """A workload holding quota: ``usage`` is {(flavor, resource): quantity}."""

    name: str
    cq: str
    usage: dict[FlavorResource, str]
    priority: int = 0
    reserved_at: float = 0.0
    created: float = 0.0


@dataclass
class World:
    cluster: Cluster
    running: dict[str, dict[str, Workload]] = field(default_factory=dict)
    seq: int = 0

    def workload(
        self, name: str, priority: int = 0, pod_sets: tuple[PodSet, ...] = (), created: float = 0.0
    ) -> Workload:
        self.seq += 1
        wl = Workload("", name, "", priority, created, 0.0, self.seq, pod_sets)
        return wl

    def admit(self, a: Admitted) -> Workload:
        wl = self.workload(a.name, a.priority, created=a.created)
        wl.cluster_queue = a.cq
        wl.state = ADMITTED
        wl.usage = {fr: amount(q) for fr, q in a.usage.items()}
        wl.reserved_at = a.reserved_at
        add_all(self.cluster.cluster_queues[a.cq].node, wl.usage)
        self.running.setdefault(a.cq, {})[wl.key] = wl
        return wl

    def preemptor(self) -> Preemptor:
        for name in self.cluster.cluster_queues:
            self.running.setdefault(name, {})
        return Preemptor(self.cluster, self.running)


def world(docs: list[dict[str, Any]], admitted: list[Admitted]) -> World:
    w = World(build(docs))
    for a in admitted:
        w.admit(a)
    return w


def pod_set(name: str = "main", count: int = 1, **requests: str) -> PodSet:
    return PodSet(name, count, {_res(k): amount(v) for k, v in requests.items()})


def pod_set_of(requests: dict[str, str], name: str = "main", count: int = 1) -> PodSet:
    """A pod set whose resource names are not Python identifiers (``example.com/gpu``)."""
    return PodSet(name, count, {k: amount(v) for k, v in requests.items()})


def _res(key: str) -> str:
    return {"gpu": "nvidia.com/gpu"}.get(key, key)


def provisioning_cluster(
    pool: Pool | None,
    *,
    provisioning_class: str = "queued-provisioning.gke.io",
    retry: dict[str, int] | None = None,
    parameters: dict[str, str] | None = None,
    quota: str = "100",
) -> Cluster:
    spec: dict[str, Any] = {
        "provisioningClassName": provisioning_class,
        "managedResources": ["nvidia.com/gpu"],
    }
    if retry is not None:
        spec["retryStrategy"] = retry
    if parameters is not None:
        spec["parameters"] = parameters
    docs = [
        flavor("l4"),
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "ProvisioningRequestConfig",
            "metadata": {"name": "dws"},
            "spec": spec,
        },
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "AdmissionCheck",
            "metadata": {"name": "dws"},
            "spec": {
                "controllerName": "kueue.x-k8s.io/provisioning-request",
                "parameters": {
                    "apiGroup": "kueue.x-k8s.io",
                    "kind": "ProvisioningRequestConfig",
                    "name": "dws",
                },
            },
        },
        cluster_queue("cq", group(flavor_quotas("l4", ("nvidia.com/gpu", quota)))),
        local_queue("team-a", "user-queue", "cq"),
    ]
    docs[3]["spec"]["admissionChecksStrategy"] = {"admissionChecks": [{"name": "dws"}]}
    c = build(docs)
    if pool is not None:
        c.pools = {"l4": (pool,)}
    return c
