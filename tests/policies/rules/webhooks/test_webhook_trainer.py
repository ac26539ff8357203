"""trainer-webhook, written from Kubeflow Trainer v2.2.1's test tables.

Sources, kubeflow/trainer v2.2.1: ``pkg/webhooks/trainingruntime_webhook_test.go``
``TestValidateReplicatedJobs``; ``pkg/webhooks/trainjob_webhook_test.go`` ``TestValidateCreate``;
``pkg/runtime/framework/plugins/jobset/jobset_test.go`` ``TestValidate``;
``.../torch/torch_test.go`` ``TestTorchValidate``; ``.../xgboost/xgboost_test.go``
``TestXGBoostValidate``; ``.../mpi/mpi_test.go`` ``TestValidate``; ``.../flux/flux_test.go``
``TestValidate``.  Each test names the table cases it follows.
"""

from __future__ import annotations

from typing import Any

import pytest
from gpu_batch_policy.rules.webhooks.trainer import POLICIES

from tests.policies.workload_stack import Registration, k8s, run

RULE = POLICIES[0]
ANCESTOR = "trainer.kubeflow.org/trainjob-ancestor-step"


def rjob(
    name: str, ancestor: str | None = None, containers: tuple[str, ...] = ("node",), **extra: Any
) -> dict[str, Any]:
    pod = {"spec": {"containers": [{"name": c, "image": "img"} for c in containers]}}
    template: dict[str, Any] = {"spec": {"template": pod}}
    if ancestor is not None:
        template["metadata"] = {"labels": {ANCESTOR: ancestor}}
    if "init" in extra:
        pod["spec"]["initContainers"] = [{"name": c, "image": "img"} for c in extra.pop("init")]
    return {"name": name, "template": template, **extra}


def runtime(
    *rjobs: dict[str, Any], name: str = "rt", kind: str = "ClusterTrainingRuntime", **spec: Any
) -> Registration:
    body = {"template": {"spec": {"replicatedJobs": list(rjobs)}}, **spec}
    namespace = "ns" if kind == "TrainingRuntime" else None
    return k8s("trainer.kubeflow.org/v1alpha1", kind, name, namespace=namespace, spec=body)


def trainjob(runtime_name: str = "rt", **spec: Any) -> Registration:
    return k8s(
        "trainer.kubeflow.org/v1alpha1",
        "TrainJob",
        "tj",
        namespace="ns",
        spec={"runtimeRef": {"name": runtime_name}, **spec},
    )


def outcome(*regs: Registration) -> Any:
    return run(RULE, list(regs))


def clean(*regs: Registration) -> bool:
    result = outcome(*regs)
    return result.violations == [] and result.cannot_check is None


TORCH: dict[str, Any] = {"mlPolicy": {"numNodes": 1, "torch": {}}}
NODE_JOB = rjob("node", "trainer")


# --- TestValidateReplicatedJobs -----------------------------------------------------------------
@pytest.mark.parametrize("kind", ["ClusterTrainingRuntime", "TrainingRuntime"])
def test_runtime_replicated_jobs(kind: str) -> None:
    """ "valid replicatedJobs", "valid replicatedJobs with unknown user-specified ancestor",
    "invalid replicas", "missing required container in replicatedJobs"."""
    valid = runtime(
        rjob("dataset-initializer", "dataset-initializer", ("dataset-initializer",)), NODE_JOB, kind=kind
    )
    assert clean(valid)
    assert clean(runtime(rjob("x", "user-step", ("anything",)), kind=kind))
    assert outcome(runtime(rjob("node", "trainer", replicas=2), kind=kind)).mentions(
        "Trainer v2.2.1", "replicas 2", "must always be 1"
    )
    missing = runtime(rjob("model-initializer", "model-initializer", ("init",)), kind=kind)
    assert outcome(missing).mentions("no container named 'model-initializer'")


# --- TestValidateCreate (trainjob_webhook_test.go) -----------------------------------------------
def test_trainjob_runtime_ref() -> None:
    """ "valid trainjob name compliant with RFC 1035" and "unsupported runtime"."""
    assert clean(runtime(NODE_JOB, **TORCH), trainjob())
    bad = k8s(
        "trainer.kubeflow.org/v1alpha1",
        "TrainJob",
        "tj",
        namespace="ns",
        spec={"runtimeRef": {"name": "rt", "apiGroup": "trainer.kubeflow.org", "kind": "Unsupported"}},
    )
    assert outcome(bad).mentions("unsupported runtime: Unsupported.trainer.kubeflow.org")


def test_runtime_outside_the_program_is_cannot_check() -> None:
    result = outcome(trainjob("elsewhere"))
    assert result.violations == [] and "elsewhere" in (result.cannot_check or "")
    # the manager path needs no runtime, so it is still judged
    patched = trainjob("elsewhere", runtimePatches=[{"manager": "not-a-path"}])
    assert outcome(patched).mentions("manager 'not-a-path'")


# --- jobset plugin TestValidate ------------------------------------------------------------------
def test_initializers() -> None:
    """ "no initializer job", "must have dataset initializer job when trainJob is configured with input
    datasetConfig", "must have container with name - dataset initializer ...", and the model cases."""
    dataset: dict[str, Any] = {"initializer": {"dataset": {"storageUri": "hf://x"}}}
    model: dict[str, Any] = {"initializer": {"model": {"storageUri": "hf://y"}}}
    assert clean(runtime(NODE_JOB), trainjob())
    assert outcome(runtime(NODE_JOB), trainjob(**dataset)).mentions("no dataset-initializer job")
    wrong = rjob("dataset-initializer", None, ("other",))
    assert outcome(runtime(wrong, NODE_JOB), trainjob(**dataset)).mentions(
        "no container named dataset-initializer"
    )
    assert outcome(runtime(NODE_JOB), trainjob(**model)).mentions("no model-initializer job")
    good = rjob("model-initializer", None, ("model-initializer",))
    assert clean(runtime(good, NODE_JOB), trainjob(**model))


