"""Who can reach a GKE cluster, and whether its RBAC Group subjects bind anyone.

* **rbac-groups-bind** (mandatory: such a binding cannot work).  GKE puts a user's Google Groups
  into the request's groups only when the cluster enables Google Groups for RBAC,
  ``authenticatorGroupsConfig.securityGroup: gke-security-groups@<domain>`` (GKE docs,
  how-to/google-groups-rbac; terraform-provider-google ``authenticator_groups_config.security_group``,
  pulumi_gcp 10.2.0 ``ClusterAuthenticatorGroupsConfigArgs``).  Without it a RoleBinding or
  ClusterRoleBinding whose subject is a ``Group`` named like a Google Group binds nobody -- and
  people end up with project-wide IAM roles that reach every namespace instead.  Judged when the
  stack declares GKE clusters and none of them enables it; ``system:`` groups are Kubernetes'
  own and always bind.
* **gke-endpoint-not-public** (advisory by default; mandatory in prod's config).  A production
  cluster -- one with ``deletionProtection``, or any cluster when the rule's config says
  ``production: true`` -- whose control-plane IP endpoint answers the whole internet: the IP
  endpoint on (``controlPlaneEndpointsConfig.ipEndpointsConfig.enabled`` not false), no private
  endpoint (``privateClusterConfig.enablePrivateEndpoint`` not true), and no master authorized
  networks or one listing ``0.0.0.0/0`` (GKE docs, how-to/authorized-networks and
  concepts/network-isolation).  A risk, not an impossibility: the API server still
  authenticates every request.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from typing import Any

from pulumi_policy import EnforcementLevel, Policy, PolicyConfigSchema

from ...facts.model import StackModel
from ...facts.model.gke import GkeCluster
from ...facts.rbac import bindings, subjects
from ...primitives.values import Unknown, dig
from ..kit.builders import stack_policy
from ..kit.report import Reporter, config_value


def _groups_enabled(cluster: GkeCluster) -> bool | None:
    group = cluster.res.get("authenticatorGroupsConfig", "securityGroup")
    if isinstance(group, Unknown):
        return None
    return isinstance(group, str) and bool(group)


def check_groups_bind(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    clusters = model.gke_clusters()
    if not clusters:
        return
    enabled = [_groups_enabled(c) for c in clusters]
    if True in enabled:
        return
    for binding in bindings(model):
        groups = [
            str(s.get("name"))
            for s in subjects(binding)
            if s.get("kind") == "Group"
            and isinstance(s.get("name"), str)
            and not str(s.get("name")).startswith("system:")
        ]
        if not groups:
            continue
        if None in enabled:
            reporter.cannot_check(
                binding, "whether the cluster enables Google Groups for RBAC is unknown until apply"
            )
            continue
        reporter.violation(
            binding,
            f"binds Group subject(s) {', '.join(groups)}, but no GKE cluster of the stack enables Google Groups "
            "for RBAC (authenticatorGroupsConfig), so GKE never puts those groups in a request and the binding "
            "binds nobody",
            "set the cluster's authenticatorGroupsConfig.securityGroup to gke-security-groups@<your domain> and "
            "make the groups members of it",
        )


def _open_to_everyone(cluster: GkeCluster) -> tuple[bool, str] | None:
    """(open, why) for the cluster's IP endpoint; None when unknown."""
    res = cluster.res
    ip_enabled = res.get("controlPlaneEndpointsConfig", "ipEndpointsConfig", "enabled")
    private_endpoint = res.get("privateClusterConfig", "enablePrivateEndpoint")
    networks = res.get("masterAuthorizedNetworksConfig")
    if any(isinstance(v, Unknown) for v in (ip_enabled, private_endpoint, networks)):
        return None
    if ip_enabled is False:
        return False, "IP endpoints off"
    if private_endpoint is True:
        return False, "private endpoint only"
    if not isinstance(networks, Mapping):
        return True, "its public endpoint has no master authorized networks"
    blocks = dig(networks, "cidrBlocks")
    for block in blocks if isinstance(blocks, list) else []:
        cidr = dig(block, "cidrBlock")
        if isinstance(cidr, Unknown):
            return None
        try:
            if isinstance(cidr, str) and ipaddress.ip_network(cidr, strict=False).prefixlen == 0:
                return True, f"its master authorized networks list {cidr}"
        except ValueError:
            continue
    if dig(networks, "gcpPublicCidrsAccessEnabled") is True:
        return (
            True,
            "gcpPublicCidrsAccessEnabled lets every Google Cloud public address (anyone's VM) reach it",
        )
    return False, "restricted by master authorized networks"


def check_endpoint(model: StackModel, reporter: Reporter, config: Mapping[str, Any]) -> None:
    production = config_value(config, "production", False) is True
    for cluster in model.gke_clusters():
        protected = cluster.res.get("deletionProtection")
        if isinstance(protected, Unknown) and not production:
            reporter.cannot_check(cluster, "deletionProtection is unknown until apply")
            continue
        # pulumi_gcp 10.2.0: deletion_protection defaults to true when unset.
        if not production and protected is False:
            continue
        verdict = _open_to_everyone(cluster)
        if verdict is None:
            reporter.cannot_check(cluster, "the control-plane endpoint settings are unknown until apply")
            continue
        is_open, why = verdict
        if is_open:
            reporter.violation(
                cluster,
                f"a production cluster whose control-plane endpoint is open to the whole internet: {why}",
                "use the DNS-based endpoint only (controlPlaneEndpointsConfig: {dnsEndpointConfig: "
                "{allowExternalTraffic: true}, ipEndpointsConfig: {enabled: false}}), or set "
                "masterAuthorizedNetworksConfig to the CIDRs that must reach it",
            )


POLICIES: list[Policy] = [
    stack_policy(
        "rbac-groups-bind",
        "RoleBindings with Google Group subjects bind only on a GKE cluster with Google Groups for RBAC.",
        check_groups_bind,
    ),
    stack_policy(
        "gke-endpoint-not-public",
        "A production GKE cluster does not expose its control-plane endpoint to the whole internet.",
        check_endpoint,
        enforcement_level=EnforcementLevel.ADVISORY,
        config_schema=PolicyConfigSchema(
            properties={
                "production": {
                    "type": "boolean",
                    "default": False,
                    "description": "judge every cluster as production, not only those with deletionProtection",
                }
            }
        ),
    ),
]
