"""The name a built-in object may have, as the API server's validation of its kind says.

Why: the OpenAPI schema says only that ``metadata.name`` is a string, so ``builtin-object-schema``
passed a Service named ``My_Service`` or a ConfigMap of 254 characters, which the API server
refuses on create.  Every kind's validation calls ``ValidateObjectMeta`` with a name function of
its own (kubernetes v1.37.2 ``staging/src/k8s.io/apimachinery/pkg/api/validation/objectmeta.go``
``ValidateObjectMetaAccessor``: ``name`` by the function, ``generateName`` by the same function as
a prefix, whose trailing ``-`` is allowed):

* ``NameIsDNSSubdomain`` (<= 253) -- the default: ConfigMap, Secret, Pod, Deployment, Job,
  PriorityClass, webhook configurations, ... (``pkg/apis/*/validation/validation.go``);
* ``NameIsDNSLabel`` (<= 63, no dot) -- Namespace (``ValidateNamespaceName``), StatefulSet
  (``ValidateStatefulSetName``) and Service (``ValidateService``: ``RelaxedServiceNameValidation``
  is GA and locked on at 1.37, ``pkg/features/kube_features.go``);
* ``content.IsPathSegmentName`` (not ``.`` or ``..``, no ``/`` or ``%``) -- RBAC's Roles and
  bindings (``pkg/apis/rbac/validation`` ``ValidateRBACName``) and flow control's FlowSchemas and
  PriorityLevelConfigurations (``pkg/apis/flowcontrol/validation``);
* a CustomResourceDefinition is named ``<spec.names.plural>.<spec.group>`` (apiextensions-apiserver
  v0.37.2 ``pkg/apis/apiextensions/validation/validation.go`` ``ValidateCustomResourceDefinition``),
  an APIService ``<spec.version>.<spec.group>`` (kube-aggregator v0.37.2
  ``pkg/apis/apiregistration/validation/validation.go`` ``ValidateAPIService``);
* a CronJob's name is at most 52 characters (``pkg/apis/batch/validation`` ``ValidateCronJobCreate``:
  its Jobs append an 11-character suffix), and a Job's at most 63 unless ``manualSelector``: the
  strategy labels its pod template ``batch.kubernetes.io/job-name: <name>``
  (``pkg/registry/batch/job/strategy.go`` ``generateSelector``), a label value.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from ...primitives.k8s_names import dns1123_label_error, dns1123_subdomain_error
from .crd import Violation
from .markers import MARKERS


def _path_segment_error(value: str) -> str | None:
    if value in (".", ".."):
        return f"may not be '{value}'"
    for illegal in ("/", "%"):
        if illegal in value:
            return f"may not contain '{illegal}'"
    return None


NameRule = Callable[[str], str | None]
_BY_KIND: Final[dict[tuple[str, str], NameRule]] = {
    ("", "Namespace"): dns1123_label_error,
    ("", "Service"): dns1123_label_error,
    ("apps", "StatefulSet"): dns1123_label_error,
}
_PATH_SEGMENT_GROUPS: Final = frozenset({"rbac.authorization.k8s.io", "flowcontrol.apiserver.k8s.io"})


def _rule(group: str, kind: str) -> NameRule:
    if group in _PATH_SEGMENT_GROUPS:
        return _path_segment_error
    return _BY_KIND.get((group, kind), dns1123_subdomain_error)


def _required_name(group: str, kind: str, spec: Mapping[str, Any]) -> tuple[str, str] | None:
    """(the name the kind requires, how it is made), for CRDs and APIServices."""
    if (group, kind) == ("apiextensions.k8s.io", "CustomResourceDefinition"):
        names = spec.get("names") if isinstance(spec.get("names"), Mapping) else {}
        assert isinstance(names, Mapping)
        plural, crd_group = names.get("plural"), spec.get("group")
        if isinstance(plural, str) and isinstance(crd_group, str):
            return f"{plural}.{crd_group}", "spec.names.plural + '.' + spec.group"
    if (group, kind) == ("apiregistration.k8s.io", "APIService"):
        version, api_group = spec.get("version"), spec.get("group")
        if isinstance(version, str) and isinstance(api_group, str):
            return f"{version}.{api_group}", "spec.version + '.' + spec.group"
    return None


def _length_limit(group: str, kind: str, spec: Mapping[str, Any]) -> tuple[int, str] | None:
    if (group, kind) == ("batch", "CronJob"):
        return 52, "its Jobs' names append an 11-character suffix and must stay labels"
    if (group, kind) == ("batch", "Job") and spec.get("manualSelector") is not True:
        return 63, "the API server labels its pods batch.kubernetes.io/job-name: <name>, a label value"
    return None


def name_violations(group: str, kind: str, obj: Mapping[str, Any]) -> list[Violation]:
    """What the API server's validation of ``kind`` says of the object's ``metadata.name`` and
    ``generateName`` (only strings are judged: markers of values unknown until apply are not)."""
    meta = obj.get("metadata")
    if not isinstance(meta, Mapping):
        return []
    spec = obj.get("spec") if isinstance(obj.get("spec"), Mapping) else {}
    assert isinstance(spec, Mapping)
    rule = _rule(group, kind)
    out: list[Violation] = []
    name = meta.get("name")
    if isinstance(name, str) and name and name not in MARKERS:
        why = rule(name)
        if why is not None:
            out.append(Violation("metadata.name", f"{name!r} {why}"))
        required = _required_name(group, kind, spec)
        if required is not None and name != required[0]:
            out.append(Violation("metadata.name", f"{name!r} must be {required[1]}: {required[0]!r}"))
        limit = _length_limit(group, kind, spec)
        if limit is not None and len(name) > limit[0]:
            out.append(
                Violation("metadata.name", f"{len(name)} characters, more than {limit[0]}: {limit[1]}")
            )
    prefix = meta.get("generateName")
    if isinstance(prefix, str) and prefix and prefix not in MARKERS:
        stem = prefix[:-1] if prefix.endswith("-") else prefix
        why = rule(stem) if stem else None
        if why is not None:
            out.append(Violation("metadata.generateName", f"{prefix!r} {why}"))
    return out
