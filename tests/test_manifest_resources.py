"""Manifests -> RecordedResources, checked against what the real SDK registers under its mocks."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pulumi
import pytest
import yaml
from google.protobuf import json_format
from gpu_batch_policy.primitives.tokens import type_token
from pulumi.runtime import mocks, settings
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _sync_await

from preview.crd_validation import Outcome, validate_objects
from preview.manifest_resources import (
    HELM_RELEASE_TYPE,
    helm_release_record,
    records_from_manifests,
    resource_name,
    stack_record,
    stack_urn,
    to_wire,
)
from preview.records import RecordedResource, for_display

SEEDS = Path(__file__).parent / "fixtures" / "seeds"
STACK = "dev"
PROJECT = "gpu-batch"
STACK_URN = "urn:pulumi:dev::gpu-batch::pulumi:pulumi:Stack::gpu-batch-dev"


def load_seed(name: str) -> list[dict[str, Any]]:
    with (SEEDS / name).open(encoding="utf-8") as handle:
        return [doc for doc in yaml.safe_load_all(handle) if doc is not None]


def by_name(records: list[RecordedResource]) -> dict[str, RecordedResource]:
    return {r.name: r for r in records}


def test_type_tokens_follow_pulumi_kubernetes() -> None:
    assert type_token("v1", "Namespace") == "kubernetes:core/v1:Namespace"
    assert type_token("apps/v1", "Deployment") == "kubernetes:apps/v1:Deployment"
    assert (
        type_token("kueue.x-k8s.io/v1beta2", "ClusterQueue")
        == "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue"
    )


def test_seed_manifests_become_records_parented_to_the_stack() -> None:
    records = records_from_manifests(load_seed("kueue-provisioning.yaml"), stack=STACK, project=PROJECT)
    assert [(r.type, r.name) for r in records] == [
        ("kubernetes:kueue.x-k8s.io/v1beta1:ResourceFlavor", "default-flavor"),
        ("kubernetes:kueue.x-k8s.io/v1beta1:AdmissionCheck", "rayjob-gpu"),
        ("kubernetes:kueue.x-k8s.io/v1beta1:ProvisioningRequestConfig", "rayjob-gpu-config"),
        ("kubernetes:kueue.x-k8s.io/v1beta1:ClusterQueue", "cluster-queue"),
        ("kubernetes:kueue.x-k8s.io/v1beta1:LocalQueue", "default/user-queue"),
        ("kubernetes:ray.io/v1:RayJob", "pytorch-text-classifier"),
    ]
    local_queue = by_name(records)["default/user-queue"]
    assert local_queue.urn == (
        "urn:pulumi:dev::gpu-batch::kubernetes:kueue.x-k8s.io/v1beta1:LocalQueue::default/user-queue"
    )
    assert all(r.parent == STACK_URN and r.custom and r.provider == "" for r in records)
    assert all(r.inputs == r.outputs for r in records)
    assert local_queue.inputs["spec"] == {"clusterQueue": "cluster-queue"}


def test_inputs_are_wire_form_and_keep_every_top_level_field() -> None:
    records = by_name(records_from_manifests(load_seed("kueue-priority.yaml"), stack=STACK, project=PROJECT))
    prod = records["prod-priority"].inputs
    assert prod["value"] == 1000.0 and isinstance(prod["value"], float)
    assert prod["description"] == "Priority class for prod jobs"
    queue = by_name(
        records_from_manifests(load_seed("kueue-provisioning.yaml"), stack=STACK, project=PROJECT)
    )
    quota = queue["cluster-queue"].inputs["spec"]["resourceGroups"][0]["flavors"][0]["resources"]
    assert [r["nominalQuota"] for r in quota] == [10000.0, "10000Gi", 10000.0]
    assert to_wire({"a": [1, True, None, "x"]}) == {"a": [1.0, True, None, "x"]}


def test_records_in_display_form_validate_like_the_manifests() -> None:
    for name in ("kueue-provisioning.yaml", "kai.yaml", "skypilot-cohort.yaml"):
        manifests = load_seed(name)
        records = records_from_manifests(manifests, stack=STACK, project=PROJECT)
        from_records = validate_objects([for_display(r.inputs) for r in records])
        from_manifests = validate_objects(manifests)
        assert [(r.ref, r.outcome, r.violations) for r in from_records] == [
            (r.ref, r.outcome, r.violations) for r in from_manifests
        ]
    assert Outcome.INVALID in {r.outcome for r in from_records}  # the v1alpha1 Cohort


def test_names_are_unique_or_rejected() -> None:
    # The SkyPilot variants share ResourceFlavor/AdmissionCheck names: together they collide.
    combined = load_seed("skypilot-shared-queue.yaml") + load_seed("skypilot-cohort.yaml")
    with pytest.raises(ValueError, match=r"kubernetes:core/v1:Namespace 'team1' \(duplicate URN\)"):
        records_from_manifests(combined, stack=STACK, project=PROJECT)
    # Same name, different namespace or kind: distinct resources.
    records = records_from_manifests(load_seed("skypilot-cohort.yaml"), stack=STACK, project=PROJECT)
    names = [r.name for r in records]
    assert "team1/skypilot-local-queue-team1" in names and "team1" in names
    assert len({r.urn for r in records}) == len(records)


def test_manifests_without_a_stable_name_are_rejected() -> None:
    with pytest.raises(ValueError, match="generateName is not supported"):
        resource_name({"apiVersion": "ray.io/v1", "kind": "RayJob", "metadata": {"generateName": "job-"}})
    with pytest.raises(ValueError, match="needs string apiVersion and kind"):
        records_from_manifests([{"metadata": {"name": "x"}}], stack=STACK, project=PROJECT)


def test_list_kinds_are_expanded_like_config_group() -> None:
    items = load_seed("kai.yaml")[:2]
    records = records_from_manifests(
        [None, {"apiVersion": "v1", "kind": "List", "items": items}], stack=STACK, project=PROJECT
    )
    assert [r.name for r in records] == ["department-1", "team-a"]


def test_helm_release_next_to_seed_manifests() -> None:
    operator = helm_release_record(
        "kuberay-operator",
        chart="kuberay-operator",
        version="1.7.0",
        namespace="kuberay-system",
        repository="https://ray-project.github.io/kuberay-helm/",
        values={"batchScheduler": {"name": "kai-scheduler"}},
        stack=STACK,
        project=PROJECT,
    )
    kai = helm_release_record(
        "kai-scheduler",
        chart="oci://ghcr.io/nvidia/kai-scheduler/kai-scheduler",
        version="v0.13.0",
        namespace="kai-scheduler",
        values={"global": {"gpuSharing": True}},
        release_name="kai-scheduler",
        stack=STACK,
        project=PROJECT,
    )
    plan = [
        stack_record(stack=STACK, project=PROJECT),
        operator,
        kai,
        *records_from_manifests(load_seed("kai.yaml"), stack=STACK, project=PROJECT),
    ]
    assert plan[0].urn == STACK_URN and plan[0].parent == ""
    assert operator.type == HELM_RELEASE_TYPE
    assert operator.urn == "urn:pulumi:dev::gpu-batch::kubernetes:helm.sh/v3:Release::kuberay-operator"
    assert operator.inputs == {
        "chart": "kuberay-operator",
        "version": "1.7.0",
        "namespace": "kuberay-system",
        "values": {"batchScheduler": {"name": "kai-scheduler"}},
        "compat": "true",
        "repositoryOpts": {"repo": "https://ray-project.github.io/kuberay-helm/"},
    }
    assert "repositoryOpts" not in kai.inputs and kai.inputs["name"] == "kai-scheduler"
    assert kai.inputs["values"]["global"]["gpuSharing"] is True
    assert len({r.urn for r in plan}) == len(plan)


# --------------------------------------------------------------------------------------------
# Against the SDK: the same objects registered by pulumi_kubernetes under the mocks


class _EchoMocks(pulumi.runtime.Mocks):
    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str | None, dict[str, Any]]:
        return None, dict(args.inputs)

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict[str, Any], list[tuple[str, str]] | None]:
        return {}, None


class _CapturingMonitor(mocks.MockMonitor):
    def __init__(self, mock: pulumi.runtime.Mocks) -> None:
        super().__init__(mock)
        self.registered: dict[str, dict[str, Any]] = {}

    def RegisterResource(self, request: Any) -> Any:
        response = super().RegisterResource(request)  # type: ignore[no-untyped-call]
        self.registered[request.name] = {
            "urn": response.urn,
            "type": request.type,
            "parent": request.parent,
            "inputs": json_format.MessageToDict(request.object),
        }
        return response


@pytest.fixture
def sdk_register() -> Iterator[Callable[[Callable[[], None]], dict[str, dict[str, Any]]]]:
    def run(program: Callable[[], None]) -> dict[str, dict[str, Any]]:
        settings.reset_options()
        mock = _EchoMocks()
        monitor = _CapturingMonitor(mock)
        pulumi.runtime.set_mocks(mock, project=PROJECT, stack=STACK, preview=True, monitor=monitor)
        _sync_await(run_pulumi_func(program))
        return monitor.registered

    yield run
    settings.reset_options()


def test_records_match_what_pulumi_kubernetes_registers(
    sdk_register: Callable[[Callable[[], None]], dict[str, dict[str, Any]]],
) -> None:
    import pulumi_kubernetes as k8s

    manifests = [
        m
        for m in load_seed("kueue-provisioning.yaml")
        if m["kind"] in ("LocalQueue", "ClusterQueue", "RayJob")
    ]
    manifests.append({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team1"}})
    values = {"batchScheduler": {"name": "kai-scheduler"}, "replicas": 1}

    def program() -> None:
        for m in manifests[:-1]:
            k8s.apiextensions.CustomResource(
                resource_name(m),
                api_version=m["apiVersion"],
                kind=m["kind"],
                metadata=m["metadata"],
                spec=m["spec"],
            )
        k8s.core.v1.Namespace("team1", metadata={"name": "team1"})
        k8s.helm.v3.Release(
            "kuberay-operator",
            chart="kuberay-operator",
            version="1.7.0",
            namespace="kuberay-system",
            repository_opts=k8s.helm.v3.RepositoryOptsArgs(
                repo="https://ray-project.github.io/kuberay-helm/"
            ),
            values=values,
        )

    registered = sdk_register(program)
    ours = records_from_manifests(manifests, stack=STACK, project=PROJECT)
    ours.append(
        helm_release_record(
            "kuberay-operator",
            chart="kuberay-operator",
            version="1.7.0",
            namespace="kuberay-system",
            repository="https://ray-project.github.io/kuberay-helm/",
            values=values,
            stack=STACK,
            project=PROJECT,
        )
    )
    assert len(ours) == 5
    for record in ours:
        sdk = registered[record.name]
        assert record.type == sdk["type"]
        assert record.parent == sdk["parent"] == stack_urn(STACK, PROJECT)
        assert record.inputs == sdk["inputs"]
        # The mocks build child URNs with the stack's type in front; the engine does not.
        assert sdk["urn"] == record.urn.replace(
            f"::{record.type}::", f"::pulumi:pulumi:Stack${record.type}::"
        )


def test_sdk_custom_resource_drops_top_level_fields_that_records_keep(
    sdk_register: Callable[[Callable[[], None]], dict[str, dict[str, Any]]],
) -> None:
    # Why records carry the whole manifest, and a warning for programs: the Python
    # CustomResource class sends only apiVersion/kind/metadata/spec, so a WorkloadPriorityClass
    # declared through it loses its top-level `value`.
    import pulumi_kubernetes as k8s

    manifest = load_seed("kueue-priority.yaml")[0]

    def program() -> None:
        k8s.apiextensions.CustomResource(
            "prod-priority",
            api_version=manifest["apiVersion"],
            kind=manifest["kind"],
            metadata=manifest["metadata"],
        )

    sdk_inputs = sdk_register(program)["prod-priority"]["inputs"]
    assert "value" not in sdk_inputs
    (record,) = records_from_manifests([manifest], stack=STACK, project=PROJECT)
    assert record.inputs["value"] == 1000.0
