"""Kueue's manager as a local process against a live :class:`~tests.live.cluster.Cluster`.

In a real cluster the chart's Deployment runs ``/manager --config=<the chart's ConfigMap>`` and
the chart's webhook configurations (and the CRDs' conversion webhooks) reach it through the
Service ``kueue-webhook-service``.  Here:

- the manager is the binary built by :func:`tests.live.toolchain.kueue` at the chart's version;
- its configuration is the stack's own (the chart's ``kueue-manager-config`` ConfigMap as the
  stack renders it), with only what a local process needs changed (:func:`local_config`): every
  listener on 127.0.0.1 at a free port, leader election off, and internal certificate management
  off (its certificates name the Service's DNS name; ours name 127.0.0.1 and are signed by the
  session's CA);
- the webhook configurations and conversion webhooks that name Kueue's webhook Service are
  pointed at ``https://127.0.0.1:<port>`` with the CA bundle (:func:`point_webhooks`);
- with internal certificate management off, Kueue v0.19.2 reads two hard-coded paths:
  ``/etc/kueue/metrics/certs/tls.{crt,key}`` (the metrics server) and ``/visibility/tls.{crt,key}``
  (the VisibilityOnDemand API server, on by default).  The manager runs in a private mount
  namespace (``unshare -m``, root only) whose root is an overlay of the host's with those two
  folders bound in: the host's ``/etc`` and ``/`` are never written.
"""

from __future__ import annotations

import base64
import copy
import shlex
import shutil
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import urllib3
import yaml

from tests.live import toolchain
from tests.live.cluster import Cluster, LiveError, Process, free_port, wait_until

KUEUE_READY_TIMEOUT = 90.0
WEBHOOK_KINDS = ("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration")


