"""The capacity report's "Tenancy and access" section (issue 19).

What a reviewer must see to judge whether teams really are held to their quotas: per namespace,
who is bound (and whether GKE will put their Google Groups in a request), which workload kinds
they may create, and which admission policy holds those kinds to a queue; who gets project IAM
to reach the cluster; and how each ingress is exposed.  Read from the recorded wire form, so any
program's resources are reported.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from gpu_batch_policy.primitives.values import Unknown
from gpu_batch_policy.rules.tenancy.skypilot import server_auth

from preview.records import RecordedResource, shown_inputs

ROLE = "kubernetes:rbac.authorization.k8s.io/v1:Role"
ROLE_BINDING = "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding"
POLICY = "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicy"
POLICY_BINDING = "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicyBinding"
IAM_MEMBER = "gcp:projects/iAMMember:IAMMember"
RELEASE = "kubernetes:helm.sh/v3:Release"
CLUSTER_VIEWER = "roles/container.clusterViewer"
SUBMIT_KINDS = {"pods", "jobs", "rayjobs", "rayclusters"}


def _inputs(resources: Iterable[RecordedResource], type_token: str) -> list[dict[str, Any]]:
    """The shown inputs of each resource of one type: ``plan.json``'s own (``shown_inputs``),
    computed once per record and read here without a change."""
    return [shown_inputs(r) for r in resources if r.type == type_token]


def _creatable(role: dict[str, Any]) -> list[str]:
    kinds: set[str] = set()
    for rule in role.get("rules") or []:
        if "create" in (rule.get("verbs") or []) or "*" in (rule.get("verbs") or []):
            kinds.update(r for r in rule.get("resources") or [] if r in SUBMIT_KINDS)
    return sorted(kinds)


def _policies_by_namespace(resources: Sequence[RecordedResource]) -> dict[str, list[str]]:
    specs = {p["metadata"]["name"]: p.get("spec") or {} for p in _inputs(resources, POLICY)}
    out: dict[str, list[str]] = {}
    for binding in _inputs(resources, POLICY_BINDING):
        spec = binding.get("spec") or {}
        selector = ((spec.get("matchResources") or {}).get("namespaceSelector") or {}).get(
            "matchLabels"
        ) or {}
        namespace = selector.get("kubernetes.io/metadata.name", "every namespace")
        policy = specs.get(spec.get("policyName"), {})
        kinds = sorted(
            {
                r
                for rule in (policy.get("matchConstraints") or {}).get("resourceRules") or []
                for r in rule["resources"]
            }
        )
        text = " ".join(str(v.get("expression")) for v in policy.get("validations") or [])
        requires = "queue label" + (" + kai-scheduler" if "kai-scheduler" in text else "")
        actions = "/".join(spec.get("validationActions") or [])
        out.setdefault(namespace, []).append(
            f"`{spec.get('policyName')}` ({actions}): {requires} on {', '.join(kinds)}"
        )
    return {namespace: sorted(lines) for namespace, lines in out.items()}


def _exposure_lines(resources: Sequence[RecordedResource]) -> list[str]:
    """How each ingress controller, Gateway and SkyPilot server is exposed, from the releases'
    values and the declared Gateway API objects."""
    lines: list[str] = [_gateway_line(g) for g in sorted(_inputs(resources, GATEWAY), key=_where)]
    routes = _inputs(resources, HTTP_ROUTE)
    for release in sorted(
        _inputs(resources, RELEASE), key=lambda r: (str(r.get("namespace")), str(r.get("name")))
    ):
        values = release.get("values") or {}
        if release.get("chart") == "ingress-nginx":
            controller = values.get("controller") or {}
            service = controller.get("service") or {}
            annotations = service.get("annotations") or {}
            ranges = service.get("loadBalancerSourceRanges") or []
            internal = str(annotations.get("networking.gke.io/load-balancer-type", "")).lower() == "internal"
            where = (
                "GKE internal load balancer (VPC only)"
                if internal
                else (
                    f"external load balancer limited to {', '.join(ranges)}"
                    if ranges
                    else "**public load balancer**"
                )
            )
            snippets = "off" if controller.get("allowSnippetAnnotations") is False else "**on**"
            lines.append(
                f"- Ingress controller `{release.get('namespace')}/{release.get('name')}` (its own release, no team's): "
                f"{where}; snippet annotations {snippets}."
            )
        elif release.get("chart") == "skypilot":
            lines.append(_skypilot_line(release, values, routes))
    return lines


GATEWAY = "kubernetes:gateway.networking.k8s.io/v1:Gateway"
HTTP_ROUTE = "kubernetes:gateway.networking.k8s.io/v1:HTTPRoute"
AUTH_WORDS = {
    "basic": "the server authenticates every request (basic auth, user management)",
    "oauth": "the server authenticates every request (OAuth)",
}


def _where(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    return f"{meta.get('namespace')}/{meta.get('name')}"


def _gateway_line(gateway: Mapping[str, Any]) -> str:
    spec = gateway.get("spec") or {}
    listeners = spec.get("listeners") or []
    protocols = sorted({str(listener.get("protocol")) for listener in listeners})
    return (
        f"- Gateway `{_where(gateway)}` (class `{spec.get('gatewayClassName')}`, no team's): "
        f"listeners {', '.join(protocols) or 'none'}"
        + ("" if protocols == ["HTTPS"] else " (**not HTTPS only**)")
        + "."
    )


def _skypilot_line(
    release: Mapping[str, Any], values: Mapping[str, Any], routes: Sequence[Mapping[str, Any]]
) -> str:
    """The server's entry (its HTTPRoute hosts, or its chart ingress) and who authenticates."""
    name, namespace = release.get("name"), release.get("namespace")
    service = f"{name}-api-service"  # skypilot 0.13.0 templates/api-service.yaml
    hosts = sorted(
        str(host)
        for route in routes
        if (route.get("metadata") or {}).get("namespace") == namespace
        and any(
            ref.get("name") == service
            for rule in (route.get("spec") or {}).get("rules") or []
            for ref in rule.get("backendRefs") or []
        )
        for host in (route.get("spec") or {}).get("hostnames") or []
    )
    ingress = values.get("ingress") or {}
    if hosts:
        entry = "HTTPS through the Gateway on " + ", ".join(f"`{h}`" for h in hosts)
    elif ingress.get("enabled") is False:
        entry = "no ingress, no route (ClusterIP only)"
    elif (ingress.get("tls") or {}).get("enabled") is True:
        entry = f"HTTPS on `{ingress.get('host')}{ingress.get('path', '/')}` (chart ingress)"
    else:
        entry = "**plain HTTP** (chart ingress)"
    auth = server_auth(values)
    if isinstance(auth, Unknown):
        who = "authentication unknown until apply"
    elif auth is None:
        who = "**the server authenticates no request itself**"
    else:
        who = AUTH_WORDS[auth]
    rbac = values.get("rbac") or {}
    return (
        f"- SkyPilot `{namespace}/{name}`: {entry}; "
        + who
        + "; ClusterRole management "
        + ("off" if rbac.get("manageRbacPolicies") is False else "**on (can make itself cluster-admin)**")
        + "."
    )