def patches(*rjobs: dict[str, Any], manager: str = "trainer.kubeflow.org/kueue") -> list[dict[str, Any]]:
    return [
        {"manager": manager, "trainingRuntimeSpec": {"template": {"spec": {"replicatedJobs": list(rjobs)}}}}
    ]


def pod_patch(name: str, **pod: Any) -> dict[str, Any]:
    return {"name": name, "template": {"spec": {"template": {"spec": pod}}}}


def test_runtime_patches() -> None:
    """ "runtimePatches contain invalid replicated job / initContainer / container / envs for reserved
    container", "allow runtimePatches when creating a new trainJob"."""
    rt = runtime(rjob("node", "trainer", ("node", "sidecar"), init=("setup",)))
    assert clean(rt, trainjob(runtimePatches=patches(pod_patch("node", containers=[{"name": "sidecar"}]))))
    assert outcome(rt, trainjob(runtimePatches=patches(pod_patch("nope")))).mentions("replicated job 'nope'")
    bad_init = patches(pod_patch("node", initContainers=[{"name": "ghost"}]))
    assert outcome(rt, trainjob(runtimePatches=bad_init)).mentions("initContainer 'ghost'")
    bad_container = patches(pod_patch("node", containers=[{"name": "ghost"}]))
    assert outcome(rt, trainjob(runtimePatches=bad_container)).mentions("container 'ghost'")
    env = patches(pod_patch("node", containers=[{"name": "node", "env": [{"name": "A", "value": "1"}]}]))
    assert outcome(rt, trainjob(runtimePatches=env)).mentions("sets env on the 'node' container")
    assert outcome(rt, trainjob(runtimePatches=patches(manager="kueue"))).mentions("manager 'kueue'")


# --- torch / xgboost / mpi / flux ---------------------------------------------------------------
def env(*names: str) -> dict[str, Any]:
    return {"trainer": {"env": [{"name": n, "value": "1"} for n in names]}}


def test_torch_reserved_env() -> None:
    """TestTorchValidate "valid environment variable present" / "reserved environment variable present"."""
    assert clean(runtime(NODE_JOB, **TORCH), trainjob(**env("TEST_ENV")))
    assert outcome(runtime(NODE_JOB, **TORCH), trainjob(**env("PET_NNODES", "PET_MASTER_PORT"))).mentions(
        "['PET_MASTER_PORT', 'PET_NNODES']"
    )
    # "no action when info has MLPolicySource but no Torch policy"
    assert clean(runtime(NODE_JOB, mlPolicy={"numNodes": 1}), trainjob(**env("PET_NNODES")))


def test_xgboost_reserved_env() -> None:
    """TestXGBoostValidate: "no error when env does not contain reserved names", "error when using
    reserved DMLC_TRACKER_URI env", "... DMLC_NUM_WORKER", "no error when runtime is not XGBoost"."""
    xgb: dict[str, Any] = {"mlPolicy": {"xgboost": {}}}
    assert clean(runtime(NODE_JOB, **xgb), trainjob(**env("MY_VAR")))
    assert outcome(runtime(NODE_JOB, **xgb), trainjob(**env("DMLC_TRACKER_URI"))).mentions("DMLC_TRACKER_URI")
    assert outcome(runtime(NODE_JOB, **xgb), trainjob(**env("DMLC_NUM_WORKER"))).mentions("DMLC_NUM_WORKER")
    assert clean(runtime(NODE_JOB, **TORCH), trainjob(**env("DMLC_TRACKER_URI")))


def test_mpi_launcher_as_node() -> None:
    """mpi TestValidate: "runtime does not have Launcher but TrainJob has only 1 numNodes" (valid),
    "... does not have Launcher / Node / Launcher and Node even though ... 2 numNodes"."""
    mpi: dict[str, Any] = {"mlPolicy": {"mpi": {"runLauncherAsNode": True}}}
    only_node = runtime(rjob("node", "trainer"), **mpi)
    assert clean(only_node, trainjob(trainer={"numNodes": 1}))
    assert outcome(only_node, trainjob(trainer={"numNodes": 2})).mentions("lacks a launcher or node job")
    only_launcher = runtime(rjob("launcher", None, ("launcher",)), **mpi)
    assert outcome(only_launcher, trainjob(trainer={"numNodes": 2})).mentions("lacks a launcher or node job")
    both = runtime(rjob("launcher", None, ("launcher",)), rjob("node", "trainer"), **mpi)
    assert clean(both, trainjob(trainer={"numNodes": 2}))


def test_flux() -> None:
    """flux TestValidate "valid when flux policy is present", and the two refusals of ``Validate``."""
    assert clean(runtime(NODE_JOB, mlPolicy={"flux": {"numProcPerNode": 1}}), trainjob())
    assert outcome(runtime(NODE_JOB, mlPolicy={"flux": {"numProcPerNode": 0}}), trainjob()).mentions(
        "numProcPerNode 0"
    )
    reserved = runtime(rjob("node", "trainer", init=("flux-installer",)), mlPolicy={"flux": {}})
    assert outcome(reserved, trainjob()).mentions("'flux-installer'")
