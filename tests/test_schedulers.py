"""The operator releases each stack plans: pinned charts, values, generated Kueue Configuration,
ordering -- and the one-line config errors for scheduler keys (wire form, under the mocks)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import yaml

from components.chart_crds import ChartCrdsError
from components.kueue import KueueInstall, KueueInstallArgs
from components.kueue_config import (
    FEATURE_GATES,
    MANAGED_NAMESPACE_LABEL,
    REMOVED_FEATURE_GATES,
    KueueConfiguration,
)
from preview.harness import RunResult
from preview.records import RecordedResource
from stacks.compose.schedulers import WorkloadNeeds, kueue_configuration
from stacks.config import StackConfig
from stacks.errors import ConfigError
from tests.stack_runner import config_value, named, of_type, run_stack, unedited_run

RELEASE = "kubernetes:helm.sh/v3:Release"
NAMESPACE = "kubernetes:core/v1:Namespace"
SYSTEM_POOL = {"gpu-batch/pool-role": "system"}
# Keys of the queue layer, dropped where a test swaps the pools they select.
QUEUE_LAYER = ("gpu-batch:kueueQueues", "gpu-batch:teams", "gpu-batch:workloads")
KUEUE: dict[str, Any] = {
    "name": "kueue",
    "chart": "oci://registry.k8s.io/kueue/charts/kueue",
    "version": "0.19.2",
    "namespace": "kueue-system",
}
KAI: dict[str, Any] = {
    "name": "kai-scheduler",
    "chart": "oci://ghcr.io/kai-scheduler/kai-scheduler/kai-scheduler",
    "version": "v0.17.0",
    "namespace": "kai-scheduler",
}
KUBERAY: dict[str, Any] = {
    "name": "kuberay-operator",
    "chart": "kuberay-operator",
    "version": "1.7.0",
    "namespace": "kuberay-system",
    "repositoryOpts": {"repo": "https://ray-project.github.io/kuberay-helm/"},
}
GPU_OPERATOR: dict[str, Any] = {
    "name": "gpu-operator",
    "chart": "gpu-operator",
    "version": "v26.7.0",
    "namespace": "gpu-operator",
    "repositoryOpts": {"repo": "https://helm.ngc.nvidia.com/nvidia"},
}
EXPECTED_RELEASES: dict[str, list[dict[str, Any]]] = {
    "dev": [KUEUE, KUBERAY],
    "prod": [KUEUE, KUBERAY],
    "kai": [KAI, KUBERAY, GPU_OPERATOR],
    "skypilot": [KUEUE],
}


@pytest.fixture(scope="module")
def plans() -> dict[str, RunResult]:
    return {stack: unedited_run(stack) for stack in EXPECTED_RELEASES}


def releases(result: RunResult) -> dict[str, RecordedResource]:
    """The operator releases (SkyPilot servers are the queue layer's: tests/test_skypilot.py)."""
    return {
        r.inputs["name"]: r for r in of_type(result, RELEASE) if not r.inputs["name"].startswith("skypilot-")
    }


def kueue_document(result: RunResult) -> dict[str, Any]:
    text = releases(result)["kueue"].inputs["values"]["managerConfig"]["controllerManagerConfigYaml"]
    assert isinstance(text, str)
    doc = yaml.safe_load(text)
    assert isinstance(doc, dict)
    return doc


def stack_config(stack: str, **edits: Any) -> StackConfig:
    """A stack file's config as the program validates it, with whole keys replaced."""
    keys = ("cluster", "gpuPools", "kueue", "kai", "kuberay")
    document = {key: config_value(stack, f"gpu-batch:{key}") for key in keys if _has(stack, key)}
    return StackConfig.model_validate({**document, **edits})


def _has(stack: str, key: str) -> bool:
    try:
        config_value(stack, f"gpu-batch:{key}")
    except KeyError:
        return False
    return True


class TestReleases:
    @pytest.mark.parametrize("stack", sorted(EXPECTED_RELEASES))
    def test_pinned_charts_in_own_namespaces(self, plans: dict[str, RunResult], stack: str) -> None:
        planned = releases(plans[stack])
        assert sorted(planned) == sorted(r["name"] for r in EXPECTED_RELEASES[stack])
        namespaces = {r.inputs["metadata"]["name"]: r.urn for r in of_type(plans[stack], NAMESPACE)}
        for expected in EXPECTED_RELEASES[stack]:
            inputs = planned[expected["name"]].inputs
            for key, value in expected.items():
                assert inputs[key] == value, (stack, expected["name"], key)
            assert inputs["createNamespace"] is False
            # The release waits for the Namespace object the stack manages.
            assert namespaces[expected["namespace"]] in planned[expected["name"]].dependencies

    @pytest.mark.parametrize("stack", sorted(EXPECTED_RELEASES))
    def test_operators_run_on_the_system_pool(self, plans: dict[str, RunResult], stack: str) -> None:
        for name, release in releases(plans[stack]).items():
            values = release.inputs["values"]
            selectors: dict[str, Callable[[Any], Any]] = {
                "kueue": lambda v: v["controllerManager"]["nodeSelector"],
                "kai-scheduler": lambda v: v["global"]["nodeSelector"],
                "kuberay-operator": lambda v: v["nodeSelector"],
                # The operator Deployment (also pinned to Linux, the chart default); its NFD
                # master/gc likewise; its operands run on the GPU nodes by design.
                "gpu-operator": lambda v: {
                    k: x for k, x in v["operator"]["nodeSelector"].items() if k != "kubernetes.io/os"
                },
            }
            selector = selectors[name](values)
            assert selector == SYSTEM_POOL, name
            if name == "gpu-operator":
                nfd = values["node-feature-discovery"]
                assert nfd["master"]["nodeSelector"] == nfd["gc"]["nodeSelector"] == SYSTEM_POOL

    @pytest.mark.parametrize("stack", sorted(EXPECTED_RELEASES))
    def test_releases_use_the_cluster_provider(self, plans: dict[str, RunResult], stack: str) -> None:
        # The cluster provider, not the one that creates retained objects by upsert.
        (provider,) = [
            p
            for p in of_type(plans[stack], "pulumi:providers:kubernetes")
            if "upsertExistingObjects" not in p.inputs
        ]
        for release in releases(plans[stack]).values():
            assert release.provider.startswith(provider.urn + "::")

    def test_components_parent_their_releases(self, plans: dict[str, RunResult]) -> None:
        dev = plans["dev"]
        assert named(dev, "kueue").type == "gpu-batch:kueue:Install"
        assert named(dev, "kueue-release").parent == named(dev, "kueue").urn
        kai = plans["kai"]
        assert named(kai, "kai-scheduler").type == "gpu-batch:kai:Install"
        assert named(kai, "kuberay-operator").type == "gpu-batch:kuberay:Operator"

    def test_exported_operator_versions(self, plans: dict[str, RunResult]) -> None:
        assert plans["dev"].outputs["operators"] == {"kueue": "0.19.2", "kuberay-operator": "1.7.0"}
        assert plans["kai"].outputs["operators"] == {"kai-scheduler": "v0.17.0", "kuberay-operator": "1.7.0"}


class TestOrdering:
    """Kueue first (its webhooks fail closed), KAI next, KubeRay last."""

    def test_kuberay_waits_for_kueue(self, plans: dict[str, RunResult]) -> None:
        dev = plans["dev"]
        assert named(dev, "kueue-release").urn in named(dev, "kuberay-operator-release").dependencies

    def test_kuberay_waits_for_kai(self, plans: dict[str, RunResult]) -> None:
        kai = plans["kai"]
        assert named(kai, "kai-scheduler-release").urn in named(kai, "kuberay-operator-release").dependencies

    def test_kai_waits_for_kueue_when_both(self) -> None:
        both = run_stack("kai", {"gpu-batch:kueue": {"enabled": True}})
        kai_release = named(both, "kai-scheduler-release")
        assert named(both, "kueue-release").urn in kai_release.dependencies
        assert kai_release.urn in named(both, "kuberay-operator-release").dependencies

    def test_kueue_waits_for_no_other_operator(self, plans: dict[str, RunResult]) -> None:
        deps = named(plans["dev"], "kueue-release").dependencies
        assert [d for d in deps if "Release" in d] == []


class TestKueueConfiguration:
    @pytest.mark.parametrize(
        ("stack", "frameworks"),
        [
            ("dev", ["batch/job", "ray.io/rayjob", "ray.io/raycluster"]),
            ("prod", ["batch/job", "ray.io/rayjob", "ray.io/raycluster"]),
            ("skypilot", ["batch/job", "pod"]),
        ],
    )
    def test_integrations_each_stack_needs(
        self, plans: dict[str, RunResult], stack: str, frameworks: list[str]
    ) -> None:
        doc = kueue_document(plans[stack])
        assert doc["apiVersion"] == "config.kueue.x-k8s.io/v1beta2"
        assert doc["kind"] == "Configuration"
        assert doc["integrations"] == {"frameworks": frameworks}

    @pytest.mark.parametrize("stack", ["dev", "prod", "skypilot"])
    def test_wait_for_pods_ready_is_explicit(self, plans: dict[str, RunResult], stack: str) -> None:
        ready = kueue_document(plans[stack])["waitForPodsReady"]
        assert set(ready) == {"timeout", "recoveryTimeout", "blockAdmission", "requeuingStrategy"}
        assert "enable" not in ready  # v1beta2: the block's presence enables it
        assert set(ready["requeuingStrategy"]) == {
            "timestamp",
            "backoffLimitCount",
            "backoffBaseSeconds",
            "backoffMaxSeconds",
        }

    def test_stack_values_reach_the_document(self, plans: dict[str, RunResult]) -> None:
        prod = kueue_document(plans["prod"])["waitForPodsReady"]
        assert prod["timeout"] == "20m"
        assert prod["recoveryTimeout"] == "20m"
        assert prod["requeuingStrategy"]["backoffLimitCount"] == 6

    def test_block_admission_derived_from_pools(self, plans: dict[str, RunResult]) -> None:
        # dev: every GPU pool is queued (capacity comes all at once) -> no serialised admission.
        assert kueue_document(plans["dev"])["waitForPodsReady"]["blockAdmission"] is False
        on_demand = config_value("dev", "gpu-batch:gpuPools")
        on_demand[0]["provisioning"] = "on-demand"
        # The dev queues' DWS admission check needs a queued pool, so they go with the edit.
        edited = run_stack("dev", {"gpu-batch:gpuPools": on_demand}, drop=QUEUE_LAYER)
        assert kueue_document(edited)["waitForPodsReady"]["blockAdmission"] is True

    def test_explicit_block_admission_wins(self) -> None:
        kueue = config_value("dev", "gpu-batch:kueue")
        kueue["waitForPodsReady"]["blockAdmission"] = True
        doc = kueue_document(run_stack("dev", {"gpu-batch:kueue": kueue}))
        assert doc["waitForPodsReady"]["blockAdmission"] is True

    def test_pod_integration_is_scoped_to_labelled_team_namespaces(self, plans: dict[str, RunResult]) -> None:
        """The chart makes this selector the pod webhooks' namespaceSelector: team namespaces only
        (issue 10 #9), not a fail-closed webhook on every namespace."""
        doc = kueue_document(plans["skypilot"])
        assert doc["manageJobsWithoutQueueName"] is False
        assert doc["managedJobsNamespaceSelector"] == {"matchLabels": MANAGED_NAMESPACE_LABEL}
        assert doc["namespace"] == "kueue-system"

    def test_prod_strict_tenancy_opts_namespaces_in(self, plans: dict[str, RunResult]) -> None:
        doc = kueue_document(plans["prod"])
        assert doc["manageJobsWithoutQueueName"] is True
        # Not "all but kube-system": that would suspend other operators' hook Jobs.
        assert doc["managedJobsNamespaceSelector"] == {"matchLabels": MANAGED_NAMESPACE_LABEL}

    def test_chart_defaults_kept(self, plans: dict[str, RunResult]) -> None:
        doc = kueue_document(plans["dev"])
        assert doc["health"] == {"healthProbeBindAddress": ":8081"}
        # The chart's bind address, plus the per-flavor quota gauges a quota panel reads.
        assert doc["metrics"] == {"bindAddress": ":8443", "enableClusterQueueResources": True}
        assert doc["webhook"] == {"port": 9443}
        assert doc["leaderElection"] == {"leaderElect": True, "resourceName": "c1f6bfd2.kueue.x-k8s.io"}
        assert doc["clientConnection"] == {"qps": 300, "burst": 500}
        assert doc["controller"]["groupKindConcurrency"]["Workload.kueue.x-k8s.io"] == 10
        assert doc["internalCertManagement"] == {
            "enable": True,
            "webhookServiceName": "kueue-webhook-service",
            "webhookSecretName": "kueue-webhook-server-cert",
        }

    @pytest.mark.parametrize("stack", ["dev", "prod", "skypilot"])
    def test_no_removed_or_misplaced_feature_gates(self, plans: dict[str, RunResult], stack: str) -> None:
        release = releases(plans[stack])["kueue"]
        gates = release.inputs["values"]["controllerManager"]["featureGates"]
        assert all(g["name"] in FEATURE_GATES for g in gates)
        assert not {g["name"] for g in gates} & set(REMOVED_FEATURE_GATES)
        # Gates in both places stop the manager; they belong only in the chart value.
        assert "featureGates" not in kueue_document(plans[stack])

    def test_feature_gates_render_as_chart_list(self) -> None:
        kueue = config_value("dev", "gpu-batch:kueue")
        kueue["featureGates"] = {"TopologyAwareScheduling": False, "PartialAdmission": True}
        release = releases(run_stack("dev", {"gpu-batch:kueue": kueue}))["kueue"]
        assert release.inputs["values"]["controllerManager"]["featureGates"] == [
            {"name": "PartialAdmission", "enabled": True},
            {"name": "TopologyAwareScheduling", "enabled": False},
        ]

    def test_fair_sharing_only_when_asked(self, plans: dict[str, RunResult]) -> None:
        assert "fairSharing" not in kueue_document(plans["dev"])
        kueue = config_value("dev", "gpu-batch:kueue")
        kueue["fairSharing"] = {"preemptionStrategies": ["LessThanInitialShare"]}
        doc = kueue_document(run_stack("dev", {"gpu-batch:kueue": kueue}))
        assert doc["fairSharing"] == {"preemptionStrategies": ["LessThanInitialShare"]}


class TestWorkloadNeeds:
    """What the queue/tenancy/SkyPilot layer passes in reaches the Configuration."""

    def test_defaults_change_nothing(self) -> None:
        config = kueue_configuration(stack_config("dev"), WorkloadNeeds())
        assert config.frameworks == ("batch/job", "ray.io/rayjob", "ray.io/raycluster")
        assert config.fair_sharing_strategies is None
        assert config.manage_jobs_without_queue_name is False

    def test_skypilot_servers_add_pod_once(self) -> None:
        config = kueue_configuration(stack_config("skypilot"), WorkloadNeeds(pod_integration=True))
        assert config.frameworks == ("batch/job", "pod")

    def test_cohorts_with_fair_sharing_enable_it(self) -> None:
        config = kueue_configuration(stack_config("dev"), WorkloadNeeds(fair_sharing=True))
        assert config.fair_sharing_strategies == ("LessThanOrEqualToFinalShare", "LessThanInitialShare")
        assert yaml.safe_load(config.to_yaml())["fairSharing"]["preemptionStrategies"] == [
            "LessThanOrEqualToFinalShare",
            "LessThanInitialShare",
        ]

    def test_strict_tenancy_request(self) -> None:
        config = kueue_configuration(stack_config("dev"), WorkloadNeeds(strict_tenancy=True))
        assert config.document()["manageJobsWithoutQueueName"] is True
        assert config.document()["managedJobsNamespaceSelector"] == {"matchLabels": MANAGED_NAMESPACE_LABEL}


class TestKaiStack:
    def test_kai_values(self, plans: dict[str, RunResult]) -> None:
        values = releases(plans["kai"])["kai-scheduler"].inputs["values"]
        assert values["global"]["gpuSharing"] is True
        assert values["global"]["clusterAutoscaling"] is True
        # The chart's unmanaged, quota-less default queue stays off: queues are code.
        assert values["defaultQueue"] == {"createDefaultQueue": False}
        # Operands get the system pool through global.affinity (nodeSelector pins only the operator).
        term = values["global"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        assert term["nodeSelectorTerms"] == [
            {"matchExpressions": [{"key": "gpu-batch/pool-role", "operator": "In", "values": ["system"]}]}
        ]

    def test_kuberay_wired_to_kai(self, plans: dict[str, RunResult]) -> None:
        values = releases(plans["kai"])["kuberay-operator"].inputs["values"]
        assert values["batchScheduler"] == {"name": "kai-scheduler"}  # never the deprecated `enabled`

    def test_kuberay_without_kai_has_no_batch_scheduler(self, plans: dict[str, RunResult]) -> None:
        assert "batchScheduler" not in releases(plans["dev"])["kuberay-operator"].inputs["values"]

    def test_kai_stack_has_no_kueue_and_an_on_demand_pool(self, plans: dict[str, RunResult]) -> None:
        kai = plans["kai"]
        assert "kueue" not in releases(kai)
        pool = named(kai, "l4-pool-pool").inputs
        assert "queuedProvisioning" not in pool
        assert pool["autoscaling"]["totalMinNodeCount"] == 0


class TestComponentGuards:
    """The components refuse what would crash-loop Kueue, whoever calls them."""

    def test_configuration_problems(self) -> None:
        assert KueueConfiguration().problems() == []
        assert KueueConfiguration(frameworks=("batch/job", "deployment")).problems() == [
            "integrations ['deployment'] require the pod integration"
        ]
        assert "unknown integrations" in KueueConfiguration(frameworks=("ray.io/rayjobs",)).problems()[0]
        bad_order = KueueConfiguration(
            fair_sharing_strategies=("LessThanInitialShare", "LessThanOrEqualToFinalShare")
        )
        assert "preemptionStrategies" in bad_order.problems()[0]

    def test_install_refuses_removed_gate(self) -> None:
        with pytest.raises(ValueError, match=r"ProvisioningACC: expected a feature gate of Kueue 0\.19\.2"):
            KueueInstall("kueue", KueueInstallArgs(feature_gates={"ProvisioningACC": True}))


def config_error(stack: str, edits: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        run_stack(stack, edits)
    return str(caught.value).splitlines()


def kueue_with(**changes: Any) -> dict[str, Any]:
    kueue: dict[str, Any] = config_value("dev", "gpu-batch:kueue")
    return {**kueue, **changes}


class TestConfigErrors:
    @pytest.mark.parametrize(
        ("edits", "line"),
        [
            (
                {"gpu-batch:kueue": kueue_with(featureGates={"ProvisioningACC": True})},
                "config error: gpu-batch:kueue.featureGates.ProvisioningACC: got true, expected a feature gate "
                "of Kueue 0.19.2; ProvisioningACC was removed in 0.15; the ProvisioningRequest admission check is always on",
            ),
            (
                {"gpu-batch:kueue": kueue_with(featureGates={"LendingLimit": True})},
                "config error: gpu-batch:kueue.featureGates.LendingLimit: got true, expected a feature gate of "
                "Kueue 0.19.2; LendingLimit was GA in 0.17 and removed after 0.18; lendingLimit is always available",
            ),
            (
                {
                    "gpu-batch:kueue": kueue_with(
                        featureGates={"ManagedJobsNamespaceSelectorAlwaysRespected": False}
                    )
                },
                "config error: gpu-batch:kueue.featureGates.ManagedJobsNamespaceSelectorAlwaysRespected: got false, "
                "expected true or no entry: ManagedJobsNamespaceSelectorAlwaysRespected is GA and locked to true in 0.19.2",
            ),
            (
                {"gpu-batch:kueue": kueue_with(version="v0.19.2")},
                "config error: gpu-batch:kueue.version: got 'v0.19.2', expected a chart version "
                "MAJOR.MINOR.PATCH without a leading v, e.g. 0.19.2",
            ),
            (
                {"gpu-batch:kueue": kueue_with(version="0.14.3")},
                "config error: gpu-batch:kueue.version: got '0.14.3', expected 0.15.0 or newer (the stack "
                "writes v1beta2 Kueue objects and Configuration, served from 0.15)",
            ),
            (
                {"gpu-batch:kueue": kueue_with(version="0.18.6", featureGates={"PartialAdmission": True})},
                'config error: gpu-batch:kueue.featureGates: got {"PartialAdmission": true}, expected no feature '
                "gates unless version is 0.19.x: gates are checked against Kueue 0.19.2's list",
            ),
            (
                {"gpu-batch:kuberay": {"version": "latest"}},
                "config error: gpu-batch:kuberay.version: got 'latest', expected a chart version "
                "MAJOR.MINOR.PATCH without a leading v, e.g. 1.7.0",
            ),
            (
                {"gpu-batch:kueue": kueue_with(versoin="0.19.2")},
                "config error: gpu-batch:kueue.versoin: got 'versoin', expected a known key (did you mean "
                "version?); this mapping accepts enabled, version, manageJobsWithoutQueueName, waitForPodsReady, "
                "fairSharing, featureGates, extraFrameworks",
            ),
            (
                {"gpu-batch:kueue": kueue_with(waitForPodsReady={"timeout": "0s"})},
                "config error: gpu-batch:kueue.waitForPodsReady.timeout: got '0s', expected a positive duration "
                "such as 10m, 90s or 1h30m",
            ),
            (
                {"gpu-batch:kueue": kueue_with(extraFrameworks=["deployment"])},
                "config error: gpu-batch:kueue.extraFrameworks[0]: got 'deployment', expected pod in "
                "extraFrameworks as well: Kueue runs deployment through the pod integration",
            ),
            (
                {"gpu-batch:kai": {"gpuSharing": True}},
                "config error: gpu-batch:kai.gpuSharing: got true, expected no value while gpu-batch:kai.enabled "
                "is false (it would be ignored)",
            ),
            (
                {"gpu-batch:kueue": {"enabled": False}},
                "config error: gpu-batch:kueue.enabled: got false, expected true, or gpu-batch:kai.enabled: true "
                "(the platform needs a gang scheduler)",
            ),
        ],
        ids=[
            "removed-gate",
            "removed-gate-lendinglimit",
            "locked-gate",
            "kueue-v-prefix",
            "kueue-too-old",
            "gates-other-minor",
            "kuberay-not-semver",
            "unknown-nested-key",
            "zero-timeout",
            "deployment-needs-pod",
            "kai-key-while-off",
            "no-gang-scheduler",
        ],
    )
    def test_one_line_naming_the_key(self, edits: dict[str, Any], line: str) -> None:
        assert config_error("dev", edits) == [line]

    def test_kai_version_needs_v_and_kuberay_the_kai_plugin(self) -> None:
        lines = config_error(
            "kai",
            {
                "gpu-batch:kai": {"enabled": True, "version": "0.13.0"},
                "gpu-batch:kuberay": {"version": "1.4.2"},
            },
        )
        assert lines == [
            "config error: gpu-batch:kai.version: got '0.13.0', expected a chart version vMAJOR.MINOR.PATCH, e.g. v0.17.0",
            "config error: gpu-batch:kuberay.version: got '1.4.2', expected 1.5.0 or newer (the kai-scheduler batch "
            "scheduler first shipped in KubeRay 1.5.0)",
        ]

    def test_kai_before_fraction_only_runtime_class_is_refused(self) -> None:
        """v0.13.0 injects runtimeClassName nvidia into every GPU pod; GKE has no such class (issue 10 #3)."""
        lines = config_error("kai", {"gpu-batch:kai": {"enabled": True, "version": "v0.13.0"}})
        assert lines == [
            "config error: gpu-batch:kai.version: got 'v0.13.0', expected v0.16.0 or newer (older releases "
            "inject runtimeClassName nvidia into GPU pods, which GKE's managed drivers lack)"
        ]

    def test_retracted_kai_tag(self) -> None:
        lines = config_error("kai", {"gpu-batch:kai": {"enabled": True, "version": "v0.20.1"}})
        assert lines == [
            "config error: gpu-batch:kai.version: got 'v0.20.1', expected a KAI release (v0.20.0 and v0.20.1 are retracted tags)"
        ]

    def test_unknown_top_level_key(self) -> None:
        (line,) = config_error("dev", {"gpu-batch:kueu": {"enabled": True}})
        assert line.startswith(
            "config error: gpu-batch:kueu: got 'kueu', expected a known key (did you mean kueue?)"
        )

    def test_kuberay_one_dot_five_is_enough_with_kai(self) -> None:
        """1.5.0 passes the config checks; the program then reads that chart's ``crds/`` (issue 21,
        item 4: the CRDs are resources of their own), which the offline mirror does not hold, so
        it stops with one line naming the chart, never with a config error."""
        try:
            result = run_stack("kai", {"gpu-batch:kuberay": {"version": "1.5.0"}})
        except ChartCrdsError as error:
            assert str(error).startswith("chart kuberay-operator 1.5.0: CRDs: cannot resolve chart")
            assert "\n" not in str(error)
        else:  # a machine that can pull the chart
            assert releases(result)["kuberay-operator"].inputs["version"] == "1.5.0"
