"""KAI Scheduler's own ``Topology`` objects (``kai.scheduler/v1alpha1``, cluster-scoped).

KAI v0.17.0 places a pod group by the node labels of a named Topology (the CRD is
``deployments/kai-scheduler/crds/kai.scheduler_topologies.yaml``, installed by the chart; see
``gpu_batch_policy.facts.kai.topology`` for how KAI reads the annotations).  One Topology per GPU family
the stack runs, with the same GKE levels as Kueue's (``gpu_batch_policy.facts.tas.levels``), each level
carrying its short name as ``alias`` so workloads can write ``block`` instead of the node label
(aliases are unique and never equal a node label, as KAI's topology webhook requires).
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi

from components.k8s_object import KubeObject, inherited_depends_on

API_VERSION = "kai.scheduler/v1alpha1"


@dataclass(frozen=True)
class KaiTopologyArgs:
    name: str
    # (nodeLabel, alias) from the widest domain to the single node.
    levels: tuple[tuple[str, str], ...]


class KaiTopologies(pulumi.ComponentResource):
    """The stack's KAI Topologies, after the KAI release (its chart installs the CRD)."""

    topologies: dict[str, KubeObject]

    def __init__(
        self, name: str, topologies: tuple[KaiTopologyArgs, ...], opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpu-batch:kai:Topologies", name, None, opts)
        after = inherited_depends_on(opts)
        self.topologies = {
            t.name: KubeObject(
                f"kai-topology-{t.name}",
                api_version=API_VERSION,
                kind="Topology",
                metadata={"name": t.name, "labels": {"app.kubernetes.io/managed-by": "pulumi"}},
                spec={"levels": [{"nodeLabel": label, "alias": alias} for label, alias in t.levels]},
                opts=pulumi.ResourceOptions(parent=self, depends_on=after),
            )
            for t in topologies
        }
        self.register_outputs({"topologies": list(self.topologies)})