def chart_config(objects: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The Kueue ``Configuration`` in the release's ``kueue-manager-config`` ConfigMap."""
    for obj in objects:
        if (
            obj.get("kind") == "ConfigMap"
            and (obj.get("metadata") or {}).get("name") == "kueue-manager-config"
        ):
            text = (obj.get("data") or {}).get("controller_manager_config.yaml")
            if isinstance(text, str):
                loaded = yaml.safe_load(text)
                assert isinstance(loaded, dict)
                return loaded
    raise LookupError(
        "no kueue-manager-config ConfigMap with controller_manager_config.yaml among the objects"
    )


@dataclass(frozen=True)
class Ports:
    webhook: int
    metrics: int
    health: int
    visibility: int


def local_config(config: Mapping[str, Any], ports: Ports, cert_dir: Path) -> dict[str, Any]:
    """``config`` as a local process runs it: listeners on 127.0.0.1, our certificates, no
    leader election.  Everything else (integrations, queueing, fair sharing, MultiKueue, feature
    gates, ...) is the stack's own."""
    out = copy.deepcopy(dict(config))
    out["internalCertManagement"] = {"enable": False}
    out["webhook"] = {
        **(out.get("webhook") or {}),
        "host": "127.0.0.1",
        "port": ports.webhook,
        "certDir": str(cert_dir),
    }
    out["metrics"] = {**(out.get("metrics") or {}), "bindAddress": f"127.0.0.1:{ports.metrics}"}
    out["health"] = {**(out.get("health") or {}), "healthProbeBindAddress": f"127.0.0.1:{ports.health}"}
    out["leaderElection"] = {**(out.get("leaderElection") or {}), "leaderElect": False}
    out["visibilityServer"] = {"bindAddress": "127.0.0.1", "bindPort": ports.visibility}
    out["pprofBindAddress"] = "0"
    return out


def webhook_services(objects: Iterable[Mapping[str, Any]]) -> set[tuple[str, str]]:
    """(namespace, name) of the release's Services in front of the manager's webhook port."""
    out: set[tuple[str, str]] = set()
    for obj in objects:
        if obj.get("kind") != "Service":
            continue
        meta = obj.get("metadata") or {}
        for port in (obj.get("spec") or {}).get("ports") or []:
            if port.get("targetPort") in ("webhook-server", 9443):
                out.add((str(meta.get("namespace")), str(meta.get("name"))))
    return out


def point_webhooks(
    objects: Iterable[Mapping[str, Any]], services: set[tuple[str, str]], port: int, ca_pem: bytes
) -> tuple[list[dict[str, Any]], int]:
    """Copies of ``objects`` whose webhook client configs naming one of ``services`` (admission
    webhooks and CRD conversion webhooks alike) name ``https://127.0.0.1:<port><path>`` with the
    CA bundle instead; returns them and how many client configs were changed."""
    bundle = base64.b64encode(ca_pem).decode()
    changed = 0

    def repoint(client_config: dict[str, Any], default_path: str) -> dict[str, Any]:
        nonlocal changed
        service = client_config.get("service") or {}
        if (str(service.get("namespace")), str(service.get("name"))) not in services:
            return client_config
        changed += 1
        path = service.get("path") or default_path
        return {"url": f"https://127.0.0.1:{port}{path}", "caBundle": bundle}

    out: list[dict[str, Any]] = []
    for original in objects:
        obj = copy.deepcopy(dict(original))
        if obj.get("kind") in WEBHOOK_KINDS:
            for hook in obj.get("webhooks") or []:
                hook["clientConfig"] = repoint(hook.get("clientConfig") or {}, "/")
        elif obj.get("kind") == "CustomResourceDefinition":
            conversion = (obj.get("spec") or {}).get("conversion") or {}
            webhook = conversion.get("webhook") or {}
            if conversion.get("strategy") == "Webhook" and webhook.get("clientConfig"):
                webhook["clientConfig"] = repoint(webhook["clientConfig"], "/convert")
        out.append(obj)
    return out, changed


def _mount_points() -> list[str]:
    """This process's mount points (the child's mount namespace starts as a copy), in mount order."""
    points: list[str] = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        fields = line.split()
        point = fields[4].encode().decode("unicode_escape")  # \040 and friends
        if point != "/":
            points.append(point)
    return points


def _namespace_script(base: Path, certs: Path, argv: list[str]) -> str:
    """sh for ``unshare -m``: an overlay of / with Kueue's two hard-coded folders in it, every
    mount of the host bound at its place, then ``exec chroot`` into it."""
    q = shlex.quote
    root = base / "root"
    lines = [
        "set -eu",
        f"mount -t tmpfs -o mode=0700 live-kueue {q(str(base))}",
        f"mkdir {q(str(base / 'up'))} {q(str(base / 'work'))} {q(str(root))}",
        f"mount -t overlay overlay -o lowerdir=/,upperdir={q(str(base / 'up'))},workdir={q(str(base / 'work'))} {q(str(root))}",
    ]
    for point in _mount_points():
        if point == str(base) or point.startswith(str(base) + "/"):
            continue
        target = q(str(root) + point)
        lines.append(f"if [ -e {target} ]; then mount --bind {q(point)} {target} || :; fi")
    lines += [
        f"mkdir -p {q(str(root / 'visibility'))} {q(str(root / 'etc/kueue/metrics/certs'))}",
        f"mount --bind {q(str(certs))} {q(str(root / 'visibility'))}",
        f"mount --bind {q(str(certs))} {q(str(root / 'etc/kueue/metrics/certs'))}",
        f"exec chroot {q(str(root))} {' '.join(q(a) for a in argv)}",
    ]
    return "\n".join(lines) + "\n"


class KueueManager:
    """Kueue's manager started against ``cluster`` with ``config`` (a Kueue ``Configuration``)."""

    def __init__(self, cluster: Cluster, config: Mapping[str, Any], *, log_level: int = 2) -> None:
        """Prepared, not started: ports, certificates and configuration are fixed here, so the
        webhook configurations can name the port before the manager runs (:meth:`start`)."""
        if shutil.which("unshare") is None or shutil.which("chroot") is None:
            raise LiveError(
                "Kueue's manager runs in a private mount namespace: `unshare` and `chroot` are needed"
            )
        tool = toolchain.kueue()
        self.cluster = cluster
        self.folder = cluster.folder / "kueue"
        self.folder.mkdir()
        certs = self.folder / "certs"
        certs.mkdir()
        pair = cluster.plane.pki.issue(
            f"kueue-{cluster.name}",
            common_name="127.0.0.1",
            dns_names=("localhost",),
            ips=("127.0.0.1",),
            server=True,
        )
        shutil.copyfile(pair.cert, certs / "tls.crt")
        shutil.copyfile(pair.key, certs / "tls.key")
        (certs / "tls.key").chmod(0o600)
        self.ports = Ports(free_port(), free_port(), free_port(), free_port())
        self.config = local_config(config, self.ports, certs)
        config_file = self.folder / "config.yaml"
        config_file.write_text(yaml.safe_dump(self.config))
        argv = [
            str(tool.path),
            f"--config={config_file}",
            f"--kubeconfig={cluster.kubeconfig}",
            f"--zap-log-level={log_level}",
        ]
        self.script = self.folder / "mount-namespace.sh"
        self.script.write_text(_namespace_script(self.folder / "ns", certs, argv))
        (self.folder / "ns").mkdir()
        self.process: Process | None = None

    @property
    def webhook_port(self) -> int:
        return self.ports.webhook

    def point_webhooks(
        self, objects: Iterable[Mapping[str, Any]], services: set[tuple[str, str]]
    ) -> list[dict[str, Any]]:
        """``objects`` with the webhooks naming ``services`` pointed at this manager."""
        return point_webhooks(objects, services, self.ports.webhook, self.cluster.plane.pki.ca_pem)[0]

    def start(self) -> KueueManager:
        """Start the manager (stopped, by its pid, with its cluster)."""
        if self.process is None:
            self.process = self.cluster.start_process(
                "kueue", ["unshare", "-m", "--propagation", "private", "sh", str(self.script)]
            )
        return self

    def wait_ready(self, timeout: float = KUEUE_READY_TIMEOUT) -> None:
        """Until the manager's /readyz answers 200 (its webhook server is serving)."""
        http = urllib3.PoolManager()
        url = f"http://127.0.0.1:{self.ports.health}/readyz"

        process = self.process
        if process is None:
            raise LiveError("Kueue's manager was not started")

        def ready() -> bool:
            process.check()
            return http.request("GET", url, timeout=2, retries=False).status == 200

        wait_until(ready, timeout, f"Kueue's manager /readyz on {self.cluster.name}")
