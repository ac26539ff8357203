"""Kueue and KAI queue objects each scenario plans (wire form, under the mocks), and the one-line
config errors for queue keys."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from preview.harness import RunResult
from preview.manifests import render_manifests, validate_manifests
from preview.records import RecordedResource
from stacks.errors import ConfigError
from stacks.quantity import amount
from tests.stack_runner import config_value, named, run_stack, unedited_run

KUEUE = "kubernetes:kueue.x-k8s.io/v1beta2:"
KAI_QUEUE = "kubernetes:scheduling.run.ai/v2:Queue"
QUEUES = "gpu-batch:kueueQueues"
KAI = "gpu-batch:kaiQueues"


@pytest.fixture(scope="module")
def plans() -> dict[str, RunResult]:
    return {stack: unedited_run(stack) for stack in ("dev", "kai", "skypilot", "prod")}


def objects(result: RunResult, kind: str) -> dict[str, dict[str, Any]]:
    """Inputs of the ``kind`` objects, by ``namespace/name`` or ``name``."""
    found = {}
    for r in result.resources:
        if r.type in (f"{KUEUE}{kind}", f"kubernetes:scheduling.run.ai/v2:{kind}"):
            meta = r.inputs["metadata"]
            key = f"{meta['namespace']}/{meta['name']}" if "namespace" in meta else meta["name"]
            found[key] = r.inputs
    return found


def record(result: RunResult, kind: str, name: str) -> RecordedResource:
    return named(result, f"{kind.lower()}-{name}")


def config_errors(stack: str, edits: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        run_stack(stack, edits)
    return str(caught.value).splitlines()


class TestDevScenario:
    """Seeds 000 + 003: DWS gang scheduling and prod/dev priorities (DESIGN.md scenarios 1-2)."""

    def test_flavor_selects_the_queued_pool_and_tolerates_its_taints(
        self, plans: dict[str, RunResult]
    ) -> None:
        flavor = objects(plans["dev"], "ResourceFlavor")["l4-dws"]["spec"]
        assert flavor["nodeLabels"] == {"cloud.google.com/gke-nodepool": "gpu-node-pool"}
        assert flavor["tolerations"] == [
            {"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"},
            {"key": "cloud.google.com/gke-queued", "operator": "Exists", "effect": "NoSchedule"},
        ]

    def test_admission_check_points_at_a_queued_provisioning_config(
        self, plans: dict[str, RunResult]
    ) -> None:
        check = objects(plans["dev"], "AdmissionCheck")["rayjob-gpu"]["spec"]
        assert check == {
            "controllerName": "kueue.x-k8s.io/provisioning-request",
            "parameters": {
                "apiGroup": "kueue.x-k8s.io",
                "kind": "ProvisioningRequestConfig",
                "name": "rayjob-gpu-config",
            },
        }
        config = objects(plans["dev"], "ProvisioningRequestConfig")["rayjob-gpu-config"]["spec"]
        assert config["provisioningClassName"] == "queued-provisioning.gke.io"
        assert config["managedResources"] == ["nvidia.com/gpu"]
        assert config["podSetMergePolicy"] == "IdenticalWorkloadSchedulingRequirements"

    def test_cluster_queue_is_v1beta2_with_the_check_and_priority_preemption(
        self, plans: dict[str, RunResult]
    ) -> None:
        spec = objects(plans["dev"], "ClusterQueue")["cluster-queue"]["spec"]
        assert spec["admissionChecksStrategy"] == {"admissionChecks": [{"name": "rayjob-gpu"}]}
        assert "admissionChecks" not in spec and "cohort" not in spec  # v1beta1 spellings
        assert spec["preemption"]["withinClusterQueue"] == "LowerPriority"
        assert spec["namespaceSelector"] == {}  # the stack asks for every namespace, as the seed
        (group,) = spec["resourceGroups"]
        assert group["coveredResources"] == ["cpu", "memory", "nvidia.com/gpu"]
        assert [r["name"] for r in group["flavors"][0]["resources"]] == group["coveredResources"]
        assert group["flavors"][0]["resources"][1] == {"name": "memory", "nominalQuota": "10000Gi"}

    def test_local_queue_user_queue_in_default(self, plans: dict[str, RunResult]) -> None:
        lq = objects(plans["dev"], "LocalQueue")["default/user-queue"]
        assert lq["spec"] == {"clusterQueue": "cluster-queue"}

    def test_priority_classes_keep_value_and_description_at_the_top(
        self, plans: dict[str, RunResult]
    ) -> None:
        classes = objects(plans["dev"], "WorkloadPriorityClass")
        assert {name: (c["value"], c["description"]) for name, c in classes.items()} == {
            "prod-priority": (1000, "Priority class for prod jobs"),
            "dev-priority": (100, "Priority class for development jobs"),
        }
        assert all("spec" not in c for c in classes.values())

    def test_objects_wait_for_kueue_and_for_what_they_reference(self, plans: dict[str, RunResult]) -> None:
        dev = plans["dev"]
        # Through the readiness gate, which itself waits for the release (issue 10 #4).
        release = named(dev, "kueue-webhooks-ready").urn
        assert named(dev, "kueue-release").urn in named(dev, "kueue-webhooks-ready").dependencies
        cq = record(dev, "ClusterQueue", "cluster-queue")
        lq = record(dev, "LocalQueue", "default-user-queue")
        for r in (
            record(dev, "ResourceFlavor", "l4-dws"),
            cq,
            lq,
            record(dev, "WorkloadPriorityClass", "dev-priority"),
        ):
            assert release in r.dependencies, r.name
        assert record(dev, "ResourceFlavor", "l4-dws").urn in cq.dependencies
        assert record(dev, "AdmissionCheck", "rayjob-gpu").urn in cq.dependencies
        assert cq.urn in lq.dependencies
        assert all(r.provider.startswith(named(dev, "kuberay-gpu-cluster-k8s").urn) for r in (cq, lq))


class TestTeamQueues:
    """skypilot (seed 004, a ClusterQueue per team in a Cohort) and prod (hardened)."""

    def test_skypilot_per_team_queues_share_a_fair_sharing_cohort(self, plans: dict[str, RunResult]) -> None:
        sky = plans["skypilot"]
        assert objects(sky, "Cohort") == {
            "skypilot-cohort": {
                "apiVersion": "kueue.x-k8s.io/v1beta2",
                "kind": "Cohort",
                "metadata": {"name": "skypilot-cohort", "labels": {"app.kubernetes.io/managed-by": "pulumi"}},
                "spec": {},  # a plain cohort: no parent, no quota of its own
            }
        }
        queues = objects(sky, "ClusterQueue")
        assert sorted(queues) == ["skypilot-cluster-queue-team1", "skypilot-cluster-queue-team2"]
        for team, cq in (
            ("team1", queues["skypilot-cluster-queue-team1"]),
            ("team2", queues["skypilot-cluster-queue-team2"]),
        ):
            spec = cq["spec"]
            assert spec["cohortName"] == "skypilot-cohort"
            assert spec["fairSharing"] == {"weight": "1"}
            assert spec["preemption"]["reclaimWithinCohort"] == "Any"
            assert spec["namespaceSelector"] == {
                "matchExpressions": [
                    {"key": "kubernetes.io/metadata.name", "operator": "In", "values": [team]}
                ]
            }
        config = objects(sky, "ProvisioningRequestConfig")["skypilot-kueue-prov-config"]["spec"]
        assert config["provisioningClassName"] == "check-capacity.autoscaling.x-k8s.io"
        assert sorted(objects(sky, "LocalQueue")) == [
            "team1/skypilot-local-queue-team1",
            "team2/skypilot-local-queue-team2",
        ]

    def test_prod_has_a_cluster_queue_per_team_and_gpu_type(self, plans: dict[str, RunResult]) -> None:
        """Issue 21 item 7: prod's one resource group listed l4 then h100, so Kueue admitted a job
        that did not fit the L4 quota on H100 (flavorassigner.go shouldTryNextFlavor).  Now each
        ClusterQueue holds one GPU type behind the CPU flavor, and borrows only that type."""
        queues = objects(plans["prod"], "ClusterQueue")
        assert sorted(queues) == ["applied-h100", "applied-l4", "research-h100", "research-l4"]
        for name, cq in queues.items():
            gpu = name.rsplit("-", 1)[1]
            spec = cq["spec"]
            assert "annotations" not in cq["metadata"]  # no opt-in to mixing GPU types
            assert spec["cohortName"] == "ml"
            assert spec["admissionChecksStrategy"] == {
                "admissionChecks": [{"name": "dws", "onFlavors": [gpu]}]
            }
            # Fair sharing ignores borrowWithinCohort, so prod leaves it at Never (issue 10 #8).
            assert spec["preemption"]["borrowWithinCohort"] == {"policy": "Never"}
            assert len(spec["resourceGroups"]) == 1
            flavors = {
                f["name"]: {r["name"]: r for r in f["resources"]}
                for f in spec["resourceGroups"][0]["flavors"]
            }
            assert list(flavors) == ["cpu", gpu]  # CPU-only pod sets take the cpu flavor first
            assert flavors["cpu"]["nvidia.com/gpu"]["nominalQuota"] == "0"
        assert queues["research-h100"]["spec"]["resourceGroups"][0]["flavors"][1]["resources"][2] == {
            "name": "nvidia.com/gpu",
            "nominalQuota": "16",
            "borrowingLimit": "16",
        }

    def test_prod_teams_pick_the_gpu_type_by_local_queue(self, plans: dict[str, RunResult]) -> None:
        local = {
            name: lq["spec"]["clusterQueue"] for name, lq in objects(plans["prod"], "LocalQueue").items()
        }
        for team in ("research", "applied"):
            assert local[f"{team}/l4"] == f"{team}-l4"
            assert local[f"{team}/h100"] == f"{team}-h100"
            # A job naming no queue is defaulted into `default` (strict tenancy): the L4 queue.
            assert local[f"{team}/default"] == f"{team}-l4"
        selectors = {
            name: cq["spec"]["namespaceSelector"]["matchExpressions"][0]["values"]
            for name, cq in objects(plans["prod"], "ClusterQueue").items()
        }
        assert selectors == {f"{t}-{g}": [t] for t in ("research", "applied") for g in ("l4", "h100")}

    def test_prod_quota_never_exceeds_the_pools(self, plans: dict[str, RunResult]) -> None:
        capacity = {"l4": 24, "h100": 32}  # l4-queued 12 x 2, h100-queued 4 x 8
        total = dict.fromkeys(capacity, 0)
        for cq in objects(plans["prod"], "ClusterQueue").values():
            for flavor in cq["spec"]["resourceGroups"][0]["flavors"]:
                if flavor["name"] in total:
                    gpu = next(r for r in flavor["resources"] if r["name"] == "nvidia.com/gpu")
                    total[flavor["name"]] += int(amount(gpu["nominalQuota"]))
        assert total == capacity

    def test_prod_cpu_flavor_selects_the_tenant_pool_without_gpu_tolerations(
        self, plans: dict[str, RunResult]
    ) -> None:
        """CPU-only pod sets (Ray heads) on the tenant CPU pool, not the operators' system pool."""
        assert objects(plans["prod"], "ResourceFlavor")["cpu"]["spec"] == {
            "nodeLabels": {"cloud.google.com/gke-nodepool": "tenant-cpu"}
        }


