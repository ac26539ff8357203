"""Re-creating a retained object succeeds (issue 28, item 2).

A ``retainOnDelete`` object outlives its Pulumi resource: disabling Kueue or KubeRay only makes
the engine forget their CRDs, which stay in the cluster.  Enabling the component again creates
the same objects, and pulumi-kubernetes >= 4.29 creates by POST unless the provider sets
``upsertExistingObjects`` (``provider/pkg/await/await.go`` ``Creation``; CHANGELOG 4.29.0), so
without it the next ``up`` fails ``AlreadyExists``.  These tests follow the recorded plans of the
real program: every retained object of every repo stack goes through a provider that upserts,
and a disable / re-enable round trip of Kueue and KubeRay re-creates exactly the retained CRDs
through it.  What stays as before: no other object uses that provider, so a renamed resource
still fails instead of silently taking over (and then deleting) a live object.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from preview.harness import RunResult
from preview.plan import plan_document
from preview.plan_diff import diff_plans
from preview.records import RecordedResource
from tests.stack_runner import ROOT, run_stack, unedited_run

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

PROVIDER = "pulumi:providers:kubernetes"
STACKS = sorted(
    p.name.removeprefix("Pulumi.").removesuffix(".yaml") for p in Path(ROOT).glob("Pulumi.*.yaml")
)
ON = {"gpu-batch:kueue": {"enabled": True, "version": "0.19.2"}}
OFF = {"gpu-batch:kuberay": {"enabled": False}}


@cache
def stack(name: str) -> RunResult:
    return unedited_run(name)


@cache
def kai(components_on: bool) -> RunResult:
    """The kai stack with Kueue and KubeRay on, or both off (KAI stays the gang scheduler)."""
    if components_on:
        return run_stack("kai", ON)
    return run_stack("kai", OFF, drop=("gpu-batch:workloads",))


def provider_of(result: RunResult, record: RecordedResource) -> RecordedResource:
    urn = record.provider.rsplit("::", 1)[0]
    (found,) = [r for r in result.resources if r.urn == urn]
    return found


def upserts(provider: RecordedResource) -> bool:
    return provider.type == PROVIDER and provider.inputs.get("upsertExistingObjects") in (True, "true")


@pytest.mark.parametrize("name", STACKS)
def test_every_retained_object_is_created_by_upsert(name: str) -> None:
    result = stack(name)
    retained = [r for r in result.resources if r.retain_on_delete]
    assert all(r.provider for r in retained)
    for record in retained:
        provider = provider_of(result, record)
        assert upserts(provider), record.urn
        assert provider.inputs.get("enablePatchForce") in (True, "true"), record.urn


@pytest.mark.parametrize("name", STACKS)
def test_nothing_else_is_created_by_upsert(name: str) -> None:
    """Create-conflict semantics stay for every object that is not retained."""
    result = stack(name)
    for record in result.resources:
        if record.custom and record.provider and not record.retain_on_delete:
            assert not upserts(provider_of(result, record)), record.urn


def test_disable_then_enable_kueue_and_kuberay_recreates_the_retained_crds_by_upsert() -> None:
    on, off = kai(True), kai(False)
    plan_on = plan_document("gpu-batch", "kai", on.resources, on.outputs)
    plan_off = plan_document("gpu-batch", "kai", off.resources, off.outputs)
    disabled = diff_plans(plan_on, plan_off)
    left_in_cluster = {c.urn for c in disabled if c.action == "delete" and c.retained}
    crds = {r.urn for r in on.resources if r.type.endswith(":CustomResourceDefinition")}
    # Both components' CRDs (ray.io and kueue.x-k8s.io) stay in the cluster when disabled ...
    assert crds and left_in_cluster == crds
    groups = {r.inputs["spec"]["group"] for r in on.resources if r.urn in crds}
    assert groups == {"kueue.x-k8s.io", "ray.io"}
    # ... and re-enabling creates exactly those objects again, each through the upserting provider.
    enabled = diff_plans(plan_off, plan_on)
    recreated = {c.urn for c in enabled if c.action == "create" and c.urn in left_in_cluster}
    assert recreated == left_in_cluster
    by_urn = {r.urn: r for r in on.resources}
    assert all(upserts(provider_of(on, by_urn[u])) for u in recreated)
