"""Topology-aware placement in the stack config: a pod group's topology request (Kueue TAS, or KAI).

The request becomes Kueue's pod-set annotations (kubernetes-sigs/kueue v0.19.2
``apis/kueue/v1beta2/topology_types.go``) on the group's pod template, and is checked with the
policy pack's port of Kueue's webhook validation (``gpu_batch_policy.facts.tas.annotations``), so the
config refuses exactly what Kueue would.  Levels are named short (``block``, ``subblock``,
``host``, ``hostname``, ``nodepool``) and map to GKE's node labels (``gpu_batch_policy.facts.tas.levels``).
Under ``scheduler: kai`` the same request becomes KAI's annotations on its own Topology, whose
levels carry the short names as aliases (:meth:`TopologyRequestConfig.kai_annotations`).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from stacks.base import ConfigModel, PositiveInt
from stacks.quantity import POLICIES_DIR

assert POLICIES_DIR

from gpu_batch_policy.facts.kai import topology as kai  # noqa: E402
from gpu_batch_policy.facts.tas import annotations as tas  # noqa: E402
from gpu_batch_policy.facts.tas.levels import LEVEL_NAMES  # noqa: E402

LevelName = Literal["block", "subblock", "host", "hostname", "nodepool"]


class TopologyRequestConfig(ConfigModel):
    """Where Kueue places one pod group: all pods in one domain of ``level`` (required or preferred),
    or anywhere (unconstrained); optionally in slices of ``sliceSize`` pods per ``sliceLevel`` domain."""

    mode: Literal["required", "preferred", "unconstrained"] = Field(
        description="required: never admitted unless one domain holds the group; preferred: the "
        "tightest level that fits; unconstrained: any free nodes of the TAS flavor."
    )
    level: LevelName | None = Field(
        None, description="block, subblock, host, hostname or nodepool (A4X); not with unconstrained."
    )
    slice_level: LevelName | None = Field(
        None,
        description="Each slice of sliceSize pods lands in one domain of this level (at or below level).",
    )
    slice_size: PositiveInt | None = Field(None, description="Pods per slice; with sliceLevel only.")

    def annotations(self) -> dict[str, str]:
        """The Kueue pod-set annotations this request writes on the pod template."""
        notes: dict[str, str] = {}
        if self.mode == "unconstrained":
            notes[tas.UNCONSTRAINED] = "true"
        elif self.level is not None:
            notes[tas.REQUIRED if self.mode == "required" else tas.PREFERRED] = LEVEL_NAMES[self.level]
        if self.slice_level is not None:
            notes[tas.SLICE_REQUIRED] = LEVEL_NAMES[self.slice_level]
        if self.slice_size is not None:
            notes[tas.SLICE_SIZE] = str(self.slice_size)
        return notes

    def kai_annotations(self, topology: str) -> dict[str, str]:
        """KAI's annotations for this request on Topology ``topology`` (levels by their alias, the
        short name): kai-scheduler v0.17.0 ``ray_grouper.go`` ``getTemplateTopologyConstraints``."""
        if self.mode == "unconstrained" or self.level is None:
            return {}
        return {
            kai.TOPOLOGY: topology,
            kai.REQUIRED if self.mode == "required" else kai.PREFERRED: self.level,
        }
