"""Basic auth over plain HTTP on a public address; snippet annotations; an ingress a team owns.

ingress-nginx checks ``nginx.ingress.kubernetes.io/auth-type: basic`` credentials on whatever
the Ingress serves; without ``spec.tls`` it serves them on port 80, where the
``Authorization: Basic`` header is the password, base64-encoded, in clear text (RFC 7617 §4).
On a public load balancer anyone on the path reads it.  The ``skypilot`` chart 0.13.0 does
exactly that by default (``templates/ingress.yaml``: basic auth from ``ingress.authCredentials``,
``ingress.tls.enabled: false``; its bundled ingress-nginx a ``LoadBalancer`` open to all).

An ingress controller Service counts as public when it is ``type: LoadBalancer`` without an
internal-load-balancer annotation (GKE: ``networking.gke.io/load-balancer-type: Internal``, the
older ``cloud.google.com/load-balancer-type: Internal``) and without
``loadBalancerSourceRanges`` (Kubernetes ``ServiceSpec``).  Judged for Ingresses of the ingress
classes whose controller the stack declares or renders (ingress-nginx labels its controller
Service ``app.kubernetes.io/component: controller``).

**ingress-nginx-snippet-annotations**: the controller's ConfigMap sets
``allow-snippet-annotations: "true"`` (chart value ``controller.allowSnippetAnnotations``; the
skypilot 0.13.0 chart turns it on for its bundled controller): every Ingress author can then inject
raw nginx configuration into the shared controller, which runs with the controller's
ServiceAccount (read access to every Secret in the cluster; CVE-2021-25742).

**skypilot-ingress-owned-by-a-team**: with several SkyPilot releases, one of them installs the
ingress-nginx subchart (``ingress-nginx.enabled``, default true) and the others are served by it,
so uninstalling that team's release takes every other team offline.

**ingress-nginx-retired**: a Helm release of the ``ingress-nginx`` chart (any version, any
repository), or a ``skypilot`` release installing its bundled copy (``ingress-nginx.enabled``,
default true in skypilot 0.13.0 values.yaml).  Kubernetes SIG Network retired the project: best
effort maintenance until March 2026, then no releases and no security fixes (kubernetes.io blog,
2025-11-11, "Ingress NGINX Retirement").  On GKE the built-in Gateway API replaces it without a
chart (components/gateway).

All four are risks: advisory by default, mandatory where a stack's config raises them (prod,
skypilot).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import EnforcementLevel, Policy

from ...facts.model import StackModel
from ...facts.model.base import KubeObject
from ...facts.model.helm import HelmRelease
from ...primitives.values import Unknown, dig
from ..kit.builders import stack_policy
from ..kit.report import Reporter

AUTH_TYPE = "nginx.ingress.kubernetes.io/auth-type"
INTERNAL_ANNOTATIONS = ("networking.gke.io/load-balancer-type", "cloud.google.com/load-balancer-type")


def _public(service: KubeObject) -> bool | None:
    spec = dig(service.props, "spec")
    kind, ranges = dig(spec, "type"), dig(spec, "loadBalancerSourceRanges")
    if isinstance(kind, Unknown) or isinstance(ranges, Unknown) or not service.annotations_known:
        return None
    if kind != "LoadBalancer":
        return False
    if any(str(service.annotations.get(a, "")).lower() == "internal" for a in INTERNAL_ANNOTATIONS):
        return False
    return not (isinstance(ranges, list) and ranges)


def _public_controllers(model: StackModel) -> tuple[list[KubeObject], bool]:
    """(public ingress-nginx controller Services, whether any controller Service exists)."""
    controllers = [
        s
        for s in model.kube_objects("", "Service")
        if s.labels.get("app.kubernetes.io/name") == "ingress-nginx"
        and s.labels.get("app.kubernetes.io/component") == "controller"
    ]
    return [s for s in controllers if _public(s) is not False], bool(controllers)


def check_basic_auth_over_http(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    public, any_controller = _public_controllers(model)
    if not any_controller:
        return
    for ingress in model.kube_objects("networking.k8s.io", "Ingress"):
        if str(ingress.annotations.get(AUTH_TYPE, "")).lower() != "basic":
            continue
        tls = dig(ingress.props, "spec", "tls")
        if isinstance(tls, Unknown):
            reporter.cannot_check(ingress, "spec.tls is unknown until apply")
            continue
        if isinstance(tls, list) and tls:
            continue
        if not public:
            continue
        if any(_public(s) is None for s in public):
            reporter.cannot_check(
                ingress, "whether its ingress controller's load balancer is public is unknown"
            )
            continue
        names = ", ".join(s.qualified_name for s in public)
        reporter.violation(
            ingress,
            f"asks for basic auth over plain HTTP (no spec.tls) behind the public load balancer {names}: "
            "every password crosses the internet base64-encoded",
            "serve it with TLS (skypilot chart: ingress.tls.enabled with ingress.host) and make the load "
            "balancer internal (networking.gke.io/load-balancer-type: Internal) or set loadBalancerSourceRanges",
        )


def check_snippet_annotations(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    for config_map in model.kube_objects("", "ConfigMap"):
        if config_map.labels.get("app.kubernetes.io/name") != "ingress-nginx":
            continue
        allowed = dig(config_map.props, "data", "allow-snippet-annotations")
        if isinstance(allowed, Unknown):
            reporter.cannot_check(config_map, "data.allow-snippet-annotations is unknown until apply")
        elif str(allowed).lower() == "true":
            reporter.violation(
                config_map,
                "lets every Ingress author inject nginx configuration into the shared controller "
                "(allow-snippet-annotations: true)",
                "set the chart value controller.allowSnippetAnnotations: false",
            )


def _installs_bundled_nginx(release: HelmRelease, reporter: Reporter) -> bool:
    """A skypilot release's ``ingress-nginx.enabled`` (default true); unknown: cannot check, False."""
    installs = release.value("ingress-nginx", "enabled")
    if isinstance(installs, Unknown):
        reporter.cannot_check(release, "ingress-nginx.enabled")
        return False
    return installs is not False


