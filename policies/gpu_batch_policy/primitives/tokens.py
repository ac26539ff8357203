"""Pulumi type tokens as the engine sends them, parsed into what the rules match on.

Wire facts (DESIGN.md "Wire facts", pulumi.md §1.4): a Kubernetes object registered through
``apiextensions.CustomResource`` or a typed class has the token
``kubernetes:<group>/<version>:<Kind>`` (core objects: ``kubernetes:core/v1:Namespace``); a Helm
v3 release is ``kubernetes:helm.sh/v3:Release`` (an ordinary custom resource, not an API object);
GKE is ``gcp:container/cluster:Cluster`` and ``gcp:container/nodePool:NodePool``.  Tokens are the
only reliable discriminator: the pack must judge any program's resources, so it never looks at
component types or names.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, lru_cache

GKE_CLUSTER = "gcp:container/cluster:Cluster"
GKE_NODE_POOL = "gcp:container/nodePool:NodePool"
HELM_RELEASE = "kubernetes:helm.sh/v3:Release"

KUEUE_GROUP = "kueue.x-k8s.io"
KAI_GROUP = "scheduling.run.ai"
RAY_GROUP = "ray.io"
CORE_GROUP = ""


def type_token(api_version: str, kind: str) -> str:
    """``kubernetes:<group>/<version>:<Kind>``; the core group (``v1``) becomes ``core/v1``."""
    group_version = api_version if "/" in api_version else f"core/{api_version}"
    return f"kubernetes:{group_version}:{kind}"


# Token segments of the Kubernetes provider that are not API objects (helm, yaml, kustomize, the
# provider itself): their "group/version" is a Pulumi module, not an API group.
_K8S_NON_API_MODULES = ("helm.sh/", "yaml/", "kustomize/", "providers")


@dataclass(frozen=True)
class TypeToken:
    """``<package>:<module>:<name>``; for Kubernetes API objects also group/version/kind."""

    token: str
    package: str
    module: str
    name: str

    @cached_property
    def is_k8s_object(self) -> bool:
        """A Kubernetes API object (CR or built-in), not a helm/yaml/provider pseudo-resource."""
        return (
            self.package == "kubernetes"
            and "/" in self.module
            and not self.module.startswith(_K8S_NON_API_MODULES)
        )

    @cached_property
    def group(self) -> str:
        """API group; ``core`` maps to the empty core group, as in ``apiVersion: v1``."""
        if not self.is_k8s_object:
            return ""
        group = self.module.rsplit("/", 1)[0]
        return CORE_GROUP if group == "core" else group

    @cached_property
    def version(self) -> str:
        return self.module.rsplit("/", 1)[1] if self.is_k8s_object else ""

    @property
    def kind(self) -> str:
        return self.name

    @property
    def api_version(self) -> str:
        """``apiVersion`` as written in a manifest: ``v1`` or ``<group>/<version>``."""
        return f"{self.group}/{self.version}" if self.group else self.version


@lru_cache(maxsize=4096)
def parse_token(token: str) -> TypeToken:
    """Split a type token; a malformed one yields empty parts rather than an exception.

    Cached: a stack has a handful of distinct tokens and every resource of every rule run parses
    one (the result is immutable)."""
    # The name may itself contain ':' only in provider tokens (pulumi:providers:kubernetes).
    parts = token.split(":", 2)
    if len(parts) != 3:
        return TypeToken(token=token, package=parts[0] if parts else "", module="", name="")
    return TypeToken(token=token, package=parts[0], module=parts[1], name=parts[2])
