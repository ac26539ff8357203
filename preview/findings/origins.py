"""Which config key produced each resource: derived from the stack file and the recorded tree.

The program names what it declares after the config entry it came from (``stacks/compose``):
a component per GPU pool (``GpuNodePool(pool.name)``), per team (``Team(team.name)``), per
workload; one Kubernetes object per ClusterQueue, flavor, admission check, cohort and priority
class, named as in the config (``components/kueue_queues.py``); KAI queues by their tree names
(``components/kai_queues.py``).  So a resource's origin is found by walking from it up its
parents to the first one whose type and name match a named entry of the stack file:

- a Kubernetes object by its kind and ``metadata.name`` (``KIND_LISTS``);
- a component by its type and name (``COMPONENT_LISTS``), else its layer's top-level key
  (``COMPONENT_KEYS``);
- a Helm release (and the objects its chart renders) by the chart's entry in ``charts.lock.yaml``.

What matches nothing points at ``Pulumi.yaml`` (the program itself).  A test fails when a
component type the program declares is missing from these tables.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from preview.records import RecordedResource

# Kubernetes kind -> the config lists whose named entries declare it (and the entry fields that
# may carry the object's name: a LocalQueue is named by its team's ``localQueue``).
KIND_LISTS: dict[str, tuple[tuple[str, tuple[str, ...]], ...]] = {
    "ClusterQueue": (("clusterQueues", ("name",)),),
    "ResourceFlavor": (("resourceFlavors", ("name",)),),
    "AdmissionCheck": (("admissionChecks", ("name",)),),
    # components/kueue_queues.py names a check's ProvisioningRequestConfig "<check>-config".
    "ProvisioningRequestConfig": (("admissionChecks", ("name",)),),
    "Cohort": (("cohorts", ("name",)),),
    "WorkloadPriorityClass": (("priorityClasses", ("name",)),),
    "LocalQueue": (("teams", ("localQueue", "name")),),
    "Queue": (("kaiQueues", ("name",)), ("children", ("name",))),
}
# Component type -> the config list whose entry's name is the component's name (or its suffix:
# a workload component is "<namespace>-<name>[-<priority>]").
COMPONENT_LISTS: dict[str, str] = {
    "gpu-batch:gke:GpuNodePool": "gpuPools",
    "gpu-batch:tenancy:Team": "teams",
    "gpu-batch:tenancy:QueueAdmission": "teams",
    "gpu-batch:skypilot:Server": "teams",
    # "<team>-identity" (stacks/compose/identity.py): the team's Workload Identity.
    "gpu-batch:tenancy:TeamIdentity": "teams",
    "gpu-batch:workloads:Ray": "workloads",
}
# Component (or stack-level resource) type -> the top-level key of its layer.
COMPONENT_KEYS: dict[str, str] = {
    "gpu-batch:gke:Cluster": "cluster",
    "gpu-batch:gke:NodeServiceAccount": "cluster",
    "gpu-batch:network:NodeEgress": "cluster",
    "gpu-batch:network:WebhookIngress": "cluster",
    "gpu-batch:kueue:Install": "kueue",
    # Managed Prometheus scraping Kueue's metrics (components/monitoring.py).
    "gpu-batch:monitoring:KueueScrape": "kueue",
    "gpu-batch:tenancy:TeamIdentity": "teams",
    "gpu-batch:kueue:Queues": "kueueQueues",
    "gpu-batch:kai:Install": "kai",
    "gpu-batch:kai:Queues": "kaiQueues",
    "gpu-batch:kuberay:Operator": "kuberay",
    "gpu-batch:skypilot:Gateway": "skypilotGateway",
    "gpu-batch:gpu:Operator": "gpuPools",
    # GPUDirect's VPCs and node objects follow the pools with `network: gpudirect`.
    "gpu-batch:gpudirect:Vpcs": "gpuPools",
    "gpu-batch:gpudirect:ClusterObjects": "gpuPools",
    # The NCCL-env admission policy for teams' own pods on GPUDirect pools follows the same pools.
    "gpu-batch:gpudirect:NcclAdmission": "gpuPools",
    "gpu-batch:tenancy:Team": "teams",
    "gpu-batch:tenancy:QueueAdmission": "teams",
    # One policy for every team namespace (components/service_admission.py): the teams list.
    "gpu-batch:tenancy:ServiceAdmission": "teams",
    # Likewise the tenant-pool placement policy (components/pool_admission.py), one for all teams.
    "gpu-batch:tenancy:PoolAdmission": "teams",
    # A KAI Topology per GPU family of the GPU pools (stacks/checks/topology.py kai_topologies).
    "gpu-batch:kai:Topologies": "gpuPools",
    "gpu-batch:skypilot:Server": "teams",
    "gpu-batch:workloads:Ray": "workloads",
    "gpu-batch:gke:GpuNodePool": "gpuPools",
    # The MultiKueue manager's objects and each worker's access for it (components/multikueue.py).
    "gpu-batch:multikueue:Manager": "multiKueue",
    "gpu-batch:multikueue:WorkerAccess": "multiKueue",
    # The ClusterProfile way (multiKueue.credentials: clusterProfile, components/multikueue_fleet.py):
    # the Kueue principal's fleet access and the auth-plugin patch on the manager's Kueue.
    "gpu-batch:multikueue:FleetAccess": "multiKueue",
    "gpu-batch:multikueue:AuthPlugin": "multiKueue",
}
HELM_RELEASE = "kubernetes:helm.sh/v3:Release"
# Resource type prefix -> top-level key: the stack's dashboard, alerting and Managed Prometheus
# scrapes (components/monitoring.py) are the monitoring layer.
TYPE_PREFIX_KEYS: dict[str, str] = {
    "gcp:monitoring/": "monitoring",
    "kubernetes:monitoring.googleapis.com/": "monitoring",
}


@dataclass(frozen=True)
class Origin:
    """Where a resource came from: a config key path (``file`` the stack file), a chart's lock
    entry (``file`` charts.lock.yaml, ``path`` ``charts.<key>``), or the program (Pulumi.yaml)."""

    file: str
    path: str


def _named_entries(config: Mapping[str, Any], project: str) -> dict[tuple[str, str], str]:
    """(list key, name) -> key path of every named list entry of the stack config, at any depth."""
    index: dict[tuple[str, str], str] = {}

    def walk(value: Any, path: str, list_key: str) -> None:
        if isinstance(value, Mapping):
            for key, item in value.items():
                walk(item, f"{path}.{key}" if path else str(key), str(key).split(":")[-1])
        elif isinstance(value, list):
            for i, item in enumerate(value):
                here = f"{path}[{i}]"
                if isinstance(item, Mapping):
                    for field_name in ("name", "localQueue"):
                        name = item.get(field_name)
                        if isinstance(name, str):
                            index.setdefault((f"{list_key}.{field_name}", name), here)
                walk(item, here, list_key)

    walk({_qualify(project, k): v for k, v in config.items()}, "", "")
    return index


def _qualify(project: str, key: str) -> str:
    return key if ":" in key else f"{project}:{key}"


class OriginIndex:
    """Resource URN -> :class:`Origin`, for one stack's recorded resources."""

    def __init__(
        self,
        project: str,
        stack_file: str,
        config: Mapping[str, Any],
        resources: Iterable[RecordedResource],
        lock_entries: Mapping[str, tuple[str, str]],
    ) -> None:
        """``config`` is the stack file's ``config:`` mapping as written; ``lock_entries`` maps a
        lock key to its chart (name, version)."""
        self.project = project
        self.stack_file = stack_file
        self._top = {_qualify(project, k) for k in config}
        self._named = _named_entries(config, project)
        self._by_urn = {r.urn: r for r in resources}
        self._lock = lock_entries
        self._memo: dict[str, Origin] = {}

    def origin(self, urn: str) -> Origin:
        if urn not in self._memo:
            self._memo[urn] = self._find(urn)
        return self._memo[urn]

    def _find(self, urn: str) -> Origin:
        seen: set[str] = set()
        current = self._by_urn.get(urn)
        while current is not None and current.urn not in seen:
            seen.add(current.urn)
            found = self._own(current)
            if found is not None:
                return found
            current = self._by_urn.get(current.parent)
        return Origin("Pulumi.yaml", "")

    def _own(self, resource: RecordedResource) -> Origin | None:
        if resource.type == HELM_RELEASE:
            lock = self._lock_key(resource.inputs)
            if lock is not None:
                return Origin("charts.lock.yaml", f"charts.{lock}")
        kind = resource.type.rsplit(":", 1)[-1] if resource.type.startswith("kubernetes:") else ""
        metadata = resource.inputs.get("metadata")
        name = metadata.get("name") if isinstance(metadata, Mapping) else None
        if kind in KIND_LISTS and isinstance(name, str):
            for list_key, fields in KIND_LISTS[kind]:
                for field_name in fields:
                    for candidate in (name, name.removesuffix("-config")):
                        path = self._named.get((f"{list_key}.{field_name}", candidate))
                        if path is not None:
                            return Origin(self.stack_file, path)
        if resource.type in COMPONENT_LISTS:
            path = self._by_suffix(COMPONENT_LISTS[resource.type], resource.name)
            if path is not None:
                return Origin(self.stack_file, path)
        top = COMPONENT_KEYS.get(resource.type) or next(
            (key for prefix, key in TYPE_PREFIX_KEYS.items() if resource.type.startswith(prefix)), None
        )
        if top is not None and _qualify(self.project, top) in self._top:
            return Origin(self.stack_file, _qualify(self.project, top))
        return None

    def _by_suffix(self, list_key: str, name: str) -> str | None:
        """The entry whose name is ``name``, else the longest one ``name`` contains as a
        dash-separated part (``default-pytorch-text-classifier-prod`` -> ``pytorch-text-classifier``)."""
        exact = self._named.get((f"{list_key}.name", name))
        if exact is not None:
            return exact
        parts = f"-{name}-"
        matches = [
            (len(entry), path)
            for (key, entry), path in self._named.items()
            if key == f"{list_key}.name" and f"-{entry}-" in parts
        ]
        return max(matches)[1] if matches else None

    def _lock_key(self, inputs: Mapping[str, Any]) -> str | None:
        chart = inputs.get("chart")
        version = inputs.get("version")
        if not isinstance(chart, str):
            return None
        name = chart.rsplit("/", 1)[-1]
        for key, (locked_name, locked_version) in sorted(self._lock.items()):
            if locked_name == name and (not isinstance(version, str) or version == locked_version):
                return key
        return None
