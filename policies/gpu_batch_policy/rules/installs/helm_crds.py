"""A Helm release whose chart ships ``crds/``: Helm installs those CRDs once and never upgrades them.

Upstream behaviour (helm/helm v3.20.2, the Helm pulumi-kubernetes v4.32.0 builds against,
``provider/go.mod``):

- ``pkg/action/install.go`` ``Install.Run``: ``chrt.CRDObjects()`` (every ``crds/`` file of the
  chart and its subcharts, ``pkg/chart/chart.go`` ``CRDObjects``) are created before the templates
  unless ``SkipCRDs``; ``installCRDs`` *creates* them and skips one that "is already present";
- ``pkg/action/upgrade.go`` ``performUpgrade``: ``renderResources(..., includeCrds=false, ...)``
  and no ``CRDObjects`` at all -- an upgrade never touches ``crds/``, and uninstall never deletes
  them (the Helm docs, "Custom Resource Definitions": "There is no support at this time for
  upgrading or deleting CRDs using Helm").

So a chart version bump leaves the old CRD schemas in the cluster: new fields are pruned silently
and new kinds or versions are missing.  The finding is advisory (a risk of the next upgrade, not
a failure of this install) and names the CRDs concerned.  A release is fine when:

- ``skipCrds`` is true (pulumi-kubernetes ``helm.v3.Release``; ``client.SkipCRDs`` in
  ``helm_release.go`` ``helmCreate``): the program installs the CRDs itself, e.g. as
  ``apiextensions.k8s.io/v1`` CustomResourceDefinition resources, which Pulumi updates;
- or the chart upgrades each of those CRDs itself: a ``pre-upgrade`` hook Job whose service
  account a ClusterRoleBinding of the chart grants ``update`` or ``patch`` on that CRD (NVIDIA
  gpu-operator v26.7.0 ``templates/upgrade_crd.yaml``, KAI Scheduler v0.17.0
  ``templates/hooks/pre/crd-upgrader.yaml`` with ``templates/rbac/crd-manager.yaml``).

``kubernetes:helm.sh/v4:Chart`` is not judged: it renders ``crds/`` into resources of its own
(pulumi-kubernetes v4.32.0 ``provider/pkg/provider/helm/v4/chart.go``: ``IncludeCRDs =
!SkipCrds``), which Pulumi updates like any other.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pulumi_policy import EnforcementLevel, Policy

from ...facts.charts.render import RenderedObject, helm_hooks, in_crds_dir
from ...facts.model import StackModel
from ...facts.rbac import rules_grant
from ...primitives.values import dig
from ..kit.builders import stack_policy
from ..kit.report import Reporter

CRD_GROUP = "apiextensions.k8s.io"


def _name(manifest: Mapping[str, Any]) -> str:
    name = dig(manifest, "metadata", "name")
    return name if isinstance(name, str) else ""


def _namespace(manifest: Mapping[str, Any], default: str) -> str:
    namespace = dig(manifest, "metadata", "namespace")
    return namespace if isinstance(namespace, str) and namespace else default


def _upgrade_hook_accounts(objects: Iterable[Mapping[str, Any]], namespace: str) -> set[tuple[str, str]]:
    """(namespace, name) of the service accounts the chart's ``pre-upgrade`` hook Jobs run as."""
    accounts: set[tuple[str, str]] = set()
    for doc in objects:
        if doc.get("kind") != "Job":
            continue
        if "pre-upgrade" not in helm_hooks(doc):
            continue
        account = dig(doc, "spec", "template", "spec", "serviceAccountName")
        accounts.add(
            (_namespace(doc, namespace), account if isinstance(account, str) and account else "default")
        )
    return accounts


def self_upgraded(objects: Iterable[RenderedObject], namespace: str) -> set[str]:
    """Names of the CRDs the chart's own ``pre-upgrade`` hooks may update or patch."""
    docs = [o.manifest for o in objects]
    accounts = _upgrade_hook_accounts(docs, namespace)
    roles = {_name(d): d.get("rules") for d in docs if d.get("kind") == "ClusterRole"}
    granted: list[Any] = []
    for binding in docs:
        if binding.get("kind") != "ClusterRoleBinding" or dig(binding, "roleRef", "kind") != "ClusterRole":
            continue
        subjects = binding.get("subjects")
        bound = {
            (str(s.get("namespace") or namespace), str(s.get("name")))
            for s in (subjects if isinstance(subjects, list) else [])
            if isinstance(s, Mapping) and s.get("kind") == "ServiceAccount"
        }
        if bound & accounts:
            granted.append(roles.get(str(dig(binding, "roleRef", "name"))))
    names = {_name(d) for d in docs if d.get("kind") == "CustomResourceDefinition"}
    return {
        name
        for name in names
        if any(
            rules_grant(rules, CRD_GROUP, "customresourcedefinitions", ("update", "patch"), name=name)
            for rules in granted
        )
    }


def check_release_crds(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    """Each rendered release whose ``crds/`` Helm installs and nothing upgrades is a finding."""
    for release in model.helm_releases():
        outcome = model.renders.get(release.urn)
        if outcome is None or outcome.status != "rendered" or release.skip_crds is True:
            continue
        shipped = [
            o
            for o in outcome.objects
            if in_crds_dir(o.source) and o.manifest.get("kind") == "CustomResourceDefinition"
        ]
        upgraded = self_upgraded(outcome.objects, outcome.namespace)
        stale = sorted({_name(o.manifest) for o in shipped} - upgraded)
        if not stale:
            continue
        shown = ", ".join(stale[:6]) + (f" and {len(stale) - 6} more" if len(stale) > 6 else "")
        reporter.violation(
            release,
            f"chart {outcome.reference} ships {len(stale)} CRD(s) in crds/ ({shown}); Helm creates them "
            "on install and never upgrades them, so a later chart version runs against the old schemas "
            "and new fields are pruned",
            "set skipCrds: true and declare the chart's crds/ as CustomResourceDefinition resources "
            "(applied server-side, updated with the chart version), or apply them yourself before "
            "each upgrade (`kubectl apply --server-side -f <chart>/crds/`)",
        )


POLICIES: list[Policy] = [
    stack_policy(
        "helm-crds-not-upgraded",
        "A Helm release whose chart ships crds/ without skipCrds: Helm installs those CRDs once and "
        "never upgrades them (advisory).",
        check_release_crds,
        enforcement_level=EnforcementLevel.ADVISORY,
    ),
]
