"""Kueue's Ray webhooks (RayJob, RayCluster, RayService): what they refuse, before deploy (issue 11 item 5).

* **Kueue's** (kubernetes-sigs/kueue v0.19.2), for Ray workloads Kueue manages -- those labelled
  ``kueue.x-k8s.io/queue-name`` or any, when a Kueue release sets ``manageJobsWithoutQueueName``
  (``rayjob_webhook.go`` L111, ``raycluster_webhook.go`` L137, ``rayservice_webhook.go`` L139):

  - RayJob: ``clusterSelector`` together with ``rayClusterSpec`` is invalid ("a kueue managed job
    should not use an existing cluster", ``pkg/controller/jobs/rayjob/rayjob_webhook.go`` L118-121);
    neither of them is invalid (L130-133); ``shutdownAfterJobFinishes`` must be true ("a kueue
    managed job should delete the cluster after finishing", L138-140).  A RayJob with only a
    clusterSelector is not managed by Kueue at all (L124-127), so nothing else applies to it.
  - every Ray kind: ``enableInTreeAutoscaling`` only as an elastic job, i.e. with annotation
    ``kueue.x-k8s.io/elastic-job: "true"`` and the ``ElasticJobsViaWorkloadSlices`` gate (Beta,
    on by default since 0.18: ``pkg/features/kube_features.go`` L712-715;
    ``pkg/workloadslicing/workloadslicing.go`` L62-67; ``pkg/controller/jobs/raycluster/common.go``
    L301-311 and ``raycluster_webhook.go`` L141-155); at most ``MaxPodSets`` = 18 pod sets, the
    head plus one per worker group (``common.go`` L187-189, L313-316;
    ``pkg/controller/jobframework/constants.go`` L21); no worker group named ``head``, which is
    reserved for the head pod set (``common.go`` L318-326).

  Kueue's webhook runs only where Kueue is installed: with no Kueue release, no Kueue object and
  no ``{kind: Release, name: kueue}`` in ``externalObjects``, these findings are advisory "cannot
  check: not in this stack" -- unless ``closedWorld`` says the stack is the whole platform.

KubeRay's own validation lives in :mod:`.kuberay`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import Policy

from ...facts.installs import kueue_installed, manages_jobs_without_queue_name
from ...facts.model import RayWorkload, StackModel
from ...facts.model.kueue import QUEUE_NAME_LABEL
from ...facts.open_world import World, world_schema
from ...primitives.values import Unknown, as_bool, dig
from ..kit.builders import stack_policy
from ..kit.report import Reporter
from .kueue_scope import ELASTIC_GATE, gate_off

ELASTIC_JOB_ANNOTATION = "kueue.x-k8s.io/elastic-job"
MAX_POD_SETS = 18
HEAD_POD_SET = "head"


def _kueue_problems(model: StackModel, workload: RayWorkload) -> list[tuple[str, str]]:
    """(problem, fix) for every rule of Kueue's Ray webhooks this workload breaks."""
    spec = workload.obj.spec
    problems: list[tuple[str, str]] = []
    if workload.kind == "RayJob":
        selector = dig(spec, "clusterSelector")
        has_selector = isinstance(selector, dict) and bool(selector)
        has_cluster = isinstance(dig(spec, "rayClusterSpec"), dict)
        if has_selector and has_cluster:
            return [
                (
                    "sets both spec.clusterSelector and spec.rayClusterSpec; Kueue's webhook rejects it "
                    "('a kueue managed job should not use an existing cluster')",
                    "drop spec.clusterSelector (Kueue creates and sizes the cluster) or drop the queue label",
                )
            ]
        if has_selector:
            return []  # runs on an existing cluster: not managed by Kueue
        if not has_cluster:
            return [
                (
                    "has neither spec.rayClusterSpec nor spec.clusterSelector; Kueue's webhook rejects it "
                    "('rayClusterSpec is required for Kueue-managed jobs that don't use clusterSelector')",
                    "add spec.rayClusterSpec",
                )
            ]
        shutdown = as_bool(dig(spec, "shutdownAfterJobFinishes"))
        if shutdown is not True and not isinstance(shutdown, Unknown):
            problems.append(
                (
                    f"has spec.shutdownAfterJobFinishes={shutdown if shutdown is not None else 'unset (false)'}; "
                    "Kueue's webhook rejects it ('a kueue managed job should delete the cluster after "
                    "finishing'), since a finished job's cluster would keep holding the queue's quota",
                    "set spec.shutdownAfterJobFinishes: true",
                )
            )
    cluster = workload.cluster_spec if isinstance(workload.cluster_spec, dict) else {}
    autoscaling = as_bool(dig(cluster, "enableInTreeAutoscaling"))
    elastic = workload.obj.annotations.get(ELASTIC_JOB_ANNOTATION) == "true" and not gate_off(
        model, ELASTIC_GATE
    )
    if autoscaling is True and not elastic:
        problems.append(
            (
                "enables in-tree autoscaling without being an elastic job; Kueue's webhook rejects it "
                "(a Kueue-managed Ray cluster may autoscale only through workload slices)",
                f'add annotation {ELASTIC_JOB_ANNOTATION}: "true" (with the {ELASTIC_GATE} gate on, the '
                "0.19 default) or set enableInTreeAutoscaling: false",
            )
        )
    if workload.workers_known and len(workload.workers) + 1 > MAX_POD_SETS:
        problems.append(
            (
                f"has {len(workload.workers)} worker groups, i.e. {len(workload.workers) + 1} pod sets; Kueue "
                f"accepts at most {MAX_POD_SETS} per workload",
                f"merge worker groups to at most {MAX_POD_SETS - 1}",
            )
        )
    problems.extend(
        (
            f"names worker group {group.path} '{HEAD_POD_SET}', which Kueue reserves for the head pod set "
            "and rejects",
            "rename the worker group",
        )
        for group in workload.workers
        if group.name == HEAD_POD_SET
    )
    return problems


def check_kueue_ray_webhook(model: StackModel, reporter: Reporter, config: Mapping[str, Any]) -> None:
    world = World.from_config(config)
    manage_all = manages_jobs_without_queue_name(model)
    installed = world.closed or kueue_installed(model, world)
    for workload in model.ray_workloads():
        obj = workload.obj
        if not obj.labels_known:
            reporter.cannot_check(workload, "metadata.labels")
            continue
        label = obj.labels.get(QUEUE_NAME_LABEL)
        if isinstance(label, Unknown):
            reporter.cannot_check(workload, f"label {QUEUE_NAME_LABEL}")
            continue
        if not label and not manage_all:
            continue
        if isinstance(workload.cluster_spec, Unknown):
            reporter.cannot_check(workload, "the Ray cluster spec")
            continue
        for problem, fix in _kueue_problems(model, workload):
            if installed:
                reporter.violation(workload, problem, fix)
            else:
                reporter.not_in_stack(
                    workload,
                    f'Kueue\'s webhook (no Kueue install here; list {{"kind": "Release", "name": "kueue"}} '
                    f"under externalObjects if another stack installs it) would reject it: {problem}",
                )


POLICIES: list[Policy] = [
    stack_policy(
        "kueue-ray-webhook",
        "A Kueue-managed RayJob/RayCluster/RayService passes Kueue's webhook: no clusterSelector with "
        "rayClusterSpec, shutdownAfterJobFinishes, autoscaling only as an elastic job, <= 18 pod sets, "
        "no worker group named 'head'.",
        check_kueue_ray_webhook,
        config_schema=world_schema(),
    ),
]
