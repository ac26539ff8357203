"""One GPU type per ClusterQueue, unless the queue opts in (issue 21 item 7).

Kueue v0.19.2 tries a resource group's flavors in order and leaves one for the next whenever the
workload does not fit it and nothing there can be preempted, whatever ``flavorFungibility`` says
(``pkg/scheduler/flavorassigner/flavorassigner.go`` ``shouldTryNextFlavor``); with the default
``whenCanPreempt: TryNextFlavor`` it even skips a flavor where it could preempt.  A group listing
``l4`` then ``h100`` therefore admits a 1-GPU job that does not fit the L4 quota on H100, and the
queued-provisioning check buys a whole ``a3-highgpu-8g`` for it.  Splitting the group is not an
option: Kueue's webhook refuses a resource covered by two groups of one queue
(``pkg/webhooks/clusterqueue_webhook.go`` ``validateResourceGroups``), so each GPU type needs a
ClusterQueue of its own, and teams pick the type by LocalQueue (``teams[].gpuQueues``).

The policy pack's ``kueue-flavors-mix-accelerator-types`` judges the planned objects of any
program with the same decision (``gpu_batch_policy.primitives.accelerator_mix``); a queue with ``mixAcceleratorTypes: true`` carries the annotation that rule
reads (``components.kueue_queues.ACCELERATOR_MIXING_ANNOTATION``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from components.gpu_catalog import gpu_machine
from stacks.checks.queue import QUEUES_KEY
from stacks.config.cluster import GpuPoolConfig
from stacks.config.queues import KueueQueuesConfig
from stacks.errors import ConfigIssue
from stacks.quantity import POLICIES_DIR

assert POLICIES_DIR  # importing stacks.quantity put the pack's package on sys.path

from gpu_batch_policy.facts.model.gke import ACCELERATOR_LABEL  # noqa: E402
from gpu_batch_policy.primitives.accelerator_mix import mixes_accelerator_types  # noqa: E402


def flavor_accelerators(queues: KueueQueuesConfig, gpu_pools: list[GpuPoolConfig]) -> dict[str, str]:
    """Flavor name -> the GPU type its nodes carry: its own gke-accelerator label, else its GPU
    pool's machine type (a flavor of the system pool, or of no pool, has none)."""
    pools: dict[str, str] = {}
    for pool in gpu_pools:
        machine = gpu_machine(pool.machine_type)
        if machine is not None:
            pools[pool.name] = machine.accelerator_type
    types: dict[str, str] = {}
    for flavor in queues.resource_flavors:
        named = flavor.node_labels.get(ACCELERATOR_LABEL)
        if named is not None:
            types[flavor.name] = named
        elif flavor.pool is not None and flavor.pool in pools:
            types[flavor.name] = pools[flavor.pool]
    return types


def check_accelerator_mix(
    queues: KueueQueuesConfig, accelerators: Mapping[str, str]
) -> Iterator[ConfigIssue]:
    """``accelerators``: :func:`flavor_accelerators`."""
    for index, cq in enumerate(queues.cluster_queues):
        if cq.mix_accelerator_types:
            continue
        for g_index, group in enumerate(cq.resource_groups):
            typed = [(f.name, accelerators[f.name]) for f in group.flavors if f.name in accelerators]
            if not mixes_accelerator_types([frozenset({t}) for _, t in typed]):
                continue
            yield ConfigIssue(
                f"{QUEUES_KEY}.clusterQueues[{index}].resourceGroups[{g_index}].flavors",
                "flavors of one GPU type: Kueue admits a job that does not fit the first on the next "
                "type; give each GPU type its own ClusterQueue (and teams[].gpuQueues a LocalQueue per "
                f"type), or set {QUEUES_KEY}.clusterQueues[{index}].mixAcceleratorTypes: true",
                ", ".join(f"{name} ({acc})" for name, acc in typed),
            )
