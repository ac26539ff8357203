"""The quota and gang rules Ray workloads get, for every workload kind (issue 11 item 4).

Pod sets come from :mod:`workload_kinds` (Kueue's Workloads and KAI's PodGroup minimums, counted
per family as the schedulers do); the judging reuses the helpers the Ray rules use:

* ``workload-pod-fits-node``: each pod's GPUs fit one node of a pool it may reach
  (``capacity.pods_fit_node``);
* ``workload-gang-fits-queue``: the Kueue Workload fits what its ClusterQueue can ever get
  (nominal + borrowable) and one queued-provisioning pool (``capacity.gang_vs_quota`` /
  ``gang_vs_queued_pool``), at the smallest size Kueue may admit it: a Job with
  ``kueue.x-k8s.io/job-min-parallelism`` at that many pods while PartialAdmission is on
  (``kueue_install.admitted_at_least``);
* ``workload-resources-covered``: every resource a Kueue Workload requests is covered by a
  resource group of its ClusterQueue -- Kueue's flavor assigner fails a pod set that requests an
  uncovered resource ("resource %s unavailable in ClusterQueue", kubernetes-sigs/kueue v0.19.2
  ``pkg/scheduler/flavorassigner/flavorassigner.go`` L1071), so it never admits;
* ``kai-workload-gang-within-limits``: the KAI gang fits ``limit`` on its leaf queue and every
  ancestor (``kai.gang_vs_limit_chain``), explicit ``scheduling.run.ai`` PodGroups included
  (``kai.pod_groups``: ``minMember`` / leaf subgroups' ``minMember`` of their declared pods);
* ``kai-workload-nonpreemptible-within-quota``: a non-preemptible gang fits ``quota`` on its leaf
  and every ancestor (``kai.nonpreemptible_vs_quota``; priority as ``kai.priority.object_preemptibility``).

Ray workloads keep their own rules (``gpu-pod-fits-a-node``, ``kueue-gang-fits-queue``,
``kai-gang-within-limits``); here they take part only in ``workload-resources-covered``, which
they lacked.  Which ClusterQueue: the ``kueue.x-k8s.io/queue-name`` label of the object Kueue
reads it from (the job object; a pod group's first pod).  Which KAI queue: ``kai.scheduler/queue``
on the owner, else on a pod template, else ``project`` (KAI's ``CalcPodGroupQueue``,
``workload_kinds.queue_names.kai_queue_name``).
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from pulumi_policy import Policy, PolicyConfigSchema

from ...facts.demand import CannotTellError, pod_request
from ...facts.kai.pod_groups import explicit_pod_groups, gang_pod_sets
from ...facts.kai.priority import object_preemptibility
from ...facts.kai.tree import QueueTree
from ...facts.kueue_capacity import InvalidQuotaError
from ...facts.kueue_install import (
    INSTALL_PROPERTIES,
    admitted_at_least,
    feature_gate,
    kueue_install,
    requested,
)
from ...facts.model import RayWorkload, StackModel
from ...facts.model.base import KubeObject, ObjectView
from ...facts.model.kueue import QUEUE_NAME_LABEL
from ...facts.model.workloads import KAI_QUEUE_LABEL
from ...facts.workload_kinds import Counted, kai_gangs, kueue_gangs
from ...facts.workload_kinds.queue_names import kai_queue_name
from ...facts.workload_kinds.registry import BY_KIND
from ...primitives.tokens import KUEUE_GROUP
from ...primitives.values import Unknown, dig
from ..kai.queues import gang_vs_limit_chain, nonpreemptible_vs_quota, queue_chain
from ..kit.builders import stack_policy
from ..kit.report import Reporter
from .capacity import gang_vs_queued_pool, gang_vs_quota, pods_fit_node, workload_queue


def _view(counted: Counted) -> ObjectView:
    subject = counted.subject
    return subject if isinstance(subject, ObjectView) else ObjectView(counted.obj)


def _non_ray(items: list[Counted]) -> list[Counted]:
    return [c for c in items if not isinstance(c.subject, RayWorkload)]


def check_pods_fit_node(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    for counted in _non_ray(kueue_gangs(model)):
        if counted.error is not None:
            continue  # workload-gang-fits-queue reports what cannot be counted
        for gang in counted.gangs:
            pods_fit_node(model, _view(counted), [p for p in gang.pod_sets if p.count > 0], reporter)


def unregistered_queued(model: StackModel) -> list[KubeObject]:
    """Objects labelled for a LocalQueue whose kind is no integration Kueue registers
    (``workload_kinds.registry``): only an ``integrations.externalFrameworks`` controller could
    queue them, with pod sets the pack cannot know.  Kueue's own objects are not workloads."""
    return [
        obj
        for obj in model.objects
        if (obj.group, obj.kind) not in BY_KIND
        and (obj.group, obj.kind) != ("batch", "CronJob")  # its Jobs are (workload_kinds.cronjob)
        and obj.group != KUEUE_GROUP
        and obj.labels.get(QUEUE_NAME_LABEL) is not None
    ]


