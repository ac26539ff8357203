"""Every kind of Kueue v0.19.2's integration registry is counted (workload_kinds.registry).

The registry is checked against the Kueue chart's ``integrations.frameworks`` (commented entries
included: the chart lists all 18 registered names), read at run time from
``../shared/vendor/kueue-0.19.2/values.yaml``; each kind's expected pod sets are those of
Kueue's own test for it (file and test named per case).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest
from gpu_batch_policy.facts.kueue_install import FRAMEWORKS
from gpu_batch_policy.facts.model import StackModel
from gpu_batch_policy.facts.workload_kinds import FAMILIES, kueue_gangs
from gpu_batch_policy.facts.workload_kinds.registry import BY_KIND, FRAMEWORK_NAMES, INTEGRATIONS
from gpu_batch_policy.facts.workload_kinds.spark import java_memory
from gpu_batch_policy.rules.kueue import config as kueue_config
from gpu_batch_policy.rules.webhooks import kueue_jobs

from tests.policies.test_workload_kinds import counts
from tests.policies.workload_stack import UNKNOWN, cluster_spec, k8s, pod, ray_cluster, ray_job, workers

CHART_VALUES = Path(__file__).resolve().parents[3] / "shared" / "vendor" / "kueue-0.19.2" / "values.yaml"


def chart_frameworks() -> dict[str, bool]:
    """framework -> enabled in the chart as shipped (False: listed but commented out)."""
    text = CHART_VALUES.read_text()
    block = text[text.index("      frameworks:") : text.index("externalFrameworks")]
    found = re.findall(r'^\s*(#?)\s*- "([^"]+)"\s*$', block, flags=re.MULTILINE)
    return {name: hash_ == "" for hash_, name in found}


def test_the_registry_is_kueues_and_the_charts() -> None:
    chart = chart_frameworks()
    assert len(chart) == 18
    assert set(chart) == FRAMEWORK_NAMES
    assert {i.framework: i.chart_default for i in INTEGRATIONS} == chart
    # One source: the integration rules, the job webhooks and the install read the same list.
    assert kueue_config.KNOWN_FRAMEWORKS == FRAMEWORK_NAMES
    assert set(kueue_jobs.KINDS) == set(BY_KIND) == set(FRAMEWORKS)
    assert {v[0] for v in kueue_jobs.KINDS.values()} == FRAMEWORK_NAMES


def test_kinds_the_chart_does_not_enable() -> None:
    off = sorted(i.framework for i in INTEGRATIONS if not i.chart_default)
    assert off == [
        "kubeflow.org/jaxjob",
        "kubeflow.org/paddlejob",
        "kubeflow.org/pytorchjob",
        "kubeflow.org/tfjob",
        "kubeflow.org/xgboostjob",
        "sparkoperator.k8s.io/sparkapplication",
    ]


# Each registered framework -> (Kueue v0.19.2's own test of its pod sets, under
# pkg/controller/jobs/, and the pack's test of the same counts).  A new framework fails
# test_every_framework_cites_kueues_test until both are named.
KUEUE_TESTS: dict[str, tuple[str, str]] = {
    "batch/job": (
        "job/job_controller_test.go TestPodSets",
        "test_workload_kinds::test_batch_job_parallelism_completions_and_defaults",
    ),
    "pod": ("pod/pod_controller_test.go TestPodSets", "test_workload_kinds::test_pods_and_pod_groups"),
    "deployment": (
        "deployment/deployment_webhook_test.go (pods queued one by one: pod TestPodSets)",
        "test_workload_kinds::test_deployment_pods_one_by_one_statefulset_as_one",
    ),
    "statefulset": (
        "statefulset/statefulset_reconciler_test.go TestReconciler",
        "test_workload_kinds::test_deployment_pods_one_by_one_statefulset_as_one",
    ),
    "ray.io/rayjob": (
        "rayjob/rayjob_controller_test.go TestPodSets",
        "test_workload_kinds::test_ray_counts_submitter_and_sidecars_like_kueue_019",
    ),
    "ray.io/raycluster": (
        "raycluster/raycluster_controller_test.go TestPodSets",
        "test_workload_kinds::test_ray_counts_submitter_and_sidecars_like_kueue_019",
    ),
    "ray.io/rayservice": (
        "rayservice/rayservice_controller_test.go TestPodSets",
        "test_workload_registry::test_every_registered_kind_has_a_module_that_counts_it",
    ),
    "jobset.x-k8s.io/jobset": (
        "jobset/jobset_controller_test.go TestPodSets",
        "test_workload_kinds::test_jobset_replicas_times_pods_per_job",
    ),
    "leaderworkerset.x-k8s.io/leaderworkerset": (
        "leaderworkerset/leaderworkerset_reconciler_test.go TestReconciler",
        "test_workload_kinds::test_leaderworkerset_one_gang_per_group",
    ),
    "kubeflow.org/mpijob": (
        "mpijob/mpijob_controller_test.go TestPodSets",
        "test_workload_registry::test_every_registered_kind_has_a_module_that_counts_it",
    ),
    "kubeflow.org/pytorchjob": (
        "kubeflow/jobs/pytorchjob/pytorchjob_controller_test.go TestPodSets",
        "test_workload_kinds::test_pytorchjob_roles_and_kai_min_available",
    ),
    "kubeflow.org/tfjob": (
        "kubeflow/jobs/tfjob/tfjob_controller_test.go TestPodSets",
        "test_kubeflow_kinds_in_kueues_order",
    ),
    "kubeflow.org/paddlejob": (
        "kubeflow/jobs/paddlejob/paddlejob_controller_test.go TestPodSets",
        "test_kubeflow_kinds_in_kueues_order",
    ),
    "kubeflow.org/xgboostjob": (
        "kubeflow/jobs/xgboostjob/xgboostjob_controller_test.go TestPodSets",
        "test_kubeflow_kinds_in_kueues_order",
    ),
    "kubeflow.org/jaxjob": (
        "kubeflow/jobs/jaxjob/jaxjob_controller_test.go TestPodSets",
        "test_kubeflow_kinds_in_kueues_order",
    ),
    "trainer.kubeflow.org/trainjob": (
        "trainjob/trainjob_controller_test.go TestReconciler",
        "test_trainjob_pod_sets::test_trainjob_pod_sets_as_kueues_test",
    ),
    "workload.codeflare.dev/appwrapper": (
        "appwrapper/appwrapper_controller_test.go TestPodSets",
        "test_appwrapper_pod_sets_as_kueues_test",
    ),
    "sparkoperator.k8s.io/sparkapplication": (
        "sparkapplication/sparkapplication_controller_test.go TestPodSets",
        "test_spark_application_driver_and_executors",
    ),
}


def test_every_framework_cites_kueues_test() -> None:
    import tests.policies.test_trainjob_pod_sets as trainjob_tests
    import tests.policies.test_workload_kinds as kinds_tests

    assert set(KUEUE_TESTS) == FRAMEWORK_NAMES
    for framework, (_, ours) in KUEUE_TESTS.items():
        module, _, name = ours.rpartition("::")
        holders = {"test_workload_kinds": kinds_tests, "test_trainjob_pod_sets": trainjob_tests}
        holder = holders.get(module, sys.modules[__name__])
        assert callable(getattr(holder, name, None)), (framework, ours)


def _sample(group: str, kind: str) -> Any:
    """One minimal object of each registered kind, to show it is counted."""
    api = f"{group}/v1" if group else "v1"
    template = pod(gpu=1)
    if kind == "Pod":
        return k8s("v1", "Pod", "x", spec=template["spec"])
    if group == "ray.io":
        groups = [workers("w", template, 2)]
        if kind == "RayService":
            return k8s("ray.io/v1", kind, "x", spec={"rayClusterConfig": cluster_spec(pod(), groups)})
        return (ray_cluster if kind == "RayCluster" else ray_job)("x", groups=groups)
    specs: dict[str, Any] = {
        "Job": {"template": template},
        "Deployment": {"template": template},
        "StatefulSet": {"template": template},
        "JobSet": {"replicatedJobs": [{"name": "a", "template": {"spec": {"template": template}}}]},
        "LeaderWorkerSet": {"leaderWorkerTemplate": {"size": 2, "workerTemplate": template}},
        "AppWrapper": {
            "components": [
                {"template": {"apiVersion": "batch/v1", "kind": "Job", "spec": {"template": template}}}
            ]
        },
        "SparkApplication": {"driver": {"coreRequest": "1"}, "executor": {"instances": 2}},
        "TrainJob": {"runtimeRef": {"name": "torch"}},
    }
    if kind in specs:
        return k8s(api, kind, "x", spec=specs[kind])
    key = {"MPIJob": "mpiReplicaSpecs", "TFJob": "tfReplicaSpecs", "PaddleJob": "paddleReplicaSpecs"}.get(
        kind
    )
    key = key or {"XGBoostJob": "xgbReplicaSpecs", "JAXJob": "jaxReplicaSpecs"}.get(
        kind, "pytorchReplicaSpecs"
    )
    return k8s(api, kind, "x", spec={key: {"Worker": {"replicas": 2, "template": template}}})


@pytest.mark.parametrize("integration", INTEGRATIONS, ids=lambda i: i.framework)
def test_every_registered_kind_has_a_module_that_counts_it(integration: Any) -> None:
    """Fails when Kueue registers a kind (chart list above) that no module here counts."""
    if integration.group == "ray.io" or integration.kind == "TrainJob":
        # counted over the model: Ray views (workload_kinds.ray), TrainJob with its runtime
        # (workload_kinds.trainjob)
        assert integration.counters is None
    else:
        assert integration.counters is not None or integration.kind == "Pod"
        assert (
            integration.counters is None
            or FAMILIES[(integration.group, integration.kind)] == integration.counters
        )
    found = kueue_gangs(StackModel.from_plain([_sample(integration.group, integration.kind)]))
    assert [c.obj.kind for c in found] == [integration.kind]


def job_template(parallelism: int = 2) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "spec": {"parallelism": parallelism, "template": pod(gpu=1)},
    }


def pytorch_template() -> dict[str, Any]:
    specs = {"Master": {"replicas": 1, "template": pod()}, "Worker": {"replicas": 4, "template": pod(gpu=1)}}
    return {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "spec": {"pytorchReplicaSpecs": specs}}


def appwrapper(*components: dict[str, Any], name: str = "aw") -> Any:
    return k8s("workload.codeflare.dev/v1beta2", "AppWrapper", name, spec={"components": list(components)})


def test_appwrapper_pod_sets_as_kueues_test() -> None:
    """Kueue v0.19.2 ``pkg/controller/jobs/appwrapper/appwrapper_controller_test.go`` ``TestPodSets``
    "no annotations": a PyTorchJob (Master 1, Worker 4) and a Job (parallelism 2) -> aw-0: 1,
    aw-1: 4, aw-2: 2."""
    aw = appwrapper({"template": pytorch_template()}, {"template": job_template(2)})
    assert counts([aw]) == {"aw": [("aw-0", 1), ("aw-1", 4), ("aw-2", 2)]}
    # The pod sets carry the wrapped templates: the quota rules see the Worker's GPUs.
    (gang,) = kueue_gangs(StackModel.from_plain([aw]))[0].gangs
    assert [p.template.gpus() for p in gang.pod_sets] == [0, 1, 1]
    assert gang.pod_sets[1].path == "spec.components[0].template.spec.pytorchReplicaSpecs.Worker.template"


def test_appwrapper_inference_per_kind() -> None:
    """AppWrapper v1.2.1 ``pkg/utils/utils.go`` ``InferPodSets`` (tests: ``utils_test.go``)."""
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "spec": {"replicas": 2, "template": pod()}}
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "spec": {"parallelism": 4, "completions": 3, "template": pod()},
    }
    bare = {"apiVersion": "v1", "kind": "Pod", "spec": pod()["spec"]}
    rj = {"name": "w", "replicas": 2, "template": {"spec": {"parallelism": 3, "template": pod()}}}
    jobset = {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "spec": {"replicatedJobs": [rj]}}
    ray = {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "spec": {
            "headGroupSpec": {"template": pod()},
            "workerGroupSpecs": [{"template": pod(), "numOfHosts": 4}, {"replicas": 3, "template": pod()}],
        },
    }
    stack = [
        appwrapper({"template": t}, name=f"aw{i}") for i, t in enumerate((deployment, job, bare, jobset, ray))
    ]
    assert counts(stack) == {
        "aw0": [("aw0-0", 2)],
        "aw1": [("aw1-0", 3)],
        "aw2": [("aw2-0", 1)],
        "aw3": [("aw3-0", 6)],
        # numOfHosts is not read by AppWrapper; a worker group without replicas is 1.
        "aw4": [("aw4-0", 1), ("aw4-1", 1), ("aw4-2", 3)],
    }


def test_appwrapper_declared_pod_sets_win_and_unknown_kinds_bring_none() -> None:
    custom = {
        "apiVersion": "example.com/v1",
        "kind": "Trainer",
        "spec": {"workers": {"template": pod(gpu=2)}},
    }
    declared = {"template": custom, "podSets": [{"path": "template.spec.workers.template", "replicas": 3}]}
    assert counts([appwrapper(declared)]) == {"aw": [("aw-0", 3)]}
    assert counts([appwrapper({"template": custom})]) == {"aw": []}
    # A declared path that does not resolve is skipped (GetComponentPodSpecs).
    broken = {"template": custom, "podSets": [{"path": "template.spec.nothing"}]}
    assert counts([appwrapper(broken)]) == {"aw": []}


def test_appwrapper_unknown_values_are_cannot_tell() -> None:
    unknown_parallelism = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "spec": {"replicas": UNKNOWN, "template": pod()},
    }
    assert isinstance(counts([appwrapper({"template": unknown_parallelism})])["aw"], str)
    assert isinstance(counts([appwrapper({"template": UNKNOWN})])["aw"], str)


def test_kubeflow_kinds_in_kueues_order() -> None:
    """Kueue v0.19.2 ``pkg/controller/jobs/kubeflow/jobs/tfjob/tfjob_controller_test.go``
    ``TestOrderedReplicaTypes`` / ``TestPodSets`` (Chief, Master, PS, Worker, Evaluator; only the
    present ones), and the JAXJob / PaddleJob / XGBoostJob tests of the same names."""
    tf = {
        role: {"replicas": n, "template": pod()}
        for role, n in (("Worker", 4), ("PS", 2), ("Chief", 1), ("Evaluator", 1))
    }
    stack = [
        k8s("kubeflow.org/v1", "TFJob", "tf", spec={"tfReplicaSpecs": tf}),
        k8s("kubeflow.org/v1", "JAXJob", "jax", spec={"jaxReplicaSpecs": {"Worker": {"template": pod()}}}),
        k8s(
            "kubeflow.org/v1",
            "PaddleJob",
            "pd",
            spec={
                "paddleReplicaSpecs": {
                    "Worker": {"replicas": 3, "template": pod()},
                    "Master": {"template": pod()},
                }
            },
        ),
        k8s(
            "kubeflow.org/v1",
            "XGBoostJob",
            "xgb",
            spec={"xgbReplicaSpecs": {"Master": {"replicas": 1, "template": pod()}}},
        ),
    ]
    assert counts(stack) == {
        "tf": [("Chief", 1), ("PS", 2), ("Worker", 4), ("Evaluator", 1)],
        "jax": [("Worker", 1)],
        "pd": [("Master", 1), ("Worker", 3)],
        "xgb": [("Master", 1)],
    }


def test_spark_application_driver_and_executors() -> None:
    """Kueue v0.19.2 ``pkg/controller/jobs/sparkapplication/sparkapplication_controller_test.go``
    ``TestPodSets``: driver 1, executor ``instances``; requests from coreRequest and memory."""
    spec = {
        "driver": {"coreRequest": "1", "memory": "512m", "cores": 4},
        "executor": {"instances": 3, "memory": "2g", "gpu": {"name": "nvidia.com/gpu", "quantity": 1}},
    }
    app = k8s("sparkoperator.k8s.io/v1beta2", "SparkApplication", "spark", spec=spec)
    assert counts([app]) == {"spark": [("driver", 1), ("executor", 3)]}
    (gang,) = kueue_gangs(StackModel.from_plain([app]))[0].gangs
    driver, executor = gang.pod_sets
    assert str(driver.template.request("memory")) == str(512 * 1024**2)
    assert driver.template.request("cpu") == 1  # cores is not a request
    assert executor.template.gpus() == 1
    no_executors = k8s("sparkoperator.k8s.io/v1beta2", "SparkApplication", "s", spec={"driver": {}})
    assert counts([no_executors]) == {"s": [("driver", 1), ("executor", 0)]}


def test_java_memory_units() -> None:
    """spark-operator v2.5.1 ``pkg/util/util.go`` ``ConvertJavaMemoryStringToK8sMemoryString``."""
    assert [java_memory(m) for m in ("512m", "1g", "2gb", "4Gi", "100")] == [
        "512Mi",
        "1Gi",
        "2Gi",
        "4Gi",
        "100",
    ]
    assert java_memory("512M") == "512MMi"  # matched case-insensitively, trimmed case-sensitively


def test_a_registered_kind_the_install_does_not_enable_is_reported() -> None:
    """Kueue ignores a queued AppWrapper or TFJob when its framework is off (kueue-integrations-cover-workloads)."""
    import yaml
    from gpu_batch_policy.rules.kueue.config import POLICIES as CONFIG_POLICIES

    from tests.policies.workload_stack import helm_release, run

    rule = next(p for p in CONFIG_POLICIES if p.name == "kueue-integrations-cover-workloads")
    config = {
        "apiVersion": "config.kueue.x-k8s.io/v1beta2",
        "kind": "Configuration",
        "integrations": {"frameworks": ["batch/job"]},
    }
    kueue = helm_release(
        "kueue",
        "oci://registry.k8s.io/kueue/charts/kueue",
        {"managerConfig": {"controllerManagerConfigYaml": yaml.safe_dump(config)}},
    )
    labels = {"kueue.x-k8s.io/queue-name": "lq"}
    aw = k8s(
        "workload.codeflare.dev/v1beta2",
        "AppWrapper",
        "aw",
        namespace="ml",
        labels=labels,
        spec={"components": []},
    )
    tf = k8s("kubeflow.org/v1", "TFJob", "tf", namespace="ml", labels=labels, spec={"tfReplicaSpecs": {}})
    out = run(rule, [kueue, aw, tf])
    assert out.mentions("lacks 'workload.codeflare.dev/appwrapper'", "AppWrapper 'ml/aw'")
    assert out.mentions("lacks 'kubeflow.org/tfjob'", "TFJob 'ml/tf'")
