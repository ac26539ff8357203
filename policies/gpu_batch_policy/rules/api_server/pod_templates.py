"""Every pod template in every kind passes the core API's pod validation (issue 42 item 2).

* **pod-template-api-validation** (mandatory): a pod template, in any kind the walker knows
  (:func:`...facts.workload_kinds.templates.every_template`: Pods, Jobs, CronJobs, Deployments,
  StatefulSets, ReplicaSets, DaemonSets, JobSets, LeaderWorkerSets, TrainJobs and their training
  runtimes, Kubeflow jobs and MPIJobs, Ray clusters, jobs and services, AppWrappers, Spark
  applications), that kubernetes/kubernetes v1.37.2 ``pkg/apis/core/validation/validation.go``
  (``ValidatePodTemplateSpec`` -> ``ValidatePodSpec``) refuses, or whose ``restartPolicy`` its
  owner's validation refuses.  The checks and their upstream functions:
  :mod:`...facts.schema.pod_spec`.  A built-in controller is refused at create; a custom
  resource is accepted, and then every Job or Pod its controller creates from the template is
  refused: either way the workload can never run.

What the pack already judged stays where it was: a quantity the grammar refuses is
``container-resource-quantities``' (this rule skips it), a field or type the schema refuses is
``builtin-object-schema``'s or ``custom-resource-schema``'s.  KubeRay's default submitter pod is
KubeRay's, not the program's, and is not judged here; a TrainJob's template unchanged from its
training runtime is judged once, on the runtime.  Templates unknown until apply are
"cannot check" with the reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import Policy

from ...facts.model import StackModel
from ...facts.schema.pod_spec import validate_pod_template
from ...facts.workload_kinds.templates import Skipped, every_template
from ...primitives.values import Unknown
from ..kit.builders import stack_policy
from ..kit.report import Reporter


def _joined(base: str, path: str) -> str:
    return f"{base}.{path}" if base and path else base or path


def check_pod_templates(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    for found in every_template(model):
        if isinstance(found, Skipped):
            reporter.cannot_check(found.owner, f"pod templates not validated: {found.why}")
            continue
        if found.default or found.inherited:
            continue
        raw = found.template.raw
        if isinstance(raw, Unknown):
            reporter.cannot_check(found.owner, f"pod template {found.name} is unknown until apply")
            continue
        named = "" if found.name == found.template.path else f"pod template {found.name}: "
        for violation in validate_pod_template(raw, found.makes, found.synthesized, found.restart_default):
            reporter.violation(
                found.owner,
                f"{named}{_joined(found.template.path, violation.path)}: "
                f"{violation.message}; the API server refuses every pod of it (kubernetes v1.37.2 "
                f"{violation.function})",
                "fix the field as the message says; `kubectl apply --dry-run=server` of a Pod with "
                "this template shows the same error",
            )


POLICIES: list[Policy] = [
    stack_policy(
        "pod-template-api-validation",
        "Every pod template of every workload kind passes the API server's pod validation (resources, "
        "containers, ports, volumes and mounts, probes, tolerations, affinity, security context).",
        check_pod_templates,
    ),
]
