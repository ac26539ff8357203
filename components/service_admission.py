"""One ValidatingAdmissionPolicy: a team namespace holds only ClusterIP Services.

Why: the team Role lets members create Services (a Ray dashboard or a notebook reached through
``kubectl port-forward``), and RBAC cannot restrict a Service's ``spec.type``.  A
``LoadBalancer`` Service gives a team's pod a public (or VPC-wide) address; a ``NodePort`` opens a
port on every node; ``externalIPs`` lets a Service capture traffic to any address
(CVE-2020-8554); ``ExternalName`` aliases other names and has been used to reach other
namespaces through ingress controllers (CVE-2021-25740).

Every request is judged, platform components included: the KubeRay operator creates each Ray
head's Service with the type the team writes (``headGroupSpec.serviceType``), so excluding
``system:`` users would let a team ask KubeRay for a LoadBalancer.  ``spec.type`` unset is
ClusterIP (Kubernetes API reference, ServiceSpec.type).  Bound to the team namespaces by the
immutable ``kubernetes.io/metadata.name`` label.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import pulumi

from components.k8s_object import KubeObject
from components.queue_admission import ADMISSION_API, NAME_LABEL

POLICY_NAME: Final = "gpu-batch-tenant-services"

CLUSTER_IP_ONLY: Final = "!has(object.spec.type) || object.spec.type == 'ClusterIP'"
NO_EXTERNAL_IPS: Final = "!has(object.spec.externalIPs) || size(object.spec.externalIPs) == 0"


def core_resource_rules(resource: str) -> dict[str, Any]:
    """``matchConstraints`` for CREATE and UPDATE of one core (``v1``) resource."""
    return {
        "resourceRules": [
            {
                "apiGroups": [""],
                "apiVersions": ["v1"],
                "resources": [resource],
                "operations": ["CREATE", "UPDATE"],
            }
        ]
    }


def policy_spec() -> dict[str, Any]:
    return {
        "failurePolicy": "Fail",
        "matchConstraints": core_resource_rules("services"),
        "validations": [
            {
                "expression": CLUSTER_IP_ONLY,
                "messageExpression": (
                    "'Service ' + object.metadata.name + ' is type ' + object.spec.type + "
                    "': a team namespace holds only ClusterIP Services (no LoadBalancer, NodePort or "
                    "ExternalName); reach it with kubectl port-forward'"
                ),
                "reason": "Forbidden",
            },
            {
                "expression": NO_EXTERNAL_IPS,
                "message": "a team namespace's Services may not set externalIPs",
                "reason": "Forbidden",
            },
        ],
    }


def binding_spec(namespaces: Sequence[str], policy_name: str = POLICY_NAME) -> dict[str, Any]:
    return {
        "policyName": policy_name,
        "validationActions": ["Deny"],
        "matchResources": {
            "namespaceSelector": {
                "matchExpressions": [{"key": NAME_LABEL, "operator": "In", "values": sorted(set(namespaces))}]
            }
        },
    }


def tenant_policy(
    name: str, policy_name: str, spec: dict[str, Any], namespaces: Sequence[str], parent: pulumi.Resource
) -> None:
    """A cluster-scoped ValidatingAdmissionPolicy and its Deny binding to the team namespaces."""
    labels = {"app.kubernetes.io/managed-by": "pulumi"}
    policy = KubeObject(
        f"{name}-policy",
        api_version=ADMISSION_API,
        kind="ValidatingAdmissionPolicy",
        metadata={"name": policy_name, "labels": labels},
        spec=spec,
        opts=pulumi.ResourceOptions(parent=parent),
    )
    KubeObject(
        f"{name}-binding",
        api_version=ADMISSION_API,
        kind="ValidatingAdmissionPolicyBinding",
        metadata={"name": policy_name, "labels": labels},
        spec=binding_spec(namespaces, policy_name),
        opts=pulumi.ResourceOptions(parent=parent, depends_on=[policy]),
    )


class TenantAdmission(pulumi.ComponentResource):
    """One admission policy and its binding to every team namespace (both cluster-scoped)."""

    def __init__(
        self,
        type_name: str,
        name: str,
        policy: tuple[str, dict[str, Any]],
        namespaces: Sequence[str],
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__(type_name, name, None, opts)
        policy_name, spec = policy
        tenant_policy(name, policy_name, spec, namespaces, self)
        self.register_outputs({"policy": policy_name})


class TenantServiceAdmission(TenantAdmission):
    """Team namespaces hold ClusterIP Services only (:func:`policy_spec`)."""

    def __init__(
        self, name: str, namespaces: Sequence[str], opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__(
            "gpu-batch:tenancy:ServiceAdmission", name, (POLICY_NAME, policy_spec()), namespaces, opts
        )
