"""Every integration Kueue v0.19.2 registers, with the module that builds its pod sets.

The one list of workload kinds: the pack's pod-set counting (:mod:`workload_kinds`), the
integration rules (``rules.kueue_config``: framework names Kueue accepts and the framework a
queued object needs) and the Kueue job webhooks (``rules.webhooks.kueue_jobs``) read it.

Source: kubernetes-sigs/kueue v0.19.2, one ``jobframework.RegisterIntegration(FrameworkName, ...)``
call in the ``init`` of each ``pkg/controller/jobs/*/*_controller.go`` (the registry is
``pkg/controller/jobframework/integrationmanager.go`` ``integrationManager.register``), 18 in all;
the chart lists the same 18 names in ``managerConfig.controllerManagerConfigYaml``
``integrations.frameworks``, some commented out (``../shared/vendor/kueue-0.19.2/values.yaml``,
read by the test that keeps this list complete).  ``Integration.chart_default`` says which the
chart enables as shipped.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..model.base import KubeObject
from . import appwrapper, batch_job, jobset, kubeflow, leaderworkerset, serving, spark
from .base import Gang

Counter = Callable[[KubeObject], list[Gang]]


@dataclass(frozen=True)
class Integration:
    """One registered integration: its framework name, the kind it admits and how it is counted.

    ``counters`` is (Kueue, KAI) for kinds counted object by object; None for the families counted
    over the whole model (pods and pod groups, Ray, TrainJob with the training runtime it references:
    see ``workload_kinds._gangs``)."""

    framework: str
    group: str
    kind: str
    controller: str  # Kueue's file with its RegisterIntegration and PodSets
    chart_default: bool
    counters: tuple[Counter, Counter] | None


def _kind(
    framework: str, key: tuple[str, str], controller: str, default: bool, module: Any | None
) -> Integration:
    counters = None if module is None else (module.kueue_gangs, module.kai_gangs)
    return Integration(framework, key[0], key[1], f"pkg/controller/jobs/{controller}", default, counters)


KF = "kubeflow/jobs"
INTEGRATIONS: tuple[Integration, ...] = (
    _kind("batch/job", ("batch", "Job"), "job/job_controller.go", True, batch_job),
    _kind("pod", ("", "Pod"), "pod/pod_controller.go", True, None),
    _kind("deployment", ("apps", "Deployment"), "deployment/deployment_controller.go", True, serving),
    _kind("statefulset", ("apps", "StatefulSet"), "statefulset/statefulset_controller.go", True, serving),
    _kind("ray.io/rayjob", ("ray.io", "RayJob"), "rayjob/rayjob_controller.go", True, None),
    _kind("ray.io/raycluster", ("ray.io", "RayCluster"), "raycluster/raycluster_controller.go", True, None),
    _kind("ray.io/rayservice", ("ray.io", "RayService"), "rayservice/rayservice_controller.go", True, None),
    _kind(
        "jobset.x-k8s.io/jobset", ("jobset.x-k8s.io", "JobSet"), "jobset/jobset_controller.go", True, jobset
    ),
    _kind(
        "leaderworkerset.x-k8s.io/leaderworkerset",
        ("leaderworkerset.x-k8s.io", "LeaderWorkerSet"),
        "leaderworkerset/leaderworkerset_controller.go",
        True,
        leaderworkerset,
    ),
    _kind("kubeflow.org/mpijob", ("kubeflow.org", "MPIJob"), "mpijob/mpijob_controller.go", True, kubeflow),
    _kind(
        "kubeflow.org/pytorchjob",
        ("kubeflow.org", "PyTorchJob"),
        f"{KF}/pytorchjob/pytorchjob_controller.go",
        False,
        kubeflow,
    ),
    _kind(
        "kubeflow.org/tfjob", ("kubeflow.org", "TFJob"), f"{KF}/tfjob/tfjob_controller.go", False, kubeflow
    ),
    _kind(
        "kubeflow.org/paddlejob",
        ("kubeflow.org", "PaddleJob"),
        f"{KF}/paddlejob/paddlejob_controller.go",
        False,
        kubeflow,
    ),
    _kind(
        "kubeflow.org/xgboostjob",
        ("kubeflow.org", "XGBoostJob"),
        f"{KF}/xgboostjob/xgboostjob_controller.go",
        False,
        kubeflow,
    ),
    _kind(
        "kubeflow.org/jaxjob",
        ("kubeflow.org", "JAXJob"),
        f"{KF}/jaxjob/jaxjob_controller.go",
        False,
        kubeflow,
    ),
    _kind(
        "trainer.kubeflow.org/trainjob",
        ("trainer.kubeflow.org", "TrainJob"),
        "trainjob/trainjob_controller.go",
        True,
        None,  # needs its runtime from the model: workload_kinds.trainjob
    ),
    _kind(
        "workload.codeflare.dev/appwrapper",
        ("workload.codeflare.dev", "AppWrapper"),
        "appwrapper/appwrapper_controller.go",
        True,
        appwrapper,
    ),
    _kind(
        "sparkoperator.k8s.io/sparkapplication",
        ("sparkoperator.k8s.io", "SparkApplication"),
        "sparkapplication/sparkapplication_controller.go",
        False,
        spark,
    ),
)

BY_KIND: dict[tuple[str, str], Integration] = {(i.group, i.kind): i for i in INTEGRATIONS}
BY_FRAMEWORK: dict[str, Integration] = {i.framework: i for i in INTEGRATIONS}
FRAMEWORK_NAMES: frozenset[str] = frozenset(BY_FRAMEWORK)
# (API group, kind) -> framework name, for every kind Kueue can admit.
FRAMEWORK_OF_KIND: dict[tuple[str, str], str] = {key: i.framework for key, i in BY_KIND.items()}