def check_team_owned_ingress(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    releases = model.skypilot_releases()
    if len(releases) < 2:
        return
    for release in releases:
        if _installs_bundled_nginx(release, reporter):
            reporter.violation(
                release,
                f"installs the ingress controller {len(releases) - 1} other SkyPilot server(s) are served by: "
                "removing this team's release takes them all offline",
                "install ingress-nginx as its own release that no team owns and set ingress-nginx.enabled: false "
                "on every SkyPilot release",
            )


RETIREMENT = (
    "Kubernetes SIG Network retired ingress-nginx: no releases or security fixes after March 2026 "
    '(kubernetes.io blog, 2025-11-11, "Ingress NGINX Retirement")'
)


def _chart_basename(chart: object) -> str | None:
    """``ingress-nginx``, ``repo/ingress-nginx``, ``oci://host/path/ingress-nginx``: the last segment."""
    if not isinstance(chart, str):
        return None
    return chart.rstrip("/").rsplit("/", 1)[-1] or None


def check_ingress_nginx_retired(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    for release in model.helm_releases():
        if isinstance(release.chart, Unknown):
            reporter.cannot_check(release, "chart")
            continue
        if _chart_basename(release.chart) == "ingress-nginx":
            reporter.violation(
                release,
                f"installs ingress-nginx. {RETIREMENT}",
                "on GKE use the built-in Gateway API (gatewayApiConfig.channel: CHANNEL_STANDARD, GatewayClass "
                "gke-l7-rilb or gke-l7-regional-external-managed) and remove this release",
            )
    for release in model.skypilot_releases():
        if _installs_bundled_nginx(release, reporter):
            reporter.violation(
                release,
                f"installs the chart's bundled ingress-nginx (ingress-nginx.enabled defaults to true). {RETIREMENT}",
                "set ingress-nginx.enabled: false and ingress.enabled: false and serve the API server through the "
                "GKE Gateway API (an HTTPRoute to its ClusterIP Service)",
            )


POLICIES: list[Policy] = [
    stack_policy(
        "ingress-nginx-retired",
        "No ingress-nginx: the project is retired (Kubernetes SIG Network, 2025-11-11).",
        check_ingress_nginx_retired,
        enforcement_level=EnforcementLevel.ADVISORY,
    ),
    stack_policy(
        "ingress-nginx-snippet-annotations",
        "The shared ingress-nginx controller does not accept snippet annotations.",
        check_snippet_annotations,
        enforcement_level=EnforcementLevel.ADVISORY,
    ),
    stack_policy(
        "skypilot-ingress-owned-by-a-team",
        "Several SkyPilot servers are not served by an ingress controller one team's release owns.",
        check_team_owned_ingress,
        enforcement_level=EnforcementLevel.ADVISORY,
    ),
    stack_policy(
        "basic-auth-plain-http-public",
        "No Ingress asks for basic auth over plain HTTP on a public load balancer.",
        check_basic_auth_over_http,
        enforcement_level=EnforcementLevel.ADVISORY,
    ),
]
