"""The report of a program reaching several clusters: one set of sections per cluster, then, per
team, which MultiKueue workers can take which gangs.

Each cluster's resources are its Kubernetes provider's objects plus the GKE cluster that
provider's kubeconfig depends on and that cluster's node pools (``preview.clusters``), so a
worker's "largest gang" is that worker's quota bounded by that worker's pools -- never the sum of
pools of the same name in other regions.  A dispatched gang runs on one worker (Kueue v0.19.2
``site/content/en/docs/concepts/multikueue.md``: the Workload is admitted in one worker and
removed from the others), so what a team can run is the largest gang of its best worker.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from preview.clusters import cluster_groups
from preview.records import RecordedResource

_GKE_CLUSTER = "gcp:container/cluster:Cluster"
_NODE_POOL = "gcp:container/nodePool:NodePool"
_PROVIDER = "pulumi:providers:kubernetes"
_KUEUE = "kubernetes:kueue.x-k8s.io/"

Table = Callable[[Sequence[str], list[list[object]]], list[str]]
GangRows = Callable[[list[RecordedResource]], dict[str, tuple[str, str]]]


def _deps(resource: RecordedResource) -> set[str]:
    found = set(resource.dependencies)
    for urns in resource.property_dependencies.values():
        found.update(urns)
    return found


def cluster_subsets(resources: Sequence[RecordedResource]) -> list[tuple[str, list[RecordedResource]]]:
    """(title, resources) per cluster, when the program reaches more than one; else one entry."""
    groups = cluster_groups(resources, ())
    if len(groups) < 2:
        return [("", list(resources))]
    providers = {r.urn: r for r in resources if r.type == _PROVIDER}
    out = []
    for group in groups:
        provider = providers.get(group.provider)
        linked = _deps(provider) if provider is not None else set()
        clusters = [r for r in resources if r.type == _GKE_CLUSTER and r.urn in linked]
        urns = {c.urn for c in clusters}
        pools = [r for r in resources if r.type == _NODE_POOL and _deps(r) & urns]
        name = clusters[0].inputs.get("name") if clusters else None
        title = f"cluster `{name}`" if isinstance(name, str) else group.title
        out.append((title, [*group.resources, *clusters, *pools, *([provider] if provider else [])]))
    return out


def _local_queues(subset: Sequence[RecordedResource]) -> dict[str, str]:
    """``namespace/name`` -> ClusterQueue of every LocalQueue the cluster declares."""
    out: dict[str, str] = {}
    for r in subset:
        if r.type.startswith(_KUEUE) and r.type.endswith(":LocalQueue"):
            meta, spec = r.inputs.get("metadata", {}), r.inputs.get("spec", {})
            out[f"{meta.get('namespace', 'default')}/{meta.get('name')}"] = str(spec.get("clusterQueue"))
    return out


def _is_manager(subset: Sequence[RecordedResource]) -> bool:
    return any(
        r.type.startswith(_KUEUE) and r.type.endswith((":MultiKueueConfig", ":MultiKueueCluster"))
        for r in subset
    )


def multikueue_section(
    clusters: Sequence[tuple[str, list[RecordedResource]]], gang_rows: GangRows, table: Table
) -> list[str]:
    """Per manager LocalQueue (a team's queue), per worker: the worker ClusterQueue behind the
    mirrored queue and the largest gang it admits."""
    managers = [c for c in clusters if _is_manager(c[1])]
    workers = [c for c in clusters if not _is_manager(c[1]) and _local_queues(c[1])]
    if len(managers) != 1 or not workers:
        return []
    manager_queues = _local_queues(managers[0][1])
    gangs = {title: gang_rows(subset) for title, subset in workers}
    rows: list[list[object]] = []
    for lq in sorted(manager_queues):
        for title, subset in workers:
            target = _local_queues(subset).get(lq)
            if target is None:
                rows.append([lq, title, "-", "no such LocalQueue: never admitted here", "-"])
                continue
            gang, behind = gangs[title].get(target, ("0", "-"))
            rows.append([lq, title, target, gang, behind])
    return [
        "## MultiKueue: which workers take which gangs",
        "",
        f"Manager: {managers[0][0]}; the team's queue on the manager dispatches to every worker below.",
        "",
        *table(["team queue", "worker", "worker ClusterQueue", "largest gang (GPUs)", "pools behind"], rows),
        "",
        "A gang runs on one worker: a gang larger than every worker's *largest gang* is never admitted, "
        "even when the manager's quota holds it (kueue#8602).",
        "",
    ]