def test_hierarchical_cohorts_with_their_own_quota() -> None:
    """A child cohort with extra shared quota it may lend up to a limit, under a root cohort."""
    queues = config_value("prod", QUEUES)
    shared = {"cpu": {"nominalQuota": "0"}, "memory": {"nominalQuota": "0"}}
    shared["nvidia.com/gpu"] = {"nominalQuota": "2", "lendingLimit": "1", "borrowingLimit": "4"}
    queues["cohorts"] = [
        {"name": "org"},
        {
            "name": "ml",
            "parent": "org",
            "fairSharingWeight": "2",
            "resourceGroups": [{"flavors": [{"name": "l4", "resources": shared}]}],
        },
    ]
    result = run_stack("prod", {QUEUES: queues})
    cohorts = objects(result, "Cohort")
    assert cohorts["org"]["spec"] == {}
    ml = cohorts["ml"]["spec"]
    assert ml["parentName"] == "org"
    assert ml["fairSharing"] == {"weight": "2"}
    assert ml["resourceGroups"][0]["flavors"][0]["resources"][2] == {
        "name": "nvidia.com/gpu",
        "nominalQuota": "2",
        "borrowingLimit": "4",
        "lendingLimit": "1",
    }
    assert validate_manifests(render_manifests(result.resources)) == []