def check_gang_fits_queue(model: StackModel, reporter: Reporter, config: Mapping[str, Any]) -> None:
    install = kueue_install(model, config)
    for obj in unregistered_queued(model):
        reporter.cannot_check(
            obj,
            f"its kind {obj.group or 'core'}/{obj.kind} is labelled for a LocalQueue but is no integration Kueue "
            "registers: only an external framework (integrations.externalFrameworks) could queue it, with pod "
            "sets the pack cannot count, so its quota and gang are not checked",
        )
    for counted in _non_ray(kueue_gangs(model)):
        view = _view(counted)
        if not install.manages(counted.obj):
            continue  # that integration is off: Kueue never queues this kind
        cq = workload_queue(model, view, reporter)
        if cq is None:
            continue
        if counted.error is not None:
            reporter.cannot_check(view, counted.error)
            continue
        for gang in counted.gangs:
            pod_sets = admitted_at_least(model, config, gang.pod_sets)
            try:
                gang_vs_quota(model, view, cq, pod_sets, reporter)
                gang_vs_queued_pool(model, view, cq, pod_sets, reporter)
            except CannotTellError as why:
                reporter.cannot_check(view, why.what)
            except InvalidQuotaError:
                continue  # kueue-quota-quantities reports invalid quantities


def ignores_undeclared(model: StackModel, config: Mapping[str, Any]) -> bool:
    """Kueue's ``resources.quotaCheckStrategy: IgnoreUndeclared`` (with the QuotaCheckStrategy gate,
    beta and on since 0.19) checks only the resources a ClusterQueue covers; the default,
    ``BlockUndeclared``, checks every requested resource (kubernetes-sigs/kueue v0.19.2
    ``apis/config/v1beta2/configuration_types.go`` ``QuotaCheckStrategy``;
    ``pkg/scheduler/flavorassigner/flavorassigner.go`` ``IgnoreUndeclaredResources``)."""
    install = kueue_install(model, config)
    strategy = next(
        (
            dig(c, "resources", "quotaCheckStrategy")
            for c in install.configs
            if dig(c, "resources", "quotaCheckStrategy")
        ),
        None,
    )
    return strategy == "IgnoreUndeclared" and feature_gate(model, config, "QuotaCheckStrategy") is True


def check_resources_covered(model: StackModel, reporter: Reporter, config: Mapping[str, Any]) -> None:
    """Kueue's resource exclusions and transformations come from its install
    (:mod:`kueue_install`): the stack's release, the ``kueueConfiguration`` property, or Kueue
    0.19.2's defaults (no exclusions, no transformations), which the finding then names.  Under
    assumed defaults, a ClusterQueue that quotas a resource the workload never requests looks
    like the target of a transformation the stack does not show (Kueue's HAMi example), so that
    case stays "not in this stack" rather than a guess."""
    install = kueue_install(model, config)
    if ignores_undeclared(model, config):
        return
    for counted in kueue_gangs(model):
        view = _view(counted)
        if not install.manages(counted.obj):
            continue
        cq = workload_queue(model, view, reporter)
        if cq is None or counted.error is not None:
            continue
        if install.unknown is not None:
            reporter.cannot_check(view, install.unknown)
            continue
        covered: set[str] = set()
        for group in cq.resource_groups:
            for resource in group.covered_resources:
                if isinstance(resource, Unknown):
                    reporter.cannot_check(view, f"{cq.describe()} coveredResources")
                    return
                covered.add(resource)
        for gang in counted.gangs:
            missing = []
            for name in sorted(install.as_kueue_sees(requested(gang.pod_sets)) - covered):
                try:
                    amount = sum(
                        (pod_request(p.template, name) for p in gang.pod_sets if p.count), Decimal(0)
                    )
                except CannotTellError as why:
                    reporter.cannot_check(view, why.what)
                    continue
                if amount > 0:
                    missing.append(name)
            outputs = transformation_targets(covered - requested(gang.pod_sets))
            if missing and install.assumption and outputs:
                # The queue quotas what the workload never requests itself: the outputs of a
                # resource transformation (Kueue ResourceTransformation, e.g. HAMi's gpucores ->
                # total-gpucores) of an install this stack does not show.
                reporter.not_in_stack(
                    view,
                    f"whether Kueue turns {', '.join(missing)} into what {cq.describe()} covers "
                    f"({', '.join(sorted(outputs))} is quota'd but not requested "
                    f"directly, as a resource transformation's output would be); state the install's "
                    f"Configuration in kueueConfiguration to judge it",
                )
            elif missing:
                reporter.violation(
                    view,
                    f"requests {', '.join(missing)}, which no resource group of {cq.describe()} covers "
                    f"(covered: {', '.join(sorted(covered)) or 'none'}); Kueue cannot assign a flavor "
                    "('resource ... unavailable in ClusterQueue') and never admits it" + install.suffix(),
                    f"add {', '.join(missing)} to a resource group's coveredResources (with quota in "
                    "every flavor), or drop the request",
                )


