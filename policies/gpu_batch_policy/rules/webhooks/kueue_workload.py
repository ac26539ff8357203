"""Kueue v0.19.2's Workload webhook: what it refuses in a Workload the stack declares.

A stack declares Workloads directly for prebuilt workloads (``kueue.x-k8s.io/prebuilt-workload-name``)
or to queue something Kueue has no integration for.  Source: kubernetes-sigs/kueue v0.19.2
``pkg/webhooks/workload_webhook.go`` ``ValidateWorkload``:

* at most one pod set uses ``minCount`` ("at most one podSet can use minCount"), and none does on
  an elastic workload (annotation ``kueue.x-k8s.io/elastic-job: "true"`` with the
  ``ElasticJobsViaWorkloadSlices`` gate, on by default);
* ``validatePodSet``: template labels are valid labels and annotation keys qualified names (gate
  ``WorkloadValidationForPodSetMetadata``, Beta, on by default in 0.19); no container, init
  container or pod-level ``resources`` names ``pods`` ("the key is reserved for internal kueue
  use") and none is negative (gate ``WorkloadValidateResourcesAreNonNegative``, on by default);
* ``validateTASSliceSize`` (gate ``TASValidateWorkloadSliceSize``, on by default):
  ``podSetSliceSize`` > 0 and set exactly when ``podSetSliceRequiredTopology`` is; each
  ``podsetSliceRequiredTopologyConstraints`` size > 0.

Gates: ``pkg/features/kube_features.go`` L935-945.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import Policy

from ...facts.demand import CannotTellError
from ...facts.model import StackModel
from ...primitives.k8s_names import qualified_name_error
from ...primitives.tokens import KUEUE_GROUP
from ...primitives.values import as_int, dig, quantity, unknowns_in
from ..kit.builders import stack_policy
from ..kit.report import Reporter
from .kueue_objects import label_problems
from .kueue_scope import ELASTIC_GATE, gate_off

ELASTIC_JOB_ANNOTATION = "kueue.x-k8s.io/elastic-job"
RESERVED_RESOURCE = "pods"


def _resource_problems(resources: Any, path: str) -> list[str]:
    out: list[str] = []
    for name, raw in (resources if isinstance(resources, dict) else {}).items():
        if name == RESERVED_RESOURCE:
            out.append(f"{path} names '{RESERVED_RESOURCE}', which Kueue reserves for its own use")
        amount = quantity(raw)
        if amount.value is not None and amount.value < 0:
            out.append(f"{path}.{name} is negative ({amount})")
    return out


def _pod_set_problems(pod_set: Any, path: str) -> list[str]:
    template = dig(pod_set, "template")
    out = label_problems(dig(template, "metadata", "labels"), f"{path}.template.metadata.labels")
    annotations = dig(template, "metadata", "annotations")
    for key in annotations if isinstance(annotations, dict) else {}:
        error = qualified_name_error(str(key))
        if error is not None:
            out.append(f"{path}.template.metadata.annotations has key '{key}', which {error}")
    for kind in ("initContainers", "containers"):
        containers = dig(template, "spec", kind)
        for index, container in enumerate(containers if isinstance(containers, list) else []):
            for part in ("requests", "limits"):
                where = f"{path}.template.spec.{kind}[{index}].resources.{part}"
                out += _resource_problems(dig(container, "resources", part), where)
    for part in ("requests", "limits"):
        out += _resource_problems(
            dig(template, "spec", "resources", part), f"{path}.template.spec.resources.{part}"
        )
    request = dig(pod_set, "topologyRequest")
    required = dig(request, "podSetSliceRequiredTopology")
    size = as_int(dig(request, "podSetSliceSize"))
    if required is not None and size is None:
        out.append(f"{path}.topologyRequest sets podSetSliceRequiredTopology without podSetSliceSize")
    elif required is not None and isinstance(size, int) and size <= 0:
        out.append(f"{path}.topologyRequest.podSetSliceSize is {size}; it must be greater than 0")
    elif required is None and size is not None:
        out.append(f"{path}.topologyRequest sets podSetSliceSize without podSetSliceRequiredTopology")
    constraints = dig(request, "podsetSliceRequiredTopologyConstraints")
    for index, constraint in enumerate(constraints if isinstance(constraints, list) else []):
        layer = as_int(dig(constraint, "size"))
        if isinstance(layer, int) and layer <= 0:
            out.append(
                f"{path}.topologyRequest.podsetSliceRequiredTopologyConstraints[{index}].size is {layer}"
            )
    return out


def check_workload_webhook(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    for obj in model.kube_objects(KUEUE_GROUP, "Workload"):
        pod_sets = dig(obj.spec, "podSets")
        if unknowns_in(pod_sets) or not obj.annotations_known:
            reporter.cannot_check(obj, "spec.podSets or metadata.annotations")
            continue
        items = pod_sets if isinstance(pod_sets, list) else []
        try:
            problems = [p for i, ps in enumerate(items) for p in _pod_set_problems(ps, f"spec.podSets[{i}]")]
        except CannotTellError as why:
            reporter.cannot_check(obj, why.what)
            continue
        variable = sum(1 for ps in items if dig(ps, "minCount") is not None)
        if variable > 1:
            problems.append(f"{variable} pod sets use minCount; at most one may")
        elastic = obj.annotations.get(ELASTIC_JOB_ANNOTATION) == "true" and not gate_off(model, ELASTIC_GATE)
        if variable and elastic:
            problems.append("uses minCount (partial admission) on an elastic workload")
        for problem in problems:
            reporter.violation(
                obj,
                f"{problem}; Kueue's Workload webhook refuses it",
                "correct the Workload as the message says",
            )


POLICIES: list[Policy] = [
    stack_policy(
        "kueue-workload-webhook",
        "A declared Kueue Workload passes Kueue's Workload webhook: one minCount pod set at most (none when "
        "elastic), valid template metadata, no 'pods' or negative resources, consistent TAS slice sizes.",
        check_workload_webhook,
    ),
]
