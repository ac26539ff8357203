"""Dynamic Workload Scheduler ("flex-start with queued provisioning") wiring that deploys but misbehaves.

* **A queued pool sets flex-start too.**  GKE's how-to
  (cloud.google.com/kubernetes-engine/docs/how-to/provisioningrequest, "Create a node pool")
  says "you have to add the --flex-start and --enable-queued-provisioning flags"; cluster-toolkit
  (``modules/compute/gke-node-pool``, ``enable_flex_start`` next to ``enable_queued_provisioning``)
  and xpk (``src/xpk/core/capacity.py``: ``--flex-start`` then ``--enable-queued-provisioning``
  for a queued cluster) set both.  A program that leaves ``nodeConfig.flexStart`` unset asks for
  something GKE no longer documents, and its state differs from what GKE reports.
* **A queued-provisioning ProvisioningRequestConfig pins pods to their own nodes.**  Kueue v0.19.2
  ``site/content/en/docs/concepts/admission_check/provisioning_request.md`` ("PodSet updates"):
  ``podSetUpdates.nodeSelector`` "restricts scheduling of the workload's Pods to the newly
  provisioned nodes"; GKE labels those nodes ``autoscaling.gke.io/provisioning-request`` with the
  request's ``ResizeRequestName`` detail, which xpk's ``src/xpk/templates/kueue_config.yaml.j2``
  selects.  Without it, one gang's pods can take nodes created for another gang, which then
  waits (and its nodes are removed 10 minutes after ``Provisioned``).  **Advisory** by default:
  GKE's own queued-provisioning example (cluster-toolkit's and the GKE docs' ``dws-queues.yaml``)
  omits it and works for one gang at a time, so a mandatory level would call the vendor's working
  example broken (issue 11); stacks that run many gangs raise it (``config.prod.json``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import EnforcementLevel, Policy

from ...facts.model import NodePool
from ...facts.model.kueue import ProvisioningRequestConfig
from ...primitives.values import Unknown, dig
from ..kit.builders import resource_policy
from ..kit.report import Reporter

QUEUED_CLASS = "queued-provisioning.gke.io"
REQUEST_LABEL = "autoscaling.gke.io/provisioning-request"
REQUEST_DETAIL = "ResizeRequestName"


def check_queued_pool_flex_start(pool: NodePool, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    if isinstance(pool.queued_provisioning, Unknown):
        reporter.cannot_check(pool, "queuedProvisioning.enabled is unknown until apply")
        return
    if not pool.is_queued:
        return
    if isinstance(pool.flex_start, Unknown):
        reporter.cannot_check(pool, "nodeConfig.flexStart is unknown until apply")
        return
    if pool.flex_start is not True:
        reporter.violation(
            pool,
            "a queued-provisioning pool must also be a flex-start pool (GKE: --enable-queued-provisioning "
            f"--flex-start), but nodeConfig.flexStart is {pool.flex_start}",
            "set `nodeConfig.flexStart: true` on the pool",
        )


def _selects_request(entry: Any) -> bool | None:
    key, detail = dig(entry, "key"), dig(entry, "valueFromProvisioningClassDetail")
    if isinstance(key, Unknown) or isinstance(detail, Unknown):
        return None
    return bool(key == REQUEST_LABEL and detail == REQUEST_DETAIL)


def check_request_node_selector(
    prc: ProvisioningRequestConfig, reporter: Reporter, _config: Mapping[str, Any]
) -> None:
    klass = prc.provisioning_class_name
    if isinstance(klass, Unknown):
        reporter.cannot_check(prc, "spec.provisioningClassName is unknown until apply")
        return
    if klass != QUEUED_CLASS:
        return
    selectors = dig(prc.obj.spec, "podSetUpdates", "nodeSelector")
    if isinstance(selectors, Unknown):
        reporter.cannot_check(prc, "spec.podSetUpdates.nodeSelector is unknown until apply")
        return
    verdicts = [_selects_request(e) for e in selectors] if isinstance(selectors, list) else []
    if any(v is True for v in verdicts):
        return
    if any(v is None for v in verdicts):
        reporter.cannot_check(prc, "a spec.podSetUpdates.nodeSelector entry is unknown until apply")
        return
    reporter.violation(
        prc,
        f"class {QUEUED_CLASS} without a podSetUpdates nodeSelector on {REQUEST_LABEL}, so one gang's pods "
        "can land on nodes GKE provisioned for another gang",
        f"add `podSetUpdates: {{nodeSelector: [{{key: {REQUEST_LABEL}, "
        f"valueFromProvisioningClassDetail: {REQUEST_DETAIL}}}]}}`",
    )


POLICIES: list[Policy] = [
    resource_policy(
        "gke-queued-pool-flex-start",
        "A queued-provisioning GKE node pool must also set flex-start (GKE: --enable-queued-provisioning --flex-start).",
        NodePool,
        check_queued_pool_flex_start,
    ),
    resource_policy(
        "kueue-queued-provisioning-node-selector",
        "A queued-provisioning.gke.io ProvisioningRequestConfig must pin pods to the nodes provisioned for them.",
        ProvisioningRequestConfig,
        check_request_node_selector,
        enforcement_level=EnforcementLevel.ADVISORY,
    ),
]