class TestKaiScenario:
    """Seed 002: department-1 -> team-a with quota/limit/overQuotaWeight (DESIGN.md scenario 3)."""

    def test_department_and_team_with_every_resource_explicit(self, plans: dict[str, RunResult]) -> None:
        queues = objects(plans["kai"], "Queue")
        assert sorted(queues) == ["department-1", "team-a"]
        dept, team = queues["department-1"]["spec"], queues["team-a"]["spec"]
        assert "parentQueue" not in dept
        assert team["parentQueue"] == "department-1"
        assert team["priority"] == 200
        for spec in (dept, team):
            assert set(spec["resources"]) == {"cpu", "gpu", "memory"}
            for values in spec["resources"].values():
                assert set(values) == {"quota", "limit", "overQuotaWeight"}
        assert team["resources"]["gpu"] == {"quota": 2, "limit": 4, "overQuotaWeight": 1}

    def test_children_are_created_after_their_parent(self, plans: dict[str, RunResult]) -> None:
        kai = plans["kai"]
        parent, child = named(kai, "queue-department-1"), named(kai, "queue-team-a")
        assert parent.urn in child.dependencies
        assert named(kai, "kai-webhooks-ready").urn in parent.dependencies
        assert named(kai, "kai-scheduler-release").urn in named(kai, "kai-webhooks-ready").dependencies

    def test_no_kueue_objects_without_kueue(self, plans: dict[str, RunResult]) -> None:
        assert not [r for r in plans["kai"].resources if r.type.startswith(KUEUE)]


