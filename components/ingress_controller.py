"""The ingress controller the SkyPilot API servers share: its own release, owned by no team.

Before issue 19 the first team's ``skypilot`` release installed the bundled ``ingress-nginx``
subchart, so removing that team took every other team offline.  Here it is a release of its own
(chart ``ingress-nginx`` 4.11.8 from https://kubernetes.github.io/ingress-nginx, the version
skypilot 0.13.0 bundles, see charts.lock.yaml) in namespace ``skypilot-ingress``, and every team
release sets ``ingress-nginx.enabled: false``.

How it is exposed (values from ingress-nginx 4.11.8 ``values.yaml``):

* ``controller.allowSnippetAnnotations: false``: no Ingress author can inject nginx
  configuration (CVE-2021-25742 class).  SkyPilot's ingress uses snippet annotations only with its
  oauth2-proxy, which this stack does not enable (skypilot 0.13.0 ``templates/ingress.yaml``); the
  websocket ``http-snippet`` SkyPilot needs is ConfigMap configuration, set here by the platform.
* ``internal`` (default): a GKE internal passthrough Network Load Balancer
  (``networking.gke.io/load-balancer-type: "Internal"``, GKE docs
  concepts/service-load-balancer): reachable from the VPC and networks peered or connected to it,
  never from the internet.
* ``external``: an external L4 load balancer (``cloud.google.com/l4-rbs``, as SkyPilot's chart
  sets) restricted to ``loadBalancerSourceRanges`` from config.
* The admission webhook stays on (port 8443, opened from the control plane by
  :mod:`components.network` on private clusters), so a broken Ingress is refused at apply time.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import pulumi
import pulumi_kubernetes as k8s

from components.chart_lock import locked
from components.operator_release import ChartRef, operator_namespace, operator_release

INGRESS_NAMESPACE = "skypilot-ingress"
INGRESS_CLASS = "nginx"
INTERNAL_LB_ANNOTATION = {"networking.gke.io/load-balancer-type": "Internal"}
EXTERNAL_LB_ANNOTATION = {"cloud.google.com/l4-rbs": "enabled"}
# SkyPilot's own controller config (skypilot 0.13.0 values.yaml ingress-nginx.controller.config):
# websocket upgrades for `sky ssh` and log streaming.
WEBSOCKET_SNIPPET = "map $http_upgrade $connection_upgrade {\n    default upgrade;\n    ''      close;\n}\n"
Exposure = Literal["internal", "external"]


# How long Helm may wait for the release (see components.operator_release.operator_release):
# Helm waits for the LoadBalancer Service's address (pkg/kube/ready.go serviceReady), which a GKE load balancer takes minutes to get, besides the admission webhook's certificate job.
INGRESS_RELEASE_TIMEOUT_SECONDS = 600


@dataclass(frozen=True)
class IngressControllerArgs:
    exposure: Exposure = "internal"
    source_ranges: tuple[str, ...] = ()
    node_selector: dict[str, str] | None = None


def controller_values(args: IngressControllerArgs) -> dict[str, Any]:
    service: dict[str, Any] = {
        "type": "LoadBalancer",
        "annotations": dict(
            INTERNAL_LB_ANNOTATION if args.exposure == "internal" else EXTERNAL_LB_ANNOTATION
        ),
    }
    if args.source_ranges:
        service["loadBalancerSourceRanges"] = list(args.source_ranges)
    controller: dict[str, Any] = {
        "allowSnippetAnnotations": False,
        "ingressClassResource": {"name": INGRESS_CLASS, "default": False},
        "service": service,
        "config": {"use-gzip": "true", "http-snippet": WEBSOCKET_SNIPPET},
    }
    if args.node_selector:
        controller["nodeSelector"] = {"kubernetes.io/os": "linux", **args.node_selector}
    return {"controller": controller}


class IngressController(pulumi.ComponentResource):
    """Namespace ``skypilot-ingress`` and the ``ingress-nginx`` release in it."""

    release: k8s.helm.v3.Release

    def __init__(
        self,
        name: str,
        args: IngressControllerArgs,
        depends_on: Sequence[pulumi.Resource] = (),
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("gpu-batch:skypilot:IngressController", name, None, opts)
        chart = locked("ingress-nginx")
        namespace = operator_namespace(f"{name}-namespace", INGRESS_NAMESPACE, self)
        self.release = operator_release(
            f"{name}-release",
            release_name="skypilot-ingress",
            chart=ChartRef(chart.name, chart.version, chart.source),
            namespace=namespace,
            values=controller_values(args),
            parent=self,
            depends_on=list(depends_on),
            timeout_seconds=INGRESS_RELEASE_TIMEOUT_SECONDS,
        )
        self.register_outputs({"namespace": INGRESS_NAMESPACE, "exposure": args.exposure})
