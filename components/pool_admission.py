"""One ValidatingAdmissionPolicy: no pod in a team namespace tolerates the system pool's taint.

Why: with a tenant pool the system pool is tainted ``components.gke.io/gke-managed-components=
true:NoSchedule`` (``components.gke.SYSTEM_POOL_TAINT``) so that only the operators (their chart
values tolerate it) and GKE's own components run there.  A toleration is the pod's to write: a
team that adds it (or a blanket ``operator: Exists`` without a key) could put its pod next to the
KubeRay operator, whose token creates pods and reads Secrets in every namespace.  RBAC cannot
restrict a field, so admission does.

What "tolerates" means is Kubernetes' own rule (k8s.io/api ``core/v1/toleration.go``
``Toleration.ToleratesTaint``): the toleration's effect is empty or equal to the taint's, its key
is empty or equal, and its operator is ``Exists`` or (``Equal``/empty) with an equal value.

Every request is judged, platform components included, and the object judged is the Pod: the
Job controller and KubeRay create a team's pods as ``system:`` users from the team's own
templates, and Kueue copies a flavor's tolerations into them, so a pod-level check catches every
path.  Pods only (CREATE, and UPDATE: Kubernetes lets an update add tolerations to a running
pod).  What tenants keep: any other toleration, e.g. the GPU taint ``nvidia.com/gpu`` and the
queued-provisioning taint their GPU flavors add (tests/test_pool_admission.py).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Final

import pulumi

from components.gke import SYSTEM_POOL_TAINT_KEY
from components.service_admission import TenantAdmission, core_resource_rules

POLICY_NAME: Final = "gpu-batch-tenant-placement"
KEY: Final = json.dumps(SYSTEM_POOL_TAINT_KEY)

# ToleratesTaint against {key: SYSTEM_POOL_TAINT_KEY, value: "true", effect: NoSchedule}.
TOLERATES_SYSTEM_POOL: Final = (
    "(!has(t.effect) || t.effect == '' || t.effect == 'NoSchedule') && "
    f"(!has(t.key) || t.key == '' || t.key == {KEY}) && "
    "((has(t.operator) && t.operator == 'Exists') || "
    "((!has(t.operator) || t.operator == '' || t.operator == 'Equal') && has(t.value) && t.value == 'true'))"
)
NO_SYSTEM_POOL_TOLERATION: Final = (
    f"!has(object.spec.tolerations) || !object.spec.tolerations.exists(t, {TOLERATES_SYSTEM_POOL})"
)


def policy_spec() -> dict[str, Any]:
    return {
        "failurePolicy": "Fail",
        "matchConstraints": core_resource_rules("pods"),
        "validations": [
            {
                "expression": NO_SYSTEM_POOL_TOLERATION,
                "messageExpression": (
                    "'Pod ' + object.metadata.name + ' tolerates the system pool taint "
                    f"{SYSTEM_POOL_TAINT_KEY}: the system pool runs platform components only; "
                    "team pods run on the tenant and GPU pools'"
                ),
                "reason": "Forbidden",
            }
        ],
    }


class TenantPoolAdmission(TenantAdmission):
    """Team pods never tolerate the system pool's taint (:func:`policy_spec`)."""

    def __init__(
        self, name: str, namespaces: Sequence[str], opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__(
            "gpu-batch:tenancy:PoolAdmission", name, (POLICY_NAME, policy_spec()), namespaces, opts
        )
