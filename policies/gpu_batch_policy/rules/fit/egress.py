"""private-nodes-need-egress: private nodes can pull every image, via Cloud NAT or a mirror.

Nodes without external IPs reach Google APIs through Private Google Access, which serves
Container Registry and Artifact Registry (``gcr.io``, ``*.gcr.io``, ``*.pkg.dev``; GCP doc
"Private Google Access" → supported services, and "Configure restricted access for GKE private
clusters" naming exactly the ``pkg.dev`` and ``gcr.io`` domains).  ``registry.k8s.io`` is the
Kubernetes project's registry, not a Google API domain, so it is *not* reachable that way, and
neither are ``ghcr.io``, ``docker.io``, ``quay.io`` or ``nvcr.io``.  Pulling from them needs
Cloud NAT (GKE doc "Advanced private cluster configurations" → "Granting private nodes outbound
internet access") or a mirror the operator declares: the pack config property
``allowedRegistryPrefixes`` lists image prefixes that are reachable (for example an Artifact
Registry remote repository).  Images come from every pod template, declared or rendered, and from
KAI's operator ``Config``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from pulumi_policy import Policy

from ...facts.fit import kai_config
from ...facts.fit.network import has_cloud_nat, private_clusters
from ...facts.model import StackModel
from ...facts.open_world import World, world_schema
from ...facts.pod_templates import owned_templates
from ...primitives.values import Unknown, as_str, dig
from ..kit.builders import stack_policy
from ..kit.report import Reporter, config_value

GOOGLE_REGISTRIES = ("gcr.io",)
GOOGLE_REGISTRY_SUFFIXES = (".gcr.io", ".pkg.dev")
DOCKER_HUB = "docker.io"


def registry_of(image: str) -> str:
    """The registry host of an image reference (Docker's rule: a first path component with a dot
    or colon, or ``localhost``, is a host; otherwise Docker Hub)."""
    first, sep, _ = image.partition("/")
    if sep and ("." in first or ":" in first or first == "localhost"):
        return first
    return DOCKER_HUB


def is_google_registry(host: str) -> bool:
    return host in GOOGLE_REGISTRIES or host.endswith(GOOGLE_REGISTRY_SUFFIXES)


def stack_images(model: StackModel) -> Iterator[tuple[str | Unknown, str]]:
    """(image, who uses it) for every container image the stack will run."""
    for owned in owned_templates(model):
        for key in ("containers", "initContainers"):
            containers = dig(owned.template.raw, "spec", key)
            if isinstance(containers, Unknown):
                yield containers, owned.owner.describe()
                continue
            for container in containers if isinstance(containers, list) else []:
                image = as_str(dig(container, "image"))
                if image is not None:
                    yield image, owned.owner.describe()
    for config in kai_config.kai_configs(model):
        for image in kai_config.images(config):
            yield image, f"{config.describe()} (created by the KAI operator)"


def _mirrored(image: str, prefixes: Sequence[str]) -> bool:
    return any(image.startswith(prefix) for prefix in prefixes)


def check_egress(model: StackModel, reporter: Reporter, config: Mapping[str, Any]) -> None:
    if World.from_config(config).has_kind("RouterNat"):
        return  # a Cloud NAT the network's owners run (Shared VPC, organisation-managed networks)
    clusters, undecided = private_clusters(model)
    for cluster in undecided:
        reporter.cannot_check(cluster, "privateClusterConfig.enablePrivateNodes unknown until apply")
    if not clusters:
        return
    prefixes = [p for p in config_value(config, "allowedRegistryPrefixes", []) if isinstance(p, str)]
    outside: dict[str, list[str]] = {}
    for image, user in stack_images(model):
        if isinstance(image, Unknown):
            reporter.cannot_check(clusters[0].cluster, f"image of {user} unknown until apply")
            continue
        host = registry_of(image)
        if not is_google_registry(host) and not _mirrored(image, prefixes):
            outside.setdefault(host, []).append(f"{image} ({user})")
    if not outside:
        return
    for target in clusters:
        nat = has_cloud_nat(model, target)
        if nat is None:
            reporter.cannot_check(target.cluster, "whether a Cloud NAT serves its network/region")
            continue
        if nat:
            continue
        listed = "; ".join(
            f"{host}: {', '.join(users[:2])}{' …' if len(users) > 2 else ''}"
            for host, users in sorted(outside.items())
        )
        reporter.violation(
            target.cluster,
            f"has private nodes but no Cloud NAT in region {target.region} on network {target.network}, "
            f"and pulls images from registries Private Google Access does not serve ({listed})",
            f"add a gcp.compute.Router on network {target.network} in {target.region} with a "
            "gcp.compute.RouterNat for the cluster's subnetwork (sourceSubnetworkIpRangesToNat: "
            "LIST_OF_SUBNETWORKS with its ALL_IP_RANGES), list a NAT another stack owns as "
            '{"kind": "RouterNat", "name": "<nat>"} under externalObjects, or mirror the images and '
            "list the mirror in the policy config `allowedRegistryPrefixes`",
        )


POLICIES: list[Policy] = [
    stack_policy(
        "private-nodes-need-egress",
        "With private nodes, images from registries outside Google's (gcr.io, *.gcr.io, *.pkg.dev) "
        "need a Cloud NAT for the cluster's region and network, or a declared mirror.",
        check_egress,
        config_schema=world_schema(
            {
                "allowedRegistryPrefixes": {
                    "type": "array",
                    "items": {"type": "string"},
                    "default": [],
                    "description": "Image prefixes private nodes can reach without Cloud NAT (mirrors).",
                }
            },
            closed_world=False,
        ),
    ),
]
