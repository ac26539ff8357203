"""One resource of the stack, as the pack sees it, and Kubernetes object identity.

A resource is identified the way its controller identifies it: a Kubernetes object by
group + kind + ``metadata.name`` (+ ``metadata.namespace`` when namespaced), never by its Pulumi
name, because references between Kueue/KAI objects are by object name.  When ``metadata.name`` is
absent the program lets Pulumi auto-name it (``<pulumi name>-<random>``); the best available
stand-in is the Pulumi resource name, and ``auto_named`` says so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from ...primitives.tokens import CORE_GROUP, KAI_GROUP, KUEUE_GROUP, TypeToken, parse_token
from ...primitives.values import Unknown, as_str, dig, plain, str_map
from ..schema.patches import PATCH_SUFFIX

# Cluster-scoped kinds by API group (everything else in a served group is namespaced).
# Kueue: ClusterQueue, ResourceFlavor, AdmissionCheck, ProvisioningRequestConfig,
# WorkloadPriorityClass, Cohort, Topology are cluster-scoped (kueue.md §3); KAI Queue is
# cluster-scoped (kai-kuberay-skypilot.md §1.1).
_CLUSTER_SCOPED: dict[str, frozenset[str]] = {
    KUEUE_GROUP: frozenset(
        {
            "ClusterQueue",
            "ResourceFlavor",
            "AdmissionCheck",
            "ProvisioningRequestConfig",
            "WorkloadPriorityClass",
            "Cohort",
            "Topology",
            "MultiKueueCluster",
            "MultiKueueConfig",
        }
    ),
    KAI_GROUP: frozenset({"Queue"}),
    CORE_GROUP: frozenset({"Namespace", "NamespacePatch", "Node", "PersistentVolume"}),
    "rbac.authorization.k8s.io": frozenset({"ClusterRole", "ClusterRoleBinding"}),
    "scheduling.k8s.io": frozenset({"PriorityClass"}),
    "storage.k8s.io": frozenset({"StorageClass", "CSIDriver", "VolumeAttachment"}),
    "apiextensions.k8s.io": frozenset({"CustomResourceDefinition"}),
    # Kinds the pinned charts render (kubernetes api reference, "Cluster-scoped" per kind).
    "admissionregistration.k8s.io": frozenset(
        {
            "ValidatingWebhookConfiguration",
            "MutatingWebhookConfiguration",
            "ValidatingAdmissionPolicy",
            "ValidatingAdmissionPolicyBinding",
        }
    ),
    "apiregistration.k8s.io": frozenset({"APIService"}),
    "node.k8s.io": frozenset({"RuntimeClass"}),
    "networking.k8s.io": frozenset({"IngressClass"}),
    "kai.scheduler": frozenset({"Config", "SchedulingShard", "Topology"}),
    # kubeflow/trainer v2.2.1 pkg/apis/trainer/v1alpha1/trainingruntime_types.go (scope=Cluster).
    "trainer.kubeflow.org": frozenset({"ClusterTrainingRuntime"}),
}

# The Kubernetes provider puts a namespaced object without metadata.namespace into the
# provider's namespace, "default" unless configured otherwise.
DEFAULT_NAMESPACE = "default"


class Subject(Protocol):
    """Anything a violation can be reported against."""

    @property
    def urn(self) -> str: ...

    def describe(self) -> str: ...


@dataclass(eq=False)
class Resource:
    """A resource registration: type token, Pulumi name, URN and plain props.

    ``props`` are inputs in ``Analyze`` and planned outputs in ``AnalyzeStack``; unknowns are
    :class:`~.values.Unknown` markers.  ``source`` is the SDK object (``PolicyResource`` in stack
    policies) when there is one, for parent/dependency links.
    """

    urn: str
    pulumi_name: str
    type: str
    token: TypeToken
    props: dict[str, Any]
    source: Any = None

    def get(self, *keys: str | int) -> Any:
        return dig(self.props, *keys)

    def describe(self) -> str:
        return f"{self.token.name or self.type} '{self.pulumi_name}'"


@dataclass(eq=False)
class KubeObject(Resource):
    """A Kubernetes API object (built-in or custom resource)."""

    name: str = ""
    namespace: str | None = None
    # False when metadata.name/namespace is unknown during preview: references to or from this
    # object cannot be resolved yet.
    identity_known: bool = True
    auto_named: bool = False
    labels: dict[str, str | Unknown] = field(default_factory=dict)
    annotations: dict[str, str | Unknown] = field(default_factory=dict)
    # False when the whole labels/annotations map is unknown (a computed Output).
    labels_known: bool = True
    annotations_known: bool = True
    # The URN of the Helm release whose chart renders this object; None when the program declares
    # it.  A rendered object's ``urn`` is its release's (findings must name a real resource) and
    # its ``pulumi_name`` the release name.
    rendered_from: str | None = None

    @property
    def group(self) -> str:
        return self.token.group

    @property
    def version(self) -> str:
        return self.token.version

    @property
    def kind(self) -> str:
        return self.token.kind

    @property
    def api_version(self) -> str:
        return self.token.api_version

    @property
    def namespaced(self) -> bool:
        return is_namespaced(self.group, self.kind)

    @property
    def spec(self) -> Any:
        return self.props.get("spec")

    @property
    def qualified_name(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name

    def label(self, key: str) -> str | Unknown | None:
        return self.labels.get(key)

    def describe(self) -> str:
        text = f"{self.kind} '{self.qualified_name}' ({self.api_version})"
        if self.rendered_from is not None:
            text += f" [rendered by Helm release '{self.pulumi_name}']"
        elif self.pulumi_name and self.pulumi_name not in (self.name, self.qualified_name):
            text += f" [resource '{self.pulumi_name}']"
        return text


def is_namespaced(group: str, kind: str) -> bool:
    """A pulumi-kubernetes ``<Kind>Patch`` (``..schema.patches``) is scoped as the kind it patches."""
    cluster_scoped = _CLUSTER_SCOPED.get(group, frozenset())
    return kind not in cluster_scoped and kind.removesuffix(PATCH_SUFFIX) not in cluster_scoped


@dataclass(frozen=True)
class ObjectView:
    """Base of every typed view of one Kubernetes object (ClusterQueue, KAI Queue, RayJob, ...).

    Identity and the description used in violation messages always come from the object itself,
    so every view names its object the same way.
    """

    obj: KubeObject

    @property
    def urn(self) -> str:
        return self.obj.urn

    @property
    def name(self) -> str:
        return self.obj.name

    @property
    def namespace(self) -> str:
        return self.obj.namespace or ""

    def describe(self) -> str:
        return self.obj.describe()


def build_resource(resource_type: str, props: Any, urn: str, name: str, source: Any = None) -> Resource:
    """Turn one registration (proxy or plain props) into a :class:`Resource`/:class:`KubeObject`."""
    token = parse_token(resource_type)
    plain_props = plain(props)
    if not isinstance(plain_props, dict):
        plain_props = {}
    if not token.is_k8s_object:
        return Resource(urn, name, resource_type, token, plain_props, source)
    meta_name = as_str(dig(plain_props, "metadata", "name"))
    identity_known = not isinstance(meta_name, Unknown)
    auto_named = meta_name is None
    obj_name = meta_name if isinstance(meta_name, str) and meta_name else name
    namespace: str | None = None
    if is_namespaced(token.group, token.kind):
        meta_ns = as_str(dig(plain_props, "metadata", "namespace"))
        if isinstance(meta_ns, Unknown):
            identity_known = False
            namespace = DEFAULT_NAMESPACE
        else:
            namespace = meta_ns or DEFAULT_NAMESPACE
    labels = dig(plain_props, "metadata", "labels")
    annotations = dig(plain_props, "metadata", "annotations")
    return KubeObject(
        urn=urn,
        pulumi_name=name,
        type=resource_type,
        token=token,
        props=plain_props,
        source=source,
        name=obj_name,
        namespace=namespace,
        identity_known=identity_known,
        auto_named=auto_named,
        labels=str_map(labels),
        annotations=str_map(annotations),
        labels_known=not isinstance(labels, Unknown),
        annotations_known=not isinstance(annotations, Unknown),
    )
