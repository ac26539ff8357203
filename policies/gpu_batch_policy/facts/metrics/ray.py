"""Ray's documented system metrics (the ``ray_`` series a Ray node exports).

Source: ray-project/ray ``doc/source/ray-observability/reference/system-metrics.rst``, the
"Ray System Metrics" table ("the officially supported metrics"), read at commit
``07cdf040df3521acfbd4c1d3311fe2e4631a557b`` -- the one version of that file the project's
source index holds.  It is not tied to a release tag: the stack's templates run
``rayproject/ray:2.52.0`` (stacks/workload_templates.py), and no ``releases-2.52.0`` copy of the
page could be read.  That text predates the note docs.ray.io master/latest carry ("Starting with
Ray 2.53+, the ``WorkerId`` label is no longer exported by default"), so it is the pre-2.53 table;
the first rows of docs.ray.io/en/latest and /en/master (_sources/.../system-metrics.rst.txt) agree
with it.  The table gives names and labels, not Prometheus types, so none are recorded here.

Why a miss is only advisory (rules/monitoring_ray.py): the table is the documented set, not an
export registry.  Ray's libraries (Serve, Data, Train) and application metrics
(``ray.util.metrics``) are exported under the same ``ray_`` prefix, and the page itself lists no
``ray_component_rss_mb`` although ray-project/ray#45755 names it.  A name outside the table may
exist; a near-miss of a documented name (``ray_node_gpu_utilization``) is the typical mistake it
catches.
"""

from __future__ import annotations

from typing import Final

PREFIX: Final = "ray_"
SOURCE: Final = (
    "ray-project/ray doc/source/ray-observability/reference/system-metrics.rst @ 07cdf040 "
    '("Ray System Metrics")'
)

RAY_SYSTEM_METRICS: Final[tuple[str, ...]] = (
    "ray_tasks",
    "ray_actors",
    "ray_resources",
    "ray_object_store_memory",
    "ray_placement_groups",
    "ray_memory_manager_worker_eviction_total",
    "ray_node_cpu_utilization",
    "ray_node_cpu_count",
    "ray_node_gpus_utilization",
    "ray_node_disk_usage",
    "ray_node_disk_free",
    "ray_node_disk_write_iops",
    "ray_node_disk_io_write_speed",
    "ray_node_disk_read_iops",
    "ray_node_disk_io_read_speed",
    "ray_node_mem_available",
    "ray_node_mem_shared_bytes",
    "ray_node_mem_used",
    "ray_node_mem_total",
    "ray_component_uss_mb",
    "ray_component_cpu_percentage",
    "ray_node_gram_available",
    "ray_node_gram_used",
    "ray_node_network_received",
    "ray_node_network_sent",
    "ray_node_network_receive_speed",
    "ray_node_network_send_speed",
    "ray_cluster_active_nodes",
    "ray_cluster_failed_nodes",
    "ray_cluster_pending_nodes",
)
_NAMES: Final = frozenset(RAY_SYSTEM_METRICS)


def ray_undocumented(series: str) -> str | None:
    """Why ``series`` may read nothing: a ``ray_`` name outside Ray's documented system metrics
    (None: documented, or not a ``ray_`` series)."""
    if not series.startswith(PREFIX) or series in _NAMES:
        return None
    return (
        f"{series} is not among Ray's documented system metrics ({SOURCE}); it exists only if a Ray "
        "library or the application exports it under that name"
    )