def _dev_queues() -> dict[str, Any]:
    return copy.deepcopy(config_value("dev", QUEUES))


def _quota(queues: dict[str, Any], resource: str = "nvidia.com/gpu") -> dict[str, Any]:
    quota: dict[str, Any] = queues["clusterQueues"][0]["resourceGroups"][0]["flavors"][0]["resources"][
        resource
    ]
    return quota


QUOTA_PATH = f"{QUEUES}.clusterQueues[0].resourceGroups[0].flavors[0].resources.nvidia.com/gpu"


class TestQuantityErrors:
    """Quotas are Kubernetes quantities parsed with the real parser: each mistake is one line."""

    @pytest.mark.parametrize(
        ("value", "fragment"),
        [
            ("ten", "got 'ten', expected a Kubernetes quantity such as '16', '500m'"),
            ("64GB", "got '64GB', expected a Kubernetes quantity"),
            ("-1", "got '-1', expected a non-negative quantity"),
            (16, "got 16, expected a Kubernetes quantity as a quoted string, e.g. '16'"),
            (0.5, "got 0.5, expected a Kubernetes quantity as a quoted string"),
            (" 4", "expected a Kubernetes quantity without surrounding spaces"),
        ],
    )
    def test_bad_nominal_quota(self, value: object, fragment: str) -> None:
        queues = _dev_queues()
        _quota(queues)["nominalQuota"] = value
        (line,) = config_errors("dev", {QUEUES: queues})
        assert line.startswith(f"config error: {QUOTA_PATH}.nominalQuota: "), line
        assert fragment in line

    def test_lending_more_than_nominal(self) -> None:
        queues = config_value("prod", QUEUES)
        queues["clusterQueues"][0]["resourceGroups"][0]["flavors"][1]["resources"]["memory"][
            "lendingLimit"
        ] = "481Gi"
        (line,) = config_errors("prod", {QUEUES: queues})
        assert line == (
            f"config error: {QUEUES}.clusterQueues[0].resourceGroups[0].flavors[1].resources.memory.lendingLimit: "
            "got '481Gi', expected at most nominalQuota (480Gi)"
        )

    def test_lending_equal_to_nominal_in_other_units_is_fine(self) -> None:
        queues = config_value("prod", QUEUES)
        queues["clusterQueues"][0]["resourceGroups"][0]["flavors"][1]["resources"]["memory"][
            "lendingLimit"
        ] = "491520Mi"
        run_stack("prod", {QUEUES: queues})

    @pytest.mark.parametrize("limit", ["borrowingLimit", "lendingLimit"])
    def test_limits_need_a_cohort(self, limit: str) -> None:
        queues = _dev_queues()
        _quota(queues)[limit] = "1"
        (line,) = config_errors("dev", {QUEUES: queues})
        assert (
            line
            == f"config error: {QUOTA_PATH}.{limit}: got '1', expected no {limit} unless the queue has a cohort (Kueue rejects it)"
        )

    def test_cohort_limits_need_a_parent(self) -> None:
        queues = config_value("prod", QUEUES)
        queues["cohorts"][0]["resourceGroups"] = [
            {
                "flavors": [
                    {
                        "name": "l4",
                        "resources": {
                            r: {"nominalQuota": "0", "borrowingLimit": "1"}
                            for r in ("cpu", "memory", "nvidia.com/gpu")
                        },
                    }
                ]
            }
        ]
        lines = config_errors("prod", {QUEUES: queues})
        assert len(lines) == 3
        assert lines[0] == (
            f"config error: {QUEUES}.cohorts[0].resourceGroups[0].flavors[0].resources.cpu.borrowingLimit: "
            "got '1', expected no borrowingLimit unless the queue has a parent cohort (Kueue rejects it)"
        )


