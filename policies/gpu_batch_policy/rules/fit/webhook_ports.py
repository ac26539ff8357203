"""webhook-ports-open-from-control-plane: a private control plane can reach every webhook.

The API server calls an admission webhook (``Validating``/``MutatingWebhookConfiguration``
``webhooks[].clientConfig.service``, port default 443) through the Service, i.e. on the pod's
*target* port on the node (Service ``ports[].targetPort``, a number or the name of a container
port).  With private nodes GKE's own firewall rule opens only TCP 443 and 10250 from the control
plane's ``masterIpv4CidrBlock`` (GKE doc "Create a private cluster" → "Adding firewall rules for
specific use cases"); any other port needs a ``gcp:compute/firewall:Firewall``, or every call
times out and a fail-closed webhook (``failurePolicy: Fail``) blocks the objects it guards.
Kueue 0.19.2 serves its webhooks on 9443 (chart ``templates/webhook/manifests.yaml``, the
``templates/webhook/service.yaml`` targetPort and ``templates/manager/manager.yaml`` containerPort); KAI's operator creates its admission webhook from the
rendered ``Config`` with ``spec.admission.webhook.targetPort`` 9443 (``kai_config.py``).
Aggregated APIs (``apiregistration.k8s.io`` ``APIService`` ``spec.service``, e.g. Kueue's
visibility server on 8082) are called the same way and are checked too.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from pulumi_policy import Policy

from ...facts.fit import kai_config
from ...facts.fit.network import PrivateCluster, port_open, private_clusters
from ...facts.model import KubeObject, StackModel
from ...facts.open_world import World, world_schema
from ...facts.pod_templates import OwnedTemplate, owned_templates
from ...primitives.values import Unknown, as_int, as_str, dig, str_map
from ..kit.builders import stack_policy
from ..kit.report import Reporter

WEBHOOK_GROUP = "admissionregistration.k8s.io"
WEBHOOK_KINDS = ("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration")
Target = tuple[KubeObject, str, int | Unknown | None]  # (object, which endpoint, port on the node)


def _items(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def _templates_by_namespace(model: StackModel) -> dict[str | None, list[OwnedTemplate]]:
    """Controllers' pod templates per namespace, built once per model (keeps the rule linear)."""

    def build() -> dict[str | None, list[OwnedTemplate]]:
        out: dict[str | None, list[OwnedTemplate]] = {}
        for owned in owned_templates(model):
            if isinstance(owned.owner, KubeObject):
                out.setdefault(owned.owner.namespace, []).append(owned)
        return out

    return model.memo("fit.templates_by_namespace", build)


def _container_port(model: StackModel, service: KubeObject, name: str) -> int | Unknown | None:
    selector = str_map(dig(service.props, "spec", "selector"))
    for owned in _templates_by_namespace(model).get(service.namespace, []):
        labels = owned.template.labels
        if not selector or any(labels.get(k) != v for k, v in selector.items()):
            continue
        for container in _items(dig(owned.template.raw, "spec", "containers")):
            for port in _items(dig(container, "ports")):
                if dig(port, "name") == name:
                    return as_int(dig(port, "containerPort"))
    return None


def service_target_port(
    model: StackModel, namespace: str | Unknown | None, name: object, port: object
) -> int | Unknown | None:
    """The port on the node behind ``Service namespace/name:port``; None when not resolvable."""
    if isinstance(name, Unknown) or isinstance(namespace, Unknown):
        return Unknown("service")
    port_number = as_int(port) if port is not None else 443
    found = model.lookup("", "Service", as_str(name), namespace or "default")
    if found.status == "unknown" or isinstance(port_number, Unknown):
        return Unknown("service")
    if not found.ok:
        return None
    service = found.found[0]
    for entry in _items(dig(service.props, "spec", "ports")):
        if as_int(dig(entry, "port")) != port_number:
            continue
        target = dig(entry, "targetPort")
        if target is None:
            return port_number
        if isinstance(target, str) and not target.isdigit():
            return _container_port(model, service, target)
        return as_int(target)
    return None


def webhook_targets(model: StackModel) -> Iterator[Target]:
    """Every endpoint the API server calls on the nodes, with its port."""
    for kind in WEBHOOK_KINDS:
        for obj in model.kube_objects(WEBHOOK_GROUP, kind):
            seen: set[object] = set()
            for hook in _items(dig(obj.props, "webhooks")):
                service = dig(hook, "clientConfig", "service")
                if not isinstance(service, dict):
                    continue
                port = service_target_port(
                    model, as_str(service.get("namespace")), service.get("name"), service.get("port")
                )
                if port not in seen:
                    seen.add(port)
                    yield obj, f"webhook '{dig(hook, 'name')}'", port
    for obj in model.kube_objects("apiregistration.k8s.io", "APIService"):
        service = dig(obj.props, "spec", "service")
        if isinstance(service, dict):
            port = service_target_port(
                model, as_str(service.get("namespace")), service.get("name"), service.get("port")
            )
            yield obj, "aggregated API", port
    for config in kai_config.kai_configs(model):
        yield (
            config,
            "admission webhook the KAI operator creates",
            kai_config.webhook_target_port(config) or 9443,
        )


def _check_cluster(model: StackModel, target: PrivateCluster, reporter: Reporter) -> None:
    for obj, what, port in webhook_targets(model):
        if isinstance(port, Unknown):
            reporter.cannot_check(obj, f"target port of its {what} unknown until apply")
            continue
        if port is None:
            continue  # Service not in the stack or port not declared: the API rules report it
        opened = port_open(model, target, port)
        if opened is None:
            reporter.cannot_check(obj, f"whether a firewall opens tcp:{port} from the control plane")
        elif not opened:
            reporter.violation(
                obj,
                f"its {what} listens on tcp:{port} on the nodes, but {target.cluster.describe()} has private "
                f"nodes and GKE opens only 443 and 10250 from the control plane ({target.master_cidr}), "
                "so the API server's calls to it time out",
                f"add a gcp.compute.Firewall on network {target.network}: direction INGRESS, sourceRanges "
                f'["{target.master_cidr}"], allows [{{protocol: "tcp", ports: ["{port}"]}}]',
            )


def check_webhook_ports(model: StackModel, reporter: Reporter, config: Mapping[str, Any]) -> None:
    if World.from_config(config).has_kind("Firewall"):
        return  # a firewall rule the network's owners run (Shared VPC, organisation-managed networks)
    clusters, undecided = private_clusters(model)
    for cluster in undecided:
        reporter.cannot_check(cluster, "privateClusterConfig.enablePrivateNodes unknown until apply")
    for target in clusters:
        if not isinstance(target.master_cidr, str):
            reporter.cannot_check(target.cluster, "privateClusterConfig.masterIpv4CidrBlock not known")
            continue
        _check_cluster(model, target, reporter)


POLICIES: list[Policy] = [
    stack_policy(
        "webhook-ports-open-from-control-plane",
        "With private nodes, every admission webhook's (and aggregated API's) target port on the "
        "nodes other than 443/10250 is opened from the control-plane CIDR by a firewall rule.",
        check_webhook_ports,
        config_schema=world_schema(closed_world=False),
    ),
]
