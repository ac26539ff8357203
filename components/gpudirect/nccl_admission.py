"""A ValidatingAdmissionPolicy: a team's GPU pod on a GPUDirect pool loads the NCCL settings.

Why: the stack's own templates get the wiring (``components.gpudirect.pod_wiring``), but a team's
own RayJob, JobSet or Job does not, and without the NCCL settings the installer drops on the node
(``gpu_batch_policy.facts.gpudirect.nccl_env``: ``nccl-env-profile.sh`` for TCPXO,
``set_nccl_env.sh`` for RDMA) NCCL does not use the GPU NICs.

Why validate rather than mutate: a MutatingAdmissionPolicy (``admissionregistration.k8s.io``) is
alpha (``v1alpha1``, feature gate ``MutatingAdmissionPolicy``, off) on Kubernetes 1.32-1.33 and beta
but still off by default on 1.34 (KEP-3962), and GKE Standard enables no alpha or off-by-default
API on a production cluster; this stack targets 1.33.  A mutation could not add the line anyway:
it has to run inside the container's own shell before the workload (``source ...``), and a
container's command is the workload's.  So the pod is refused, with the line to add in the message
(the documented snippet: ``docs/multi-node-training.md``, "Your own workloads").

What it judges: Pods (CREATE) in the team namespaces whose ``nodeSelector`` names a GPUDirect pool
(``cloud.google.com/gke-nodepool``: Kueue writes its flavor's ``nodeLabels`` into the pod's
``nodeSelector`` when it admits the workload, kueue v0.19.2 ``pkg/podset``); each container that
requests or limits ``nvidia.com/gpu`` must mention the script in its command or args (and carry
``NCCL_LIB_DIR`` for TCPXO): the same test as the pack's ``gke-gpudirect-nccl-env``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

import pulumi

from components.gpudirect import POLICIES_DIR
from components.service_admission import TenantAdmission

assert POLICIES_DIR

from gpu_batch_policy.facts.gpudirect.nccl_env import NCCL_ENV  # noqa: E402

POLICY_NAME: Final = "gpu-batch-gpudirect-nccl-env"
NODEPOOL_LABEL: Final = "cloud.google.com/gke-nodepool"
GPU: Final = "nvidia.com/gpu"

USES_GPU: Final = (
    f"has(c.resources) && ((has(c.resources.limits) && {json.dumps(GPU)} in c.resources.limits) || "
    f"(has(c.resources.requests) && {json.dumps(GPU)} in c.resources.requests))"
)


def _on_pools(pools: Sequence[str]) -> str:
    key = json.dumps(NODEPOOL_LABEL)
    return (
        f"has(object.spec.nodeSelector) && {key} in object.spec.nodeSelector && "
        f"object.spec.nodeSelector[{key}] in {json.dumps(sorted(pools))}"
    )


def _loads(stack: str) -> str:
    env = NCCL_ENV[stack]
    stem = json.dumps(env.script_stem)
    text = f"((has(c.command) && c.command.exists(w, w.contains({stem}))) || (has(c.args) && c.args.exists(w, w.contains({stem}))))"
    for key, _ in env.env:
        text += f" && has(c.env) && c.env.exists(e, e.name == {json.dumps(key)})"
    return text


def validation(stack: str, pools: Sequence[str]) -> dict[str, Any]:
    """One ``validations`` entry: pods on ``pools`` (GPUDirect-``stack``) load the settings."""
    env = NCCL_ENV[stack]
    needs = "".join(f" and env {k}={v}" for k, v in env.env)
    return {
        "expression": f"!({_on_pools(pools)}) || object.spec.containers.all(c, !({USES_GPU}) || ({_loads(stack)}))",
        "messageExpression": json.dumps(
            f"a GPU container on a GPUDirect-{stack} pool must run `{env.source_line}` at start{needs} "
            "(see docs/multi-node-training.md, 'Your own workloads'): pod "
        )
        + " + object.metadata.name",
        "reason": "Forbidden",
    }


def policy_spec(pools_by_stack: Mapping[str, Sequence[str]]) -> dict[str, Any]:
    return {
        "failurePolicy": "Fail",
        "matchConstraints": {
            "resourceRules": [
                {"apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"], "operations": ["CREATE"]}
            ]
        },
        "validations": [
            validation(stack, pools) for stack, pools in sorted(pools_by_stack.items()) if stack in NCCL_ENV
        ],
    }


class GpuDirectNcclAdmission(TenantAdmission):
    """Team GPU pods on GPUDirect pools load their NCCL settings (:func:`policy_spec`)."""

    def __init__(
        self,
        name: str,
        pools_by_stack: Mapping[str, Sequence[str]],
        namespaces: Sequence[str],
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__(
            "gpu-batch:gpudirect:NcclAdmission",
            name,
            (POLICY_NAME, policy_spec(pools_by_stack)),
            namespaces,
            opts,
        )
