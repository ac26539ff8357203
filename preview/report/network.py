"""The capacity report's "Network and webhook readiness" section.

What a reviewer of a private-node stack must see before ``pulumi up`` (issue 10 #1, #4): do the
nodes have egress (Cloud NAT in the cluster's region), can the control plane reach the admission
webhooks (a firewall rule from ``masterIpv4CidrBlock`` on their ports), who may reach the
control-plane endpoint (master authorized networks), and which readiness gate each set of queue
objects waits for.  Read from the recorded wire form, so any program's resources are reported.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from preview.records import RecordedResource, for_display

CLUSTER = "gcp:container/cluster:Cluster"
ROUTER = "gcp:compute/router:Router"
NAT = "gcp:compute/routerNat:RouterNat"
FIREWALL = "gcp:compute/firewall:Firewall"
DYNAMIC = "pulumi-python:dynamic:Resource"


def _region(location: str) -> str:
    return re.sub(r"-[a-z]$", "", location)


def _of(resources: Iterable[RecordedResource], type_token: str) -> list[RecordedResource]:
    return [r for r in resources if r.type == type_token]


def _cluster_lines(cluster: RecordedResource) -> list[str]:
    inputs: dict[str, Any] = for_display(cluster.inputs)
    private = inputs.get("privateClusterConfig") or {}
    authorized = inputs.get("masterAuthorizedNetworksConfig")
    endpoints = inputs.get("controlPlaneEndpointsConfig") or {}
    if (endpoints.get("ipEndpointsConfig") or {}).get("enabled") is False:
        external = (endpoints.get("dnsEndpointConfig") or {}).get("allowExternalTraffic")
        endpoint = "none: IP endpoints off; DNS-based endpoint only, every request checked by Google IAM" + (
            " (reachable wherever Google APIs are)" if external else " (from the VPC only)"
        )
    elif authorized is None:
        endpoint = "open to all (no master authorized networks)"
    else:
        blocks = [b.get("cidrBlock") for b in authorized.get("cidrBlocks") or []]
        endpoint = (
            ", ".join(blocks) if blocks else "closed to all but Google (empty master authorized networks)"
        )
    return [
        f"- Cluster `{inputs.get('name')}` in `{inputs.get('location')}`: "
        + (
            f"private nodes, control plane `{private.get('masterIpv4CidrBlock')}`"
            if private.get("enablePrivateNodes")
            else "nodes with public IPs"
        )
        + f"; public endpoint: {endpoint}.",
        "- Google Groups for RBAC: "
        + (
            f"`{groups}`: Group subjects of RoleBindings bind."
            if (groups := (inputs.get("authenticatorGroupsConfig") or {}).get("securityGroup"))
            else "**off**: RoleBindings to Google Groups bind nobody."
        ),
    ]


def _nat_line(cluster: RecordedResource, resources: Sequence[RecordedResource]) -> str:
    region = _region(str(cluster.inputs.get("location", "")))
    nats = [r for r in _of(resources, NAT) if r.inputs.get("region") == region]
    if nats:
        names = ", ".join(f"`{r.inputs.get('name', r.name)}`" for r in nats)
        return f"- Node egress: Cloud NAT {names} in `{region}`."
    private = (cluster.inputs.get("privateClusterConfig") or {}).get("enablePrivateNodes")
    return (
        f"- Node egress: **no Cloud NAT in `{region}`**: private nodes cannot pull images."
        if private
        else "- Node egress: the nodes' own public IPs (no NAT needed)."
    )


def _firewall_rows(cluster: RecordedResource, resources: Sequence[RecordedResource]) -> list[list[object]]:
    master = (cluster.inputs.get("privateClusterConfig") or {}).get("masterIpv4CidrBlock")
    rows: list[list[object]] = []
    for rule in _of(resources, FIREWALL):
        inputs: dict[str, Any] = for_display(rule.inputs)
        sources = inputs.get("sourceRanges") or []
        ports = sorted({p for allow in inputs.get("allows") or [] for p in allow.get("ports") or []})
        rows.append(
            [
                inputs.get("name", rule.name),
                ", ".join(sources),
                ", ".join(ports) or "all",
                ", ".join(inputs.get("targetTags") or []) or "all instances",
                "yes" if master in sources else "no",
            ]
        )
    return rows


def _gate_rows(resources: Sequence[RecordedResource]) -> list[list[object]]:
    by_urn = {r.urn: r for r in resources}
    rows: list[list[object]] = []
    for gate in _of(resources, DYNAMIC):
        probes, names = gate.inputs.get("probes"), gate.inputs.get("names")
        if isinstance(probes, list):
            kinds = ", ".join(f"{p.get('plural')}.{p.get('group')}" for p in probes if isinstance(p, dict))
        elif isinstance(names, list):  # components/runtime_class_gate.py
            kinds = "RuntimeClass " + ", ".join(str(n) for n in names) + " exists"
        else:
            continue
        after = ", ".join(
            sorted(by_urn[u].name for u in gate.dependencies if u in by_urn and by_urn[u].custom)
        )
        waiting = sum(1 for r in resources if gate.urn in r.dependencies and r.custom)
        rows.append([gate.name, kinds, after, waiting])
    return sorted(rows, key=lambda row: str(row[0]))  # by gate name: registration order varies


def network_section(resources: Sequence[RecordedResource], table: Any) -> list[str]:
    """Markdown lines; ``table(header, rows)`` is the report's own table renderer."""
    clusters = _of(resources, CLUSTER)
    if not clusters:
        return []
    out = ["### Network and webhook readiness", ""]
    for cluster in clusters:
        out += _cluster_lines(cluster)
        out.append(_nat_line(cluster, resources))
        rows = _firewall_rows(cluster, resources)
        private = (cluster.inputs.get("privateClusterConfig") or {}).get("enablePrivateNodes")
        if rows:
            out += ["", *table(["firewall rule", "from", "tcp ports", "to", "from the control plane"], rows)]
        elif private:
            out.append(
                "- Webhooks: **no firewall rule from the control plane**: GKE opens only 443 and 10250, "
                "so webhooks on other ports time out."
            )
    gates = _gate_rows(resources)
    if gates:
        out += [
            "",
            *table(
                [
                    "readiness gate",
                    "waits until these webhooks serve (or object exists)",
                    "after",
                    "objects waiting",
                ],
                gates,
            ),
        ]
    out.append("")
    return out
