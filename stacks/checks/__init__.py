"""Cross-key checks of the typed stack config: rules GKE, Kueue, KAI or the operators would enforce
only after a long ``pulumi up`` (or never), run on the config before any resource exists.  One
module per area; ``queue_layer`` gathers the queue layer's."""

from collections.abc import Iterator

from stacks.checks.access import check_access
from stacks.checks.cluster import check_cluster, check_pools
from stacks.checks.gpu_stack import check_gpu_stacks
from stacks.checks.gpudirect import check_compact_placement, check_gpudirect, check_gpudirect_workloads
from stacks.checks.maintenance import check_maintenance
from stacks.checks.monitoring import check_monitoring
from stacks.checks.multikueue import check_multikueue
from stacks.checks.network import check_network
from stacks.checks.queue_layer import check_queue_layer
from stacks.checks.scheduler import check_schedulers
from stacks.checks.topology import check_topology
from stacks.config import StackConfig
from stacks.errors import ConfigIssue


def semantic_issues(config: StackConfig) -> Iterator[ConfigIssue]:
    """Rules across keys, after every key has the right shape: per cluster under MultiKueue."""
    yield from check_monitoring(config)
    if config.multi_kueue is not None:
        yield from check_multikueue(config, single_cluster_issues)
    else:
        yield from single_cluster_issues(config)


def single_cluster_issues(config: StackConfig) -> Iterator[ConfigIssue]:
    """The checks of one cluster's config (a whole stack, or one MultiKueue cluster of it)."""
    yield from check_cluster(config.cluster, config.gpu_pools)
    yield from check_pools(config.gpu_pools)
    yield from check_gpu_stacks(config.cluster, config.gpu_pools)
    yield from check_network(config.cluster)
    yield from check_gpudirect(config.cluster, config.gpu_pools)
    yield from check_gpudirect_workloads(config)
    yield from check_compact_placement(config.cluster, config.gpu_pools)
    yield from check_topology(config)
    yield from check_maintenance(config.cluster.maintenance)
    yield from check_schedulers(config.kueue, config.kai, config.kuberay)
    yield from check_queue_layer(config)
    yield from check_access(config)
