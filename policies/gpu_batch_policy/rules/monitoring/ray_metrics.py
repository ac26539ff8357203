"""``promql-ray-metric-documented``: a dashboard, alert policy or GMP rule that reads a ``ray_``
series Ray does not document (:mod:`..metrics.ray`).

Where the series come from on a real cluster: KubeRay v1.7.0 gives every Ray container a
``metrics`` port 8080 and labels the pod ``ray.io/is-ray-node: yes``; the stack's
ClusterPodMonitoring ``ray-pods`` scrapes that port (components/monitoring.py), and Ray's metrics
agent serves the system metrics there.  A panel on a name outside Ray's table reads nothing
unless a Ray library or the application exports that name -- which the pack cannot see, so the
rule is advisory (a risk, not "cannot work"), and a stack can raise it in its policy config.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import EnforcementLevel, Policy

from ...facts.metrics.ray import ray_undocumented
from ...facts.model import StackModel
from ..kit.builders import stack_policy
from ..kit.report import Reporter
from .queries import series_read


def check_ray_metric_documented(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    for res, where, series in series_read(model, reporter):
        problem = ray_undocumented(series)
        if problem is not None:
            reporter.violation(
                res,
                f"{where} reads {problem}",
                "use a documented Ray system metric (policies/gpu_batch_policy/facts/metrics/ray.py lists "
                "them), or make sure the workload exports this one",
            )


POLICIES: list[Policy] = [
    stack_policy(
        "promql-ray-metric-documented",
        "A ray_ series a dashboard, alert or GMP rule reads is one of Ray's documented system metrics.",
        check_ray_metric_documented,
        enforcement_level=EnforcementLevel.ADVISORY,
    ),
]
