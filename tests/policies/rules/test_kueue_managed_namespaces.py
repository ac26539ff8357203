"""A LocalQueue in a namespace Kueue's managedJobsNamespaceSelector does not select (issue 27 #6).

Upstream: kubernetes-sigs/kueue v0.19.2 ``pkg/controller/jobframework/reconciler.go``
``ReconcileGenericJob`` (ManagedJobsNamespaceSelectorAlwaysRespected: a job, labelled or not, in
an unselected namespace is not managed); ``charts/kueue/templates/webhook/manifests.yaml`` (the
job webhooks' namespaceSelector is the same selector).
"""

from __future__ import annotations

from tests.policies.pack_harness import policy as get_policy
from tests.policies.pack_harness import run
from tests.policies.pack_objects import k8s, kueue_release, local_queue, namespace

MANAGED = get_policy("kueue-localqueue-namespace-managed")
SCOPED = "managedJobsNamespaceSelector:\n  matchLabels:\n    gpu-batch/kueue-managed: 'true'\n"
LABEL = {"gpu-batch/kueue-managed": "true"}


def test_an_existing_namespace_the_stack_never_labels_is_the_bypass() -> None:
    # createNamespace: false before issue 27: the LocalQueue in `default`, no Namespace, no patch.
    result = run(MANAGED, [kueue_release(SCOPED), local_queue(namespace="default")])
    assert len(result.violations) == 1 and "neither created nor patched" in result.messages[0]
    assert MANAGED.enforcement_level is not None and MANAGED.enforcement_level.value == "mandatory"


def test_a_namespace_patch_with_the_label_closes_it() -> None:
    ns_patch = k8s("v1", "NamespacePatch", "default", labels=LABEL)
    assert run(MANAGED, [kueue_release(SCOPED), ns_patch, local_queue(namespace="default")]).clean


def test_a_declared_namespace_without_the_label_is_caught() -> None:
    result = run(MANAGED, [kueue_release(SCOPED), namespace("team-a"), local_queue()])
    assert len(result.violations) == 1 and "does not select namespace team-a" in result.messages[0]
    assert run(MANAGED, [kueue_release(SCOPED), namespace("team-a", **LABEL), local_queue()]).clean


def test_the_chart_default_selector_manages_team_namespaces() -> None:
    # No selector: every namespace but kube-system and the release's own.
    assert run(MANAGED, [kueue_release(), local_queue(namespace="default")]).clean
    assert len(run(MANAGED, [kueue_release(), local_queue(namespace="kueue-system")]).violations) == 1


def test_without_a_kueue_release_the_selector_is_not_in_the_stack() -> None:
    assert run(MANAGED, [local_queue(namespace="default")]).clean
