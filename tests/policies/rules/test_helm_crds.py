"""helm-crds-not-upgraded: a release whose chart ships crds/ that Helm will never upgrade.

Upstream: helm/helm v3.20.2 ``pkg/action/install.go`` ``Install.Run`` / ``installCRDs`` (crds/
created once, skipped with ``SkipCRDs``), ``pkg/action/upgrade.go`` ``performUpgrade``
(``includeCrds`` false, no ``CRDObjects``).  A chart that upgrades its CRDs in a ``pre-upgrade``
hook is fine: NVIDIA gpu-operator v26.7.0 ``templates/upgrade_crd.yaml`` (``operator.upgradeCRD``,
default true), KAI Scheduler v0.17.0 ``templates/hooks/pre/crd-upgrader.yaml``.  Which CRDs a hook
may touch follows kubernetes/kubernetes v1.34.0 ``pkg/apis/rbac/v1/evaluation_helpers.go``
``ResourceNameMatches`` (no ``resourceNames``: every object; else only those named).

The charts are the pinned ones from charts.lock.yaml, rendered by the real Helm engine; the
CRD names expected in messages are read from the rendered chart, never written here.
"""

from __future__ import annotations

import copy
from typing import Any

from gpu_batch_policy.facts.charts import default_resolver, reference_from_release
from gpu_batch_policy.facts.charts.render import RenderedObject, in_crds_dir, render_chart
from gpu_batch_policy.rules.installs.helm_crds import self_upgraded
from pulumi_policy import EnforcementLevel

from components.chart_lock import locked
from tests.policies.pack_harness import Res, policy, run
from tests.policies.pack_objects import k8s, kueue_release, ray_job
from tests.policies.pack_objects import pinned_release as _release

RULE = policy("helm-crds-not-upgraded")
SCHEMA = policy("custom-resource-schema")
CRD_TYPE = "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition"


def _crds_dir(key: str) -> list[dict[str, Any]]:
    chart = locked(key)
    source = chart.source if chart.source.startswith("oci://") else chart.name
    repo = None if chart.source.startswith("oci://") else chart.source
    reference = reference_from_release(source, chart.version, repo)
    rendered = render_chart(default_resolver().resolve(reference), {}, release_name=key, namespace=key)
    # Copies: the render is memoised for the whole process, and a test edits these.
    return [copy.deepcopy(o.manifest) for o in rendered.objects if in_crds_dir(o.source)]


def test_it_is_advisory() -> None:
    assert RULE.enforcement_level == EnforcementLevel.ADVISORY


def test_a_release_whose_chart_ships_crds_is_caught() -> None:
    result = run(RULE, [_release("kuberay-operator", "kuberay-system")])
    assert len(result.violations) == 1
    message = result.messages[0]
    for crd in _crds_dir("kuberay-operator"):
        assert crd["metadata"]["name"] in message
    assert "never upgrades" in message and "skipCrds" in message


def _own_crds(key: str) -> list[Res]:
    return [Res(CRD_TYPE, f"crd-{d['metadata']['name']}", d) for d in _crds_dir(key)]


def test_skip_crds_with_the_crds_as_own_resources_passes() -> None:
    resources = [
        _release("kuberay-operator", "kuberay-system", skipCrds=True),
        *_own_crds("kuberay-operator"),
    ]
    assert run(RULE, resources).clean


def test_ray_objects_are_still_validated_against_the_own_crds() -> None:
    """With the chart's crds/ skipped, RayJobs are judged by the declared CRDs (a stack's own CRD
    wins over the pinned charts', schema/pinned.py): a RayJob valid under them passes, and a CRD
    declared without ``spec.entrypoint`` makes the same RayJob's field one the schema does not
    declare (server-side apply: "field not declared in schema")."""
    release = _release("kuberay-operator", "kuberay-system", skipCrds=True)
    assert run(SCHEMA, [release, *_own_crds("kuberay-operator"), ray_job()]).clean
    narrowed = _own_crds("kuberay-operator")
    for crd in narrowed:
        if crd.props["spec"]["names"]["kind"] == "RayJob":
            for version in crd.props["spec"]["versions"]:
                version["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"].pop("entrypoint")
    result = run(SCHEMA, [release, *narrowed, ray_job()])
    assert any("entrypoint" in m for m in result.messages)


def test_a_chart_without_crds_dir_passes() -> None:
    """Kueue 0.19.2 renders its CRDs from templates: Helm upgrades those like any object."""
    assert run(RULE, [kueue_release()]).clean


def test_a_chart_that_upgrades_its_own_crds_in_a_hook_passes() -> None:
    assert run(RULE, [_release("kai-scheduler", "kai-scheduler")]).clean
    assert run(RULE, [_release("gpu-operator", "gpu-operator")]).clean


def test_the_charts_own_switch_off_is_caught() -> None:
    """gpu-operator's ``operator.upgradeCRD: false`` removes its pre-upgrade CRD Job."""
    release = _release("gpu-operator", "gpu-operator", values={"operator": {"upgradeCRD": False}})
    result = run(RULE, [release])
    assert len(result.violations) == 1
    assert "clusterpolicies.nvidia.com" in result.messages[0]


def _hook_objects(
    verbs: list[str], names: list[str] | None, hook: str = "pre-upgrade"
) -> list[RenderedObject]:
    rule: dict[str, Any] = {
        "apiGroups": ["apiextensions.k8s.io"],
        "resources": ["customresourcedefinitions"],
        "verbs": verbs,
    }
    if names is not None:
        rule["resourceNames"] = names
    docs: list[dict[str, Any]] = [
        {"kind": "CustomResourceDefinition", "metadata": {"name": "widgets.example.com"}},
        {"kind": "ClusterRole", "metadata": {"name": "crd-up"}, "rules": [rule]},
        {
            "kind": "ClusterRoleBinding",
            "metadata": {"name": "crd-up"},
            "roleRef": {"kind": "ClusterRole", "name": "crd-up"},
            "subjects": [{"kind": "ServiceAccount", "name": "up", "namespace": "ns"}],
        },
        {
            "kind": "Job",
            "metadata": {"name": "up", "annotations": {"helm.sh/hook": hook}},
            "spec": {"template": {"spec": {"serviceAccountName": "up"}}},
        },
    ]
    return [RenderedObject("c/templates/x.yaml", d) for d in docs]


def test_which_crds_a_hook_may_upgrade_follows_rbac() -> None:
    crd = "widgets.example.com"
    assert self_upgraded(_hook_objects(["patch"], None), "ns") == {crd}
    assert self_upgraded(_hook_objects(["update"], [crd]), "ns") == {crd}
    assert self_upgraded(_hook_objects(["update"], ["other.example.com"]), "ns") == set()
    assert self_upgraded(_hook_objects(["get", "create"], None), "ns") == set()
    assert self_upgraded(_hook_objects(["*"], None, hook="pre-install"), "ns") == set()
    assert self_upgraded(_hook_objects(["patch"], None), "elsewhere") == set()


def test_an_unrelated_crd_declared_elsewhere_does_not_hide_the_finding() -> None:
    other = k8s("apiextensions.k8s.io/v1", "CustomResourceDefinition", "widgets.example.com")
    assert len(run(RULE, [_release("kuberay-operator", "kuberay-system"), other]).violations) == 1
