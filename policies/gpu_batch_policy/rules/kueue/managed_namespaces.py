"""A team's LocalQueue in a namespace Kueue does not manage (issue 27 item 6).

**kueue-localqueue-namespace-managed** (mandatory: the queue cannot work).  Kueue v0.19.2 manages
a job only in a namespace its ``managedJobsNamespaceSelector`` selects -- even a job that names a
LocalQueue, under the ``ManagedJobsNamespaceSelectorAlwaysRespected`` gate (on by default since
v0.15; ``pkg/controller/jobframework/reconciler.go`` ``ReconcileGenericJob`` reads the namespace
and returns without managing the job when the selector does not match; KEP-3589
manage-jobs-selectively).  The job webhooks are scoped by the same selector
(``charts/kueue/templates/webhook/manifests.yaml`` @v0.19.2), so nothing suspends the job
either: it runs at once, outside every quota, while its LocalQueue sits unused.

Judged per namespace holding a LocalQueue, against each Kueue release's selector
(:func:`.webhooks.kueue_scope.webhooks_cover`):

* the selector does not match the namespace's declared labels: violation;
* the namespace is neither created (``Namespace``) nor patched (``NamespacePatch``) by the stack,
  and the selector needs a label the stack never gives it: violation too -- that is the
  ``createNamespace: false`` bypass, which previewed clean before;
* the selector is unknown until apply: "cannot check yet".

A stack with no Kueue release (Kueue installed elsewhere) is not judged: its selector is not in
the stack.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import Policy

from ...facts.model import StackModel
from ...facts.selectors import CORE_GROUP, NAMESPACE_PATCH
from ..kit.builders import stack_policy
from ..kit.report import Reporter
from ..webhooks.kueue_scope import gate_off, webhooks_cover

ALWAYS_RESPECTED_GATE = "ManagedJobsNamespaceSelectorAlwaysRespected"


def check(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    if not model.kueue_releases() or gate_off(model, ALWAYS_RESPECTED_GATE):
        return
    declared = {ns.obj.name for ns in model.namespaces()} | {
        p.name for p in model.kube_objects(CORE_GROUP, NAMESPACE_PATCH)
    }
    first: dict[str, Any] = {}
    for queue in model.local_queues():
        if isinstance(queue.obj.namespace, str):
            first.setdefault(queue.obj.namespace, queue)
    for namespace, queue in sorted(first.items()):
        verdict = webhooks_cover(model, namespace)
        if (
            verdict is None
            and namespace not in declared
            and webhooks_cover(model, namespace, declared_only=True) is False
        ):
            reporter.violation(
                queue,
                f"namespace {namespace} is neither created nor patched by the stack, and Kueue's "
                "managedJobsNamespaceSelector needs a label the stack never gives it: Kueue ignores "
                "the jobs there, labelled or not, and they run outside every quota",
                f"label {namespace} through the stack (a NamespacePatch for a namespace that exists) "
                "with the labels the selector matches",
            )
            continue
        if verdict is None:
            reporter.cannot_check(
                queue, f"whether Kueue manages namespace {namespace} is unknown until apply"
            )
        elif verdict is False:
            reporter.violation(
                queue,
                f"Kueue's managedJobsNamespaceSelector does not select namespace {namespace}: Kueue ignores "
                "the jobs there, labelled or not, and they run outside every quota",
                f"give namespace {namespace} the labels the selector matches, or widen the selector",
            )


POLICIES: list[Policy] = [
    stack_policy(
        "kueue-localqueue-namespace-managed",
        "A namespace holding a LocalQueue is selected by Kueue's managedJobsNamespaceSelector.",
        check,
    ),
]
