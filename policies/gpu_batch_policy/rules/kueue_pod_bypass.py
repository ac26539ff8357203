"""Bare pods that bypass Kueue, and a pod webhook that fails closed on every namespace.

* **A Role that lets users create bare pods where Kueue does not manage pods.**  Kueue queues a
  plain Pod only with the ``pod`` integration and only in namespaces matched by
  ``managedJobsNamespaceSelector`` (Kueue v0.19.2 ``site/content/en/docs/tasks/run/plain_pods.md``;
  reference/kueue.md §5: for pods "a hard exemption").  Anywhere else a pod created directly
  runs with no queue, quota or admission check, so a team Role granting ``create`` on pods in a
  namespace Kueue does not manage for pods hands out a quota bypass.  Judged for Roles in namespaces
  that hold a Kueue LocalQueue (where teams submit), in stacks that install Kueue.
* **The pod integration with an unscoped selector.**  The Kueue chart uses
  ``managedJobsNamespaceSelector`` as the ``namespaceSelector`` of its pod webhooks, which are
  ``failurePolicy: Fail`` once ``pod`` is enabled (``charts/kueue/templates/webhook/manifests.yaml``
  @v0.19.2, ``mpod.kb.io``).  Left at the default (every namespace but kube-system and Kueue's
  own), every pod in the cluster -- ingress controllers, other operators -- is refused while
  Kueue's webhook is down.  Scope it to the namespaces whose pods Kueue should queue.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import Policy

from ..builders import stack_policy
from ..model import StackModel
from ..model.base import KubeObject
from ..model.helm import HelmRelease
from ..report import Reporter
from ..selectors import namespace_labels, selector_matches
from ..values import Unknown, dig

POD_CREATE_VERBS = {"create", "*"}


def _pod_scope(release: HelmRelease) -> tuple[bool, dict[str, Any] | None] | Unknown | None:
    """(pod integration on, managedJobsNamespaceSelector or None); None when unreadable."""
    frameworks = release.kueue_frameworks()
    if isinstance(frameworks, Unknown):
        return frameworks
    if frameworks is None:
        return None
    config = release.kueue_config()
    selector = dig(config.data, "managedJobsNamespaceSelector") if config.present else None
    if isinstance(selector, Unknown):
        return selector
    return "pod" in frameworks, selector if isinstance(selector, dict) else None


def _grants_pod_create(role: KubeObject) -> bool | None:
    rules = dig(role.props, "rules")
    if isinstance(rules, Unknown):
        return None
    for rule in rules if isinstance(rules, list) else []:
        groups, resources, verbs = dig(rule, "apiGroups"), dig(rule, "resources"), dig(rule, "verbs")
        if any(isinstance(v, Unknown) for v in (groups, resources, verbs)):
            return None
        if (
            isinstance(groups, list)
            and ("" in groups or "*" in groups)
            and isinstance(resources, list)
            and ("pods" in resources or "*" in resources)
            and isinstance(verbs, list)
            # Only strings are verbs; a malformed entry (a map, a list) is not one (fuzzing found
            # a TypeError on unhashable entries here).
            and POD_CREATE_VERBS.intersection(v for v in verbs if isinstance(v, str))
        ):
            return True
    return False


def check_pod_bypass(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    releases = model.kueue_releases()
    if not releases:
        return
    scopes = [_pod_scope(r) for r in releases]
    if any(s is None or isinstance(s, Unknown) for s in scopes):
        reporter.cannot_check(releases[0], "the Kueue controller Configuration is unknown or unreadable")
        return
    for release, scope in zip(releases, scopes, strict=True):
        assert isinstance(scope, tuple)
        pods_on, selector = scope
        if pods_on and (selector is None or not _mentions_labels(selector)):
            reporter.violation(
                release,
                "the pod integration is on with managedJobsNamespaceSelector left to every namespace, so "
                "Kueue's fail-closed pod webhook guards every pod in the cluster",
                "set managedJobsNamespaceSelector to the team namespaces only (e.g. matchLabels on a "
                "label the team namespaces carry)",
            )
    for role in model.kube_objects("rbac.authorization.k8s.io", "Role"):
        namespace = role.namespace or ""
        # A team namespace is one with a LocalQueue: users submit there (indexed lookup, so the
        # rule stays linear in the stack).
        if not model.local_queues_in(namespace):
            continue
        grants = _grants_pod_create(role)
        if grants is None:
            reporter.cannot_check(role, "rules are unknown until apply")
            continue
        if not grants:
            continue
        labels, complete = namespace_labels(model, namespace)
        managed = [
            pods_on and selector is not None and selector_matches(selector, labels, complete=complete)
            for pods_on, selector in (s for s in scopes if isinstance(s, tuple))
        ]
        if any(m is True for m in managed):
            continue
        if any(m is None for m in managed):
            reporter.cannot_check(role, f"whether Kueue manages pods in namespace {namespace} is unknown")
            continue
        reporter.violation(
            role,
            f"lets users create bare pods in team namespace {namespace}, where Kueue's pod integration does "
            "not manage pods, so those pods bypass queues and quota",
            "grant create on the workload kinds Kueue queues (jobs, rayjobs, rayclusters) and only "
            "get/list/watch/delete on pods, or enable the pod integration for that namespace",
        )


def _mentions_labels(selector: Mapping[str, Any]) -> bool:
    """A selector that opts namespaces *in* (matchLabels or In/Exists), not only NotIn exclusions."""
    if selector.get("matchLabels"):
        return True
    expressions = selector.get("matchExpressions")
    return any(
        isinstance(e, Mapping) and e.get("operator") in ("In", "Exists")
        for e in (expressions if isinstance(expressions, list) else [])
    )


POLICIES: list[Policy] = [
    stack_policy(
        "kueue-pod-bypass",
        "Team Roles create bare pods only where Kueue manages pods, and the pod integration's webhook is scoped to team namespaces.",
        check_pod_bypass,
    ),
]