def transformation_targets(unrequested: set[str]) -> set[str]:
    """Covered resources a workload does not request that may be a resource transformation's
    outputs: extended resources (a domain-prefixed name, ``example.com/credits``).  ``pods`` is
    charged by Kueue itself for every pod when covered (``flavorassigner.go`` ``assignFlavors``),
    and ``cpu``/``memory``/``ephemeral-storage`` are a pod's own resources, which a queue covers
    for what pods request directly, so none of these hints at a transformation."""
    return {r for r in unrequested if "/" in r}


def _kai_label(counted: Counted) -> str | Unknown | None:
    templates = [p.template for g in counted.gangs for p in g.pod_sets]
    return kai_queue_name(counted.obj, templates)


def check_kai_nonpreemptible_quota(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    """A non-preemptible workload of any kind fits ``quota`` on its leaf queue and every ancestor
    (KAI runs it only within quota: ``rules.kai.nonpreemptible_vs_quota``).  A Deployment with no
    priority class is ``inference`` (125) under KAI's Deployment grouper, so it needs quota."""
    tree = QueueTree(model)
    for counted in _non_ray(kai_gangs(model)):
        view = _view(counted)
        label = _kai_label(counted)
        if label is None or isinstance(label, Unknown):
            continue  # kai-workload-gang-within-limits reports an unknown label
        chain = queue_chain(tree, label)
        if chain is None:
            continue
        if counted.error is not None:
            continue  # kai-workload-gang-within-limits reports what cannot be counted
        templates = [p.template for g in counted.gangs for p in g.pod_sets]
        verdict = object_preemptibility(counted.obj, templates, model)
        if verdict.non_preemptible is None:
            reporter.cannot_check(view, verdict.why)
        elif verdict.non_preemptible:
            for gang in counted.gangs:
                nonpreemptible_vs_quota(chain, view, verdict.why, gang.pod_sets, reporter)


def check_kai_gang_limits(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    tree = QueueTree(model)
    for counted in _non_ray(kai_gangs(model)):
        view = _view(counted)
        label = _kai_label(counted)
        if label is None:
            continue
        if isinstance(label, Unknown):
            reporter.cannot_check(view, f"label {KAI_QUEUE_LABEL}")
            continue
        if counted.error is not None:
            reporter.cannot_check(view, f"gang size: {counted.error}")
            continue
        for gang in counted.gangs:
            gang_vs_limit_chain(tree, view, label, gang.pod_sets, reporter)
    for group in explicit_pod_groups(model):
        if group.queue is None or isinstance(group.queue, Unknown):
            continue  # kai-workload-leaf-queue reports an unknown queue
        try:
            pod_sets = gang_pod_sets(group)
        except CannotTellError as why:
            reporter.cannot_check(group, f"gang size: {why.what}")
            continue
        if pod_sets:
            gang_vs_limit_chain(tree, group, group.queue, pod_sets, reporter)


POLICIES: list[Policy] = [
    stack_policy(
        "workload-pod-fits-node",
        "Each pod of a Job, JobSet, Pod, PyTorchJob, LeaderWorkerSet, Deployment or StatefulSet requests "
        "at most the GPUs of one node of a pool it may reach.",
        check_pods_fit_node,
    ),
    stack_policy(
        "workload-gang-fits-queue",
        "A Kueue Workload of any kind fits what its ClusterQueue can ever get (nominal + borrowable) and one "
        "queued-provisioning pool.",
        check_gang_fits_queue,
        config_schema=PolicyConfigSchema(properties=INSTALL_PROPERTIES),
    ),
    stack_policy(
        "workload-resources-covered",
        "Every resource a Kueue-queued workload requests is covered by a resource group of its ClusterQueue.",
        check_resources_covered,
        config_schema=PolicyConfigSchema(properties=INSTALL_PROPERTIES),
    ),
    stack_policy(
        "kai-workload-gang-within-limits",
        "A KAI gang of any kind (its PodGroup minMember) fits the limit of its leaf queue and every ancestor.",
        check_kai_gang_limits,
    ),
    stack_policy(
        "kai-workload-nonpreemptible-within-quota",
        "A non-preemptible KAI workload of any kind (priority >= 100; a Deployment defaults to inference) fits "
        "the quota of its leaf queue and every ancestor, since KAI never runs it over quota.",
        check_kai_nonpreemptible_quota,
    ),
]
