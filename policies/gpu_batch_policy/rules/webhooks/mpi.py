"""The MPI operator's validation of an MPIJob (v2beta1) at v0.8.2, before deploy.

The stack installs no MPI operator, so the version judged is the one Kueue v0.19.2's ``go.mod``
pins: ``github.com/kubeflow/mpi-operator v0.8.2``.  The mirror holds no v0.8.2 tag; the ref is
``b10758d`` ("Prepare v0.8.2 (#826)", the head of ``release-0.8``).  The operator has no admission
webhook: ``pkg/controller/mpi_job_controller.go`` ``syncHandler`` applies the scheme's defaults and
then ``validation.ValidateMPIJob``; on any error it records a ``ValidationError`` event and never
requeues, so the job never runs.  Source: ``pkg/apis/kubeflow/validation/validation.go``, with the
defaults of ``pkg/apis/kubeflow/v2beta1/default.go`` ``SetDefaults_MPIJob`` (cleanPodPolicy None,
slotsPerWorker 1, sshAuthMountPath /root/.ssh, mpiImplementation OpenMPI; Launcher replicas 1 and
restartPolicy OnFailure; Worker replicas **0** and restartPolicy Never):

* ``validateMPIJobName``: ``<name>-worker-<replicas-1>`` is a DNS-1035 label;
* ``validateMPIJobSpec``: ``slotsPerWorker`` >= 0; ``mpiImplementation`` OpenMPI, Intel or MPICH;
* ``validateRunPolicy``: ``cleanPodPolicy`` None, Running or All; ``ttlSecondsAfterFinished``,
  ``activeDeadlineSeconds``, ``backoffLimit`` >= 0; ``managedBy`` ``kubeflow.org/mpi-operator`` or
  ``kueue.x-k8s.io/multikueue``;
* ``validateMPIReplicaSpecs``: replica specs present; ``validateLauncherReplicaSpec``: a Launcher,
  with replicas 1; ``validateWorkerReplicaSpec``: Worker replicas >= 1 (so a Worker without
  ``replicas`` is refused: the default is 0); ``validateReplicaSpec``: restartPolicy Never or
  OnFailure, at least one container.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import Policy

from ...facts.model.base import KubeObject
from ...primitives.k8s_names import dns1035_label_error
from .port import (
    Finding,
    Judged,
    Problem,
    Unsure,
    Upstream,
    get,
    items,
    name_of,
    number,
    port_policy,
    text,
)

UPSTREAM = Upstream(
    project="MPI operator",
    repo="kubeflow/mpi-operator",
    ref="b10758d",
    version="v0.8.2",
    why="the version Kueue v0.19.2's go.mod pins; the stack installs no MPI operator",
    files=("pkg/apis/kubeflow/validation/validation.go",),
)
GROUP = "kubeflow.org"
CLEAN_POLICIES = ("All", "None", "Running")
IMPLEMENTATIONS = ("Intel", "MPICH", "OpenMPI")
RESTART_POLICIES = ("Never", "OnFailure")
MANAGED_BY = ("kubeflow.org/mpi-operator", "kueue.x-k8s.io/multikueue")


def _name_problems(name: str, spec: Any) -> list[Problem]:
    """``validateMPIJobName``."""
    replicas = number(spec, "mpiReplicaSpecs", "Worker", "replicas")
    last = replicas - 1 if replicas is not None and replicas > 0 else 0
    hostname = f"{name}-worker-{last}"
    error = dns1035_label_error(hostname)
    if error is None:
        return []
    return [(f"the last worker's hostname '{hostname}' {error}", "shorten the MPIJob name")]


def _run_policy_problems(policy: Any) -> list[Problem]:
    """``validateRunPolicy`` after ``setDefaultsRunPolicy``."""
    where = "spec.runPolicy"
    problems: list[Problem] = []
    clean = text(policy, "cleanPodPolicy") or "None"
    if clean not in CLEAN_POLICIES:
        problems.append(
            (f"{where}.cleanPodPolicy '{clean}' is not supported", f"use one of {', '.join(CLEAN_POLICIES)}")
        )
    for key in ("ttlSecondsAfterFinished", "activeDeadlineSeconds", "backoffLimit"):
        value = number(policy, key)
        if value is not None and value < 0:
            problems.append((f"{where}.{key} {value} must be greater than or equal to 0", f"use {key} >= 0"))
    manager = text(policy, "managedBy")
    if manager is not None and manager not in MANAGED_BY:
        problems.append(
            (f"{where}.managedBy '{manager}' is not supported", f"use one of {', '.join(MANAGED_BY)}")
        )
    return problems


def _replica_problems(role: str, spec: Any) -> list[Problem]:
    """``validateReplicaSpec`` plus the Launcher/Worker replica bounds, after their defaults."""
    where = f"spec.mpiReplicaSpecs.{role}"
    launcher = role == "Launcher"
    problems: list[Problem] = []
    restart = text(spec, "restartPolicy") or ("OnFailure" if launcher else "Never")
    if restart not in RESTART_POLICIES:
        problems.append((f"{where}.restartPolicy '{restart}' is not supported", "use Never or OnFailure"))
    if not items(spec, "template", "spec", "containers"):
        problems.append((f"{where}.template.spec.containers is empty", "define at least one container"))
    replicas = number(spec, "replicas", default=1 if launcher else 0)
    if launcher and replicas != 1:
        problems.append((f"{where}.replicas {replicas} must be 1", "use one launcher"))
    if not launcher and replicas is not None and replicas <= 0:
        problems.append(
            (
                f"{where}.replicas {replicas} must be greater than or equal to 1 (unset defaults to 0)",
                "set replicas >= 1",
            )
        )
    return problems


def _spec_problems(spec: Any) -> list[Problem]:
    """``validateMPIJobSpec`` and ``validateMPIReplicaSpecs`` after ``SetDefaults_MPIJob``."""
    problems: list[Problem] = []
    replica_specs = get(spec, "mpiReplicaSpecs")
    if not isinstance(replica_specs, dict):
        problems.append(("spec.mpiReplicaSpecs is missing", "declare the Launcher and Worker replica specs"))
    else:
        launcher = get(replica_specs, "Launcher")
        if not isinstance(launcher, dict):
            problems.append(("spec.mpiReplicaSpecs has no Launcher", "add a Launcher replica spec"))
        else:
            problems += _replica_problems("Launcher", launcher)
        worker = get(replica_specs, "Worker")
        if isinstance(worker, dict):
            problems += _replica_problems("Worker", worker)
    slots = number(spec, "slotsPerWorker", default=1)
    if slots is not None and slots < 0:
        problems.append(
            (f"spec.slotsPerWorker {slots} must be greater than or equal to 0", "use slotsPerWorker >= 0")
        )
    problems += _run_policy_problems(get(spec, "runPolicy"))
    implementation = text(spec, "mpiImplementation") or "OpenMPI"
    if implementation not in IMPLEMENTATIONS:
        problems.append(
            (
                f"spec.mpiImplementation '{implementation}' is not supported",
                f"use one of {', '.join(IMPLEMENTATIONS)}",
            )
        )
    return problems


def mpijob_problems(obj: KubeObject) -> list[Finding]:
    """``ValidateMPIJob`` on a v2beta1 MPIJob after its defaults."""
    if obj.version != "v2beta1":
        return []  # kubeflow.org/v1 MPIJob belongs to the training operator, not judged here
    spec = get(obj.props, "spec")
    if not isinstance(spec, dict):
        return []
    found: list[Finding] = []
    name = name_of(obj)
    if name is None:
        found.append(Unsure("metadata.name (generated at apply) for the worker hostnames"))
    else:
        found += _name_problems(name, spec)
    found += _spec_problems(spec)
    return found


COVERAGE: Mapping[str, str] = {
    "ValidateMPIJob": "mpijob_problems",
    "validateMPIJobName": "_name_problems",
    "validateMPIJobSpec": "_spec_problems",
    "validateRunPolicy": "_run_policy_problems",
    "validateMPIReplicaSpecs": "_spec_problems",
    "validateLauncherReplicaSpec": "_replica_problems",
    "validateWorkerReplicaSpec": "_replica_problems",
    "validateReplicaSpec": "_replica_problems",
}
"""Every function of ``pkg/apis/kubeflow/validation/validation.go`` at v0.8.2 (``b10758d``)."""


POLICIES: list[Policy] = [
    port_policy(
        "mpijob-validation",
        "A v2beta1 MPIJob passes the MPI operator v0.8.2's validation (the version Kueue v0.19.2 pins): a "
        "Launcher of 1, Workers >= 1, known policies and implementation, a hostname-safe name.",
        UPSTREAM,
        GROUP,
        Judged(("MPIJob",), mpijob_problems, "pkg/apis/kubeflow/validation/validation.go ValidateMPIJob"),
    ),
]