def tenancy_section(resources: Sequence[RecordedResource], table: Any) -> list[str]:
    """Markdown lines; ``table(header, rows)`` is the report's own table renderer."""
    roles = _inputs(resources, ROLE)
    if not roles:
        return []
    bindings: dict[tuple[str, str], list[str]] = {}
    for b in _inputs(resources, ROLE_BINDING):
        key = (b["metadata"].get("namespace", ""), (b.get("roleRef") or {}).get("name", ""))
        bindings.setdefault(key, []).extend(
            f"{s.get('kind')} {s.get('name')}" for s in b.get("subjects") or []
        )
    policies = _policies_by_namespace(resources)
    rows = sorted(
        (
            [
                f"{role['metadata'].get('namespace', '')}/{role['metadata'].get('name', '')}",
                ", ".join(
                    bindings.get(
                        (role["metadata"].get("namespace", ""), role["metadata"].get("name", "")), []
                    )
                )
                or "nobody",
                ", ".join(_creatable(role)) or "nothing",
                "; ".join(policies.get(role["metadata"].get("namespace", ""), [])) or "**none**",
            ]
            for role in roles
        ),
        key=lambda row: str(row[0]),  # registration order varies between runs
    )
    viewers = sorted(
        str(m.get("member")) for m in _inputs(resources, IAM_MEMBER) if m.get("role") == CLUSTER_VIEWER
    )
    out = ["### Tenancy and access", ""]
    out += table(["Role", "bound to", "may create", "held to a queue by"], rows)
    out += [
        "",
        f"- Project IAM to reach the cluster (`{CLUSTER_VIEWER}`, nothing broader): "
        + (", ".join(f"`{v}`" for v in viewers) if viewers else "**nobody**")
        + ".",
        *_exposure_lines(resources),
        "",
    ]
    return out
