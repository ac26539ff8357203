"""Enumerated fields of built-in kinds, as the API server's Go validation refuses another value.

Why: the OpenAPI schemas the pack validates built-in objects with (:mod:`.core`) carry no enums,
so a Job's ``completionMode: Indexd``, a Service port's ``protocol: tcp`` or a webhook's
``failurePolicy: fail`` passed the pack; kube-apiserver v1.37.2 refuses each with ``Unsupported
value`` (found by the pack-vs-server differential, issue 41).  Pod-level fields are in
:mod:`.pod_spec`; these are the kinds' own.  Each entry names the function of kubernetes v1.37.2
``pkg/apis/<group>/validation/validation.go`` that refuses it (``field.NotSupported``).  Only
set values are judged: an unset field is defaulted by the server before validation.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Final

from .crd import Violation
from .markers import MARKERS

Path = tuple[str, ...]  # "*": every item of a list
_PROTOCOLS: Final = ("SCTP", "TCP", "UDP")
_FAILURE: Final = ("Fail", "Ignore")
_MATCH: Final = ("Equivalent", "Exact")
_SCOPES: Final = ("*", "Cluster", "Namespaced")
_REINVOCATION: Final = ("IfNeeded", "Never")
_STRATEGY: Final = ("OnDelete", "RollingUpdate")


def _webhooks(reinvocation: bool) -> list[tuple[Path, tuple[str, ...], str]]:
    fn = "admissionregistration validateValidatingWebhook / validateMutatingWebhook"
    out = [
        (("webhooks", "*", "failurePolicy"), _FAILURE, fn),
        (("webhooks", "*", "matchPolicy"), _MATCH, fn),
        (("webhooks", "*", "sideEffects"), ("None", "NoneOnDryRun"), fn),
        (("webhooks", "*", "rules", "*", "scope"), _SCOPES, "admissionregistration validateRule"),
    ]
    if reinvocation:
        out.append((("webhooks", "*", "reinvocationPolicy"), _REINVOCATION, fn))
    return out


ENUMS: Final[dict[tuple[str, str], list[tuple[Path, tuple[str, ...], str]]]] = {
    ("batch", "Job"): [
        (("spec", "completionMode"), ("Indexed", "NonIndexed"), "batch validateJobSpec"),
        (
            ("spec", "podReplacementPolicy"),
            ("Failed", "TerminatingOrFailed"),
            "batch validatePodReplacementPolicy",
        ),
    ],
    ("batch", "CronJob"): [
        (("spec", "concurrencyPolicy"), ("Allow", "Forbid", "Replace"), "batch validateConcurrencyPolicy"),
        (
            ("spec", "jobTemplate", "spec", "completionMode"),
            ("Indexed", "NonIndexed"),
            "batch validateJobSpec",
        ),
    ],
    ("", "Service"): [
        (("spec", "ports", "*", "protocol"), _PROTOCOLS, "core validateServicePort"),
        (("spec", "type"), ("ClusterIP", "ExternalName", "LoadBalancer", "NodePort"), "core validateService"),
        (("spec", "sessionAffinity"), ("ClientIP", "None"), "core validateService"),
        (
            ("spec", "externalTrafficPolicy"),
            ("Cluster", "Local"),
            "core validateServiceExternalTrafficPolicy",
        ),
        (
            ("spec", "internalTrafficPolicy"),
            ("Cluster", "Local"),
            "core validateServiceInternalTrafficFieldsValue",
        ),
        (
            ("spec", "ipFamilyPolicy"),
            ("PreferDualStack", "RequireDualStack", "SingleStack"),
            "core ValidateServiceClusterIPsRelatedFields",
        ),
    ],
    ("", "PersistentVolumeClaim"): [
        (
            ("spec", "accessModes", "*"),
            ("ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"),
            "core ValidatePersistentVolumeClaimSpec",
        ),
        (("spec", "volumeMode"), ("Block", "Filesystem"), "core ValidatePersistentVolumeClaimSpec"),
    ],
    ("networking.k8s.io", "NetworkPolicy"): [
        (
            ("spec", "ingress", "*", "ports", "*", "protocol"),
            _PROTOCOLS,
            "networking ValidateNetworkPolicyPort",
        ),
        (
            ("spec", "egress", "*", "ports", "*", "protocol"),
            _PROTOCOLS,
            "networking ValidateNetworkPolicyPort",
        ),
        (("spec", "policyTypes", "*"), ("Egress", "Ingress"), "networking ValidateNetworkPolicySpec"),
    ],
    ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"): _webhooks(False),
    ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"): _webhooks(True),
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"): [
        (("spec", "failurePolicy"), _FAILURE, "admissionregistration validateValidatingAdmissionPolicySpec"),
        (("spec", "matchConstraints", "matchPolicy"), _MATCH, "admissionregistration validateMatchResources"),
    ],
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding"): [
        (
            ("spec", "validationActions", "*"),
            ("Audit", "Deny", "Warn"),
            "admissionregistration validateValidationActions",
        ),
    ],
    ("admissionregistration.k8s.io", "MutatingAdmissionPolicy"): [
        (("spec", "failurePolicy"), _FAILURE, "admissionregistration validateMutatingAdmissionPolicySpec"),
        (
            ("spec", "reinvocationPolicy"),
            _REINVOCATION,
            "admissionregistration validateMutatingAdmissionPolicySpec",
        ),
    ],
    ("apps", "Deployment"): [
        (("spec", "strategy", "type"), ("Recreate", "RollingUpdate"), "apps ValidateDeploymentStrategy"),
    ],
    ("apps", "DaemonSet"): [
        (("spec", "updateStrategy", "type"), _STRATEGY, "apps ValidateDaemonSetUpdateStrategy"),
    ],
    ("apps", "StatefulSet"): [
        (("spec", "podManagementPolicy"), ("OrderedReady", "Parallel"), "apps ValidateStatefulSetSpec"),
        (("spec", "updateStrategy", "type"), _STRATEGY, "apps ValidateStatefulSetSpec"),
    ],
}


def _values(value: Any, path: Path, at: str) -> Iterator[tuple[str, Any]]:
    if not path:
        yield at, value
        return
    head, rest = path[0], path[1:]
    if head == "*":
        if isinstance(value, list):
            for i, item in enumerate(value):
                yield from _values(item, rest, f"{at}[{i}]")
    elif isinstance(value, Mapping) and head in value:
        yield from _values(value[head], rest, f"{at}.{head}" if at else head)


def enum_violations(group: str, kind: str, obj: Mapping[str, Any]) -> list[Violation]:
    """Every set value of an enumerated field of ``kind`` outside what the API server supports."""
    out: list[Violation] = []
    for path, allowed, function in ENUMS.get((group, kind), []):
        for at, value in _values(obj, path, ""):
            if isinstance(value, str) and value not in MARKERS and value not in allowed:
                supported = ", ".join(f'"{v}"' for v in allowed)
                out.append(
                    Violation(
                        at,
                        f'Unsupported value: "{value}": supported values: {supported} '
                        f"(kubernetes v1.37.2 pkg/apis/{function})",
                    )
                )
    return out
