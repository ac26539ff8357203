"""KAI's own topology-aware placement: the ``kai.scheduler/v1alpha1`` Topology and the annotations
KAI reads for it (kai-scheduler/KAI-Scheduler v0.17.0).

- The annotations (``pkg/podgrouper/podgrouper/plugins/constants/constants.go``):
  ``kai.scheduler/topology`` (the Topology's name), ``kai.scheduler/topology-required-placement``,
  ``kai.scheduler/topology-preferred-placement``.  The default grouper reads them from the top
  owner's annotations (``defaultgrouper/default_grouper.go`` ``GetPodGroupMetadata``); the Ray
  grouper also reads them per head / worker group from ``template.metadata.annotations``
  (``ray/ray_grouper.go`` ``getTemplateTopologyConstraints``), and refuses a group whose placement
  annotations come without ``kai.scheduler/topology`` ("topology annotation ... is required").
- A level is a level's ``nodeLabel`` or its ``alias`` (the cluster snapshot resolves aliases to node
  labels, ``pkg/scheduler/cache/cluster_info/cluster_info.go`` ``buildAliasMapsByTopology``).
- The scheduler's topology plugin (``pkg/scheduler/plugins/topology/job_filtering.go``): a named
  Topology that does not exist is "Requested topology %s does not exist" (``subSetNodesFn``); a
  required or preferred level not in the Topology, or a preferred level above the required one
  (the walk from the leaf stops at the required level), is a topology-constraint config error
  (``calculateRelevantDomainLevels``).  Either way the workload is never placed.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

from ...primitives.values import Unknown, as_list, as_str, dig
from ..model import StackModel
from ..model.base import KubeObject

KAI_TOPOLOGY_GROUP: Final = "kai.scheduler"
TOPOLOGY: Final = "kai.scheduler/topology"
REQUIRED: Final = "kai.scheduler/topology-required-placement"
PREFERRED: Final = "kai.scheduler/topology-preferred-placement"
KEYS: Final[tuple[str, ...]] = (TOPOLOGY, REQUIRED, PREFERRED)


@dataclass(frozen=True)
class Level:
    node_label: str
    alias: str | None


def kai_topologies(model: StackModel) -> dict[str, list[Level] | None]:
    """Each declared KAI Topology's levels, widest first; None when they are not all known yet."""
    out: dict[str, list[Level] | None] = {}
    for obj in model.kube_objects(KAI_TOPOLOGY_GROUP, "Topology"):
        raw = as_list(dig(obj.spec, "levels"))
        levels: list[Level] | None = []
        for level in raw if isinstance(raw, list) else []:
            label, alias = as_str(dig(level, "nodeLabel")), as_str(dig(level, "alias"))
            if not isinstance(label, str) or isinstance(alias, Unknown):
                levels = None
                break
            assert levels is not None
            levels.append(Level(label, alias or None))
        out[obj.name] = levels if isinstance(raw, list) and levels else None
    return out


def _index(levels: list[Level], name: str) -> int | None:
    for i, level in enumerate(levels):
        if name in (level.node_label, level.alias):
            return i
    return None


def request_problems(
    notes: Mapping[str, str], topologies: Mapping[str, list[Level] | None] | None, *, ray_group: bool
) -> list[str]:
    """Why KAI never places a pod group with these annotations (empty: fine).  ``topologies`` None:
    the stack declares no KAI Topology, so names and levels are not judged; a Topology whose levels
    are not known yet (None) is not judged either."""
    required, preferred, name = notes.get(REQUIRED, ""), notes.get(PREFERRED, ""), notes.get(TOPOLOGY, "")
    if not required and not preferred:
        return []
    if not name:
        return [
            f"{TOPOLOGY} is missing, so "
            + (
                "KAI's Ray podgrouper refuses the group (topology annotation is required when "
                "topology placement annotations are set)"
                if ray_group
                else 'the scheduler finds no Topology ("Requested topology  does not exist")'
            )
        ]
    if topologies is None:
        return []
    if name not in topologies:
        return [
            f"Requested topology {name} does not exist (KAI Topologies here: {', '.join(sorted(topologies))})"
        ]
    levels = topologies[name]
    if levels is None:
        return []
    problems = []
    known = ", ".join(level.alias or level.node_label for level in levels)
    for key, value in ((REQUIRED, required), (PREFERRED, preferred)):
        if value and _index(levels, value) is None:
            problems.append(
                f"{key}: {value} is not a level (nodeLabel or alias) of Topology {name} ({known})"
            )
    r, p = _index(levels, required) if required else None, _index(levels, preferred) if preferred else None
    if r is not None and p is not None and p < r:
        problems.append(
            f"{PREFERRED} {preferred} is above {REQUIRED} {required}: KAI finds no preferred level"
        )
    return problems


def _ray_groups(obj: KubeObject) -> Iterator[tuple[str, Any]]:
    base = "spec.rayClusterSpec" if obj.kind == "RayJob" else "spec"
    cluster = dig(obj.spec, "rayClusterSpec") if obj.kind == "RayJob" else obj.spec
    yield f"{base}.headGroupSpec", dig(cluster, "headGroupSpec", "template", "metadata", "annotations")
    workers = as_list(dig(cluster, "workerGroupSpecs"))
    for i, group in enumerate(workers if isinstance(workers, list) else []):
        yield f"{base}.workerGroupSpecs[{i}]", dig(group, "template", "metadata", "annotations")


def annotated(obj: KubeObject) -> Iterator[tuple[str, dict[str, str] | Unknown, bool]]:
    """(where, KAI topology annotations or Unknown, is a Ray group) for the object and its Ray groups."""
    top = {k: obj.annotations[k] for k in KEYS if k in obj.annotations}
    yield "metadata.annotations", _known(top), False
    if obj.group == "ray.io" and obj.kind in ("RayJob", "RayCluster"):
        for where, raw in _ray_groups(obj):
            if isinstance(raw, Unknown):
                yield where, raw, True
            elif isinstance(raw, dict):
                yield where, _known({k: raw[k] for k in KEYS if k in raw}), True


def _known(notes: Mapping[str, Any]) -> dict[str, str] | Unknown:
    for value in notes.values():
        if isinstance(value, Unknown):
            return value
    return {k: str(v) for k, v in notes.items()}