class TestReferenceErrors:
    def test_flavor_must_name_a_pool(self) -> None:
        queues = _dev_queues()
        queues["resourceFlavors"][0]["pool"] = "gpu-node-pol"
        (line,) = config_errors("dev", {QUEUES: queues})
        assert line == (
            f"config error: {QUEUES}.resourceFlavors[0].pool: got 'gpu-node-pol', expected a node pool of this "
            "stack (did you mean gpu-node-pool?) (gpu-node-pool, system)"
        )

    def test_queue_must_name_declared_flavors_and_checks(self) -> None:
        queues = _dev_queues()
        queues["clusterQueues"][0]["resourceGroups"][0]["flavors"][0]["name"] = "l4"
        queues["clusterQueues"][0]["admissionChecks"] = [{"name": "rayjob-gpu"}, {"name": "dws"}]
        lines = config_errors("dev", {QUEUES: queues})
        assert lines[0].startswith(
            f"config error: {QUEUES}.clusterQueues[0].resourceGroups[0].flavors[0].name: got 'l4', expected a flavor declared under resourceFlavors"
        )
        assert any(f"{QUEUES}.clusterQueues[0].admissionChecks[1].name: got 'dws'" in line for line in lines)

    def test_cohort_must_be_declared(self) -> None:
        queues = config_value("prod", QUEUES)
        queues["clusterQueues"][1]["cohort"] = "mll"
        (line,) = config_errors("prod", {QUEUES: queues})
        assert line == (
            f"config error: {QUEUES}.clusterQueues[1].cohort: got 'mll', expected a Cohort declared under cohorts "
            "(did you mean ml?) (ml); Kueue would silently start an empty cohort"
        )

    def test_cohort_cycle(self) -> None:
        queues = config_value("prod", QUEUES)
        queues["cohorts"] = [{"name": "ml", "parent": "org"}, {"name": "org", "parent": "ml"}]
        lines = config_errors("prod", {QUEUES: queues})
        assert lines[0].startswith(
            f"config error: {QUEUES}.cohorts[0].parent: got 'org', expected a parent chain"
        )

    def test_flavor_resources_must_match_covered_resources(self) -> None:
        queues = _dev_queues()
        del _quota(queues, "memory")["nominalQuota"]
        resources = queues["clusterQueues"][0]["resourceGroups"][0]["flavors"][0]["resources"]
        resources["memory"] = {"nominalQuota": "1Gi"}
        resources["ephemeral-storage"] = {"nominalQuota": "1Gi"}
        (line,) = config_errors("dev", {QUEUES: queues})
        assert line.endswith(
            "expected exactly the covered resources cpu, memory, nvidia.com/gpu; not covered: ephemeral-storage"
        )

    def test_dws_check_only_on_queued_flavors(self) -> None:
        queues = config_value("prod", QUEUES)
        del queues["clusterQueues"][0]["admissionChecks"][0]["onFlavors"]
        (line,) = config_errors("prod", {QUEUES: queues})
        assert line.startswith(
            f"config error: {QUEUES}.clusterQueues[0].admissionChecks[0].name: got 'dws', expected a check that applies "
            "only to flavors of queued pools"
        )
        assert "flavor cpu (pool: tenant-cpu)" in line

    def test_queued_flavor_needs_a_dws_check(self) -> None:
        queues = _dev_queues()
        queues["clusterQueues"][0]["admissionChecks"] = []
        (line,) = config_errors("dev", {QUEUES: queues})
        assert line == (
            f"config error: {QUEUES}.clusterQueues[0].admissionChecks: got [], expected a queued-provisioning.gke.io "
            "admission check covering flavor l4-dws: queued pool gpu-node-pool gets nodes only through ProvisioningRequests"
        )

    def test_borrow_within_cohort_needs_reclaim(self) -> None:
        queues = config_value("prod", QUEUES)
        queues["clusterQueues"][0]["preemption"]["reclaimWithinCohort"] = "Never"
        queues["clusterQueues"][0]["preemption"]["borrowWithinCohort"] = "LowerPriority"
        (line,) = config_errors("prod", {QUEUES: queues})
        assert line == (
            f"config error: {QUEUES}.clusterQueues[0].preemption.borrowWithinCohort: got 'LowerPriority', expected "
            "Never while reclaimWithinCohort is Never (Kueue rejects the combination)"
        )

    def test_duplicate_names(self) -> None:
        queues = _dev_queues()
        queues["priorityClasses"].append({"name": "prod-priority", "value": 5})
        (line,) = config_errors("dev", {QUEUES: queues})
        assert line == (
            f"config error: {QUEUES}.priorityClasses[2].name: got 'prod-priority', expected a name not used by "
            "another of priorityClasses"
        )

    def test_kueue_objects_need_kueue(self) -> None:
        lines = config_errors(
            "dev",
            {"gpu-batch:kueue": {"enabled": False}, "gpu-batch:kai": {"enabled": True, "version": "v0.17.0"}},
        )
        assert lines == [
            "config error: gpu-batch:kueue.enabled: got false, expected true: gpu-batch:kueueQueues / teams' "
            "localQueue declare Kueue objects"
        ]


