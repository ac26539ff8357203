"""mpijob-validation, written from the MPI operator v0.8.2's own test table.

Source: kubeflow/mpi-operator ``b10758d`` (release-0.8, "Prepare v0.8.2")
``pkg/apis/kubeflow/validation/validation_test.go`` ``TestValidateMPIJob``: each test names its case.
The table runs ``ValidateMPIJob`` without the scheme's defaults; the operator defaults first
(``syncHandler``), so "empty job" and "missing replica spec fields" are judged here after them.
"""

from __future__ import annotations

from typing import Any

from gpu_batch_policy.rules.webhooks.mpi import POLICIES

from tests.policies.workload_stack import UNKNOWN, Registration, k8s, run

RULE = POLICIES[0]
POD = {"spec": {"containers": [{"name": "mpi", "image": "mpioperator/mpi-pi"}]}}


def replica(replicas: int | None = 1, restart: str | None = "Never", pod: Any = POD) -> dict[str, Any]:
    spec: dict[str, Any] = {"template": pod}
    if replicas is not None:
        spec["replicas"] = replicas
    if restart is not None:
        spec["restartPolicy"] = restart
    return spec


def mpijob(name: str = "foo", api: str = "kubeflow.org/v2beta1", **spec: Any) -> Registration:
    body = {
        "slotsPerWorker": 2,
        "runPolicy": {"cleanPodPolicy": "Running"},
        "sshAuthMountPath": "/root/.ssh",
        "mpiImplementation": "OpenMPI",
        "mpiReplicaSpecs": {"Launcher": replica()},
    }
    body.update(spec)
    return k8s(api, "MPIJob", name, namespace="ns", spec=body)


def refused(reg: Registration, *parts: str) -> bool:
    return run(RULE, [reg]).mentions("MPI operator v0.8.2", *parts)


def clean(reg: Registration) -> bool:
    outcome = run(RULE, [reg])
    return outcome.violations == [] and outcome.cannot_check is None


def test_valid_cases() -> None:
    """ "valid (intel)", "valid with worker (intel)", "valid (mpich)", "valid with worker (mpich)"."""
    assert clean(mpijob(mpiImplementation="Intel"))
    with_worker = {"Launcher": replica(1, "OnFailure"), "Worker": replica(3, "Never")}
    assert clean(mpijob(mpiImplementation="Intel", mpiReplicaSpecs=with_worker))
    assert clean(mpijob(mpiImplementation="MPICH"))
    assert clean(mpijob(mpiImplementation="MPICH", mpiReplicaSpecs=with_worker))


def test_empty_job_after_defaults() -> None:
    """ "empty job": after the defaults only the missing replica specs remain."""
    reg = k8s("kubeflow.org/v2beta1", "MPIJob", "foo", namespace="ns", spec={"slotsPerWorker": 1})
    outcome = run(RULE, [reg])
    assert outcome.mentions("spec.mpiReplicaSpecs is missing")
    assert not outcome.mentions("slotsPerWorker") and not outcome.mentions("mpiImplementation")


def test_invalid_fields() -> None:
    """ "invalid fields": long name, unknown clean policy, negative run-policy numbers, managedBy, implementation."""
    workers = {"Launcher": replica(1), "Worker": replica(1000)}
    reg = mpijob(
        "this-name-is-waaaaaaaay-too-long-for-a-worker-hostname",
        runPolicy={
            "cleanPodPolicy": "unknown",
            "ttlSecondsAfterFinished": -1,
            "activeDeadlineSeconds": -1,
            "backoffLimit": -1,
            "managedBy": "invalid.com/controller",
        },
        mpiImplementation="Unknown",
        mpiReplicaSpecs=workers,
    )
    outcome = run(RULE, [reg])
    for part in (
        "hostname 'this-name-is-waaaaaaaay-too-long-for-a-worker-hostname-worker-999'",
        "cleanPodPolicy 'unknown'",
        "ttlSecondsAfterFinished -1",
        "activeDeadlineSeconds -1",
        "backoffLimit -1",
        "managedBy 'invalid.com/controller'",
        "mpiImplementation 'Unknown'",
    ):
        assert outcome.mentions(part), part
    assert len(outcome.violations) == 7


def test_empty_replica_specs() -> None:
    """ "empty replica specs": the Launcher is required."""
    assert refused(mpijob(mpiReplicaSpecs={}), "has no Launcher")


def test_missing_replica_spec_fields() -> None:
    """ "missing replica spec fields": after defaults the Launcher passes (1, OnFailure) but a Worker
    without replicas defaults to 0 and is refused; both lack containers."""
    specs: dict[str, Any] = {"Launcher": {}, "Worker": {}}
    outcome = run(RULE, [mpijob(mpiReplicaSpecs=specs)])
    assert outcome.mentions("Launcher.template.spec.containers is empty")
    assert outcome.mentions("Worker.template.spec.containers is empty")
    assert outcome.mentions("Worker.replicas 0 must be greater than or equal to 1")
    assert not outcome.mentions("Launcher.replicas") and not outcome.mentions("restartPolicy")


def test_invalid_replica_fields() -> None:
    """ "invalid replica fields": Launcher replicas 2 and Always; Worker 0 and "Invalid"."""
    specs = {"Launcher": replica(2, "Always"), "Worker": replica(0, "Invalid")}
    outcome = run(RULE, [mpijob(mpiReplicaSpecs=specs)])
    assert outcome.mentions("Launcher.restartPolicy 'Always'")
    assert outcome.mentions("Launcher.replicas 2 must be 1")
    assert outcome.mentions("Worker.replicas 0")
    assert outcome.mentions("Worker.restartPolicy 'Invalid'")


def test_invalid_name() -> None:
    """ "invalid mpiJob name": the worker hostname is not a DNS-1035 label."""
    assert refused(mpijob("1-foo"), "hostname '1-foo-worker-0'")


def test_v1_mpijob_is_not_judged_and_unknown_is_cannot_check() -> None:
    assert clean(mpijob(api="kubeflow.org/v1", mpiImplementation="Unknown"))
    outcome = run(RULE, [mpijob(slotsPerWorker=UNKNOWN)])
    assert outcome.violations == [] and outcome.cannot_check is not None