KAI_TEAM = f"{KAI}[0].children[0]"


class TestKaiErrors:
    def _queues(self) -> list[dict[str, Any]]:
        return copy.deepcopy(config_value("kai", KAI))

    def test_children_quota_must_fit_the_parent(self) -> None:
        queues = self._queues()
        queues[0]["children"].append({"name": "team-b", "resources": {"gpu": {"quota": 3}}})
        (line,) = config_errors("kai", {KAI: queues})
        assert line == (
            f"config error: {KAI}[0].resources.gpu.quota: got 4, expected at least the children's gpu quotas "
            "summed (5: team-a, team-b), or -1"
        )

    def test_unlimited_child_under_a_finite_parent(self) -> None:
        queues = self._queues()
        queues[0]["children"][0]["resources"]["cpu"] = {"quota": -1, "limit": -1}
        (line,) = config_errors("kai", {KAI: queues})
        assert line.startswith(f"config error: {KAI}[0].children: got 'team-a', expected finite cpu quotas")

    def test_quota_above_limit(self) -> None:
        queues = self._queues()
        queues[0]["children"][0]["resources"]["memory"]["limit"] = 16000
        (line,) = config_errors("kai", {KAI: queues})
        assert (
            line
            == f"config error: {KAI_TEAM}.resources.memory.quota: got 32000, expected at most limit (16000), or limit -1"
        )

    def test_below_minus_one(self) -> None:
        queues = self._queues()
        queues[0]["resources"]["gpu"]["limit"] = -0.5
        (line,) = config_errors("kai", {KAI: queues})
        assert (
            line
            == f"config error: {KAI}[0].resources.gpu.limit: got -0.5, expected -1 (unlimited) or a number >= 0"
        )

    def test_names_unique_across_the_tree(self) -> None:
        queues = self._queues()
        queues[0]["children"][0]["name"] = "department-1"
        lines = config_errors("kai", {KAI: queues})
        assert lines[0] == (
            f"config error: {KAI_TEAM}.name: got 'department-1', expected a queue name used once in the whole tree "
            "(Queues are cluster-scoped)"
        )

    def test_kai_queues_need_kai(self) -> None:
        lines = config_errors(
            "kai",
            {
                "gpu-batch:kai": {"enabled": False},
                "gpu-batch:kueue": {"enabled": True},
                "gpu-batch:workloads": [],
            },
        )
        assert lines == [
            "config error: gpu-batch:kai.enabled: got false, expected true: gpu-batch:kaiQueues declares KAI queues"
        ]
