"""A real control plane on 127.0.0.1: etcd, kube-apiserver and, where asked, Kueue's manager.

:class:`ControlPlane` owns one etcd per pytest session; :meth:`ControlPlane.cluster` starts a
kube-apiserver with a fresh etcd prefix (a fresh, empty cluster in ~5 s) and returns a
:class:`Cluster`, whose API the live tests use:

- :meth:`Cluster.apply` -- server-side apply of objects (dicts), each answered with an
  :class:`Applied`: accepted, or the server's status code and message.  ``dry_run=True`` asks
  the server to run admission without storing; ``as_user``/``groups`` impersonate;
- :meth:`Cluster.client` -- an official ``kubernetes`` ``ApiClient`` (admin, or impersonating);
- :meth:`Cluster.get` / :meth:`Cluster.list` / :meth:`Cluster.delete` / :meth:`Cluster.request`;
- :meth:`Cluster.wait_for` -- poll a predicate until it returns something truthy;
- :meth:`Cluster.start_kueue` -- run Kueue's manager against the cluster with a given Kueue
  ``Configuration``, its webhooks on 127.0.0.1 (see :mod:`tests.live.kueue`).

Every process is started by us and stopped by us, by its own pid (SIGTERM, then SIGKILL after
10 s), when its owner stops -- the fixtures stop them also when a test fails.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import urllib3
import yaml
from kubernetes import client as k8s_client

from tests.live import toolchain
from tests.live.pki import PKI, KeyPair

T = TypeVar("T")

ADMIN_USER = "live-admin"
FIELD_MANAGER = "gpu-batch-live"
APISERVER_READY_TIMEOUT = 60.0
# set: the session folder (logs, PKI, configs) is kept, and its path printed, for a post-mortem
KEEP_ENV = "GPU_BATCH_LIVE_KEEP"


class LiveError(RuntimeError):
    """A control-plane process did not start or answer: the message says which and its log tail."""


_HANDED_OUT: set[int] = set()
_HANDED_OUT_LOCK = threading.Lock()


def free_port() -> int:
    """A port free now, never one this process handed out before: clusters are started from
    several threads at once (:func:`tests.live.stacks.deploy_clusters`), and a port released here
    is not bound by its process until that process starts, so two threads could otherwise be
    given the same one."""
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.bind(("127.0.0.1", 0))
            port = int(sock.getsockname()[1])
        with _HANDED_OUT_LOCK:
            if port not in _HANDED_OUT:
                _HANDED_OUT.add(port)
                return port


def _tail(path: Path, lines: int = 30) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


class Process:
    """A child process of ours with its output in ``log``; :meth:`stop` ends it by its pid."""

    def __init__(self, name: str, argv: list[str], log: Path, env: Mapping[str, str] | None = None) -> None:
        self.name = name
        self.log = log
        self._out = log.open("ab")
        self.popen = subprocess.Popen(
            argv,
            stdout=self._out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=dict(env) if env is not None else None,
            start_new_session=True,
        )
        self.pid = self.popen.pid

    def alive(self) -> bool:
        return self.popen.poll() is None

    def check(self) -> None:
        if not self.alive():
            raise LiveError(
                f"{self.name} (pid {self.pid}) exited {self.popen.returncode}:\n{_tail(self.log)}"
            )

    def stop(self, grace: float = 10.0) -> None:
        if self.alive():
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGTERM)
            try:
                self.popen.wait(grace)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(self.pid, signal.SIGKILL)
                self.popen.wait(grace)
        self._out.close()


def wait_until(predicate: Callable[[], T | None], timeout: float, what: str, interval: float = 0.2) -> T:
    """Poll ``predicate`` until it returns something truthy; raise TimeoutError naming ``what``."""
    deadline = time.monotonic() + timeout
    last_error: Exception | None = None
    while True:
        try:
            value = predicate()
            if value:
                return value
        except LiveError:
            raise
        except Exception as exc:  # the predicate's own failure is retried, and reported at the end
            last_error = exc
        if time.monotonic() >= deadline:
            detail = f" (last error: {last_error})" if last_error else ""
            raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what}{detail}")
        time.sleep(interval)


@dataclass(frozen=True)
class Applied:
    """The server's answer to one object's server-side apply."""

    ref: str  # kind/namespace/name
    accepted: bool
    status: int
    message: str  # the server's message when refused, "" when accepted
    object: dict[str, Any] | None = None  # what the server returned when accepted
    reason: str = ""

    def __str__(self) -> str:
        return f"{self.ref}: " + ("accepted" if self.accepted else f"refused ({self.status}): {self.message}")


@dataclass(frozen=True)
class Resource:
    group_version: str
    plural: str
    namespaced: bool


def ref_of(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    ns = meta.get("namespace")
    return f"{obj.get('kind')}/{ns + '/' if ns else ''}{meta.get('name')}"


class Etcd:
    def __init__(self, folder: Path) -> None:
        tool = toolchain.etcd()
        self.port = free_port()
        peer = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        # in memory where the machine has it: etcd fsyncs every write, and nothing here outlives the run
        shm = Path("/dev/shm")
        self.data = Path(tempfile.mkdtemp(prefix="gpu-batch-live-etcd-", dir=shm if shm.is_dir() else folder))
        data = self.data
        self.process = Process(
            "etcd",
            [
                str(tool.path),
                "--name=live",
                f"--data-dir={data}",
                f"--listen-client-urls={self.url}",
                f"--advertise-client-urls={self.url}",
                f"--listen-peer-urls=http://127.0.0.1:{peer}",
                f"--initial-advertise-peer-urls=http://127.0.0.1:{peer}",
                f"--initial-cluster=live=http://127.0.0.1:{peer}",
                "--quota-backend-bytes=4294967296",
                # Every API server here shares this etcd, so its revision moves with every
                # cluster's writes, and an API server's watch cache learns of a newer revision
                # only from an event under its own prefix or from etcd's progress notification
                # (10 min by default).  Kubernetes' own test of API servers whose etcd revision
                # moves under them runs etcd with a 1 s notification (kubernetes v1.37.2
                # test/integration/apiserver/watchcache_test.go multiEtcdSetup); GCE's clusters
                # use 5 s (cluster/gce/config-default.sh ETCD_PROGRESS_NOTIFY_INTERVAL).
                "--watch-progress-notify-interval=1s",
                "--log-level=warn",
            ],
            folder / "etcd.log",
        )
        http = urllib3.PoolManager()

        def healthy() -> bool:
            self.process.check()
            return http.request("GET", f"{self.url}/health", timeout=2, retries=False).status == 200

        try:
            wait_until(healthy, 30, "etcd /health")
        except BaseException:
            self.process.stop()
            raise

    def stop(self) -> None:
        self.process.stop()
        shutil.rmtree(self.data, ignore_errors=True)


class ControlPlane:
    """One etcd and a CA for the session; :meth:`cluster` starts an API server on a fresh prefix."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.pki = PKI(folder / "pki")
        self.serving = self.pki.issue(
            "serving", common_name="127.0.0.1", dns_names=("localhost",), ips=("127.0.0.1",), server=True
        )
        self.admin = self.pki.issue(
            "admin", common_name=ADMIN_USER, organizations=("system:masters",), client=True
        )
        self.proxy_client = self.pki.issue(
            "front-proxy-client", common_name="front-proxy-client", client=True
        )
        self.sa_key = self.pki.signing_key("service-accounts")
        self.clusters: list[Cluster] = []
        self._count = 0
        self._lock = threading.Lock()  # clusters may be started from several threads at once
        self.etcd = Etcd(folder)

    def client_certificate(self, user: str, groups: Iterable[str] = ()) -> KeyPair:
        """A client certificate of the session CA: the API server's x509 authenticator takes the
        user from its common name and the groups from its organizations (kubernetes v1.37.2
        ``staging/src/k8s.io/apiserver/pkg/authentication/request/x509/x509.go``
        ``CommonNameUserConversion``), as a GKE user's Google identity and Google Groups."""
        safe = "".join(c if c.isalnum() else "-" for c in user)
        return self.pki.issue(f"user-{safe}", common_name=user, organizations=tuple(groups), client=True)

    def cluster(self, name: str) -> Cluster:
        """A new kube-apiserver on its own etcd prefix: an empty cluster named ``name``."""
        safe = "".join(c if c.isalnum() or c == "-" else "-" for c in name)
        with self._lock:
            self._count += 1
            cluster = Cluster(self, f"{self._count:02d}-{safe}")
            self.clusters.append(cluster)
        try:
            cluster.wait_ready()
        except BaseException:
            cluster.stop()
            raise
        return cluster

    def stop(self) -> None:
        errors: list[str] = []
        for cluster in reversed(self.clusters):
            try:
                cluster.stop()
            except Exception as exc:  # stop the others regardless
                errors.append(f"{cluster.name}: {exc}")
        self.etcd.stop()
        if errors:
            raise LiveError("; ".join(errors))


class Cluster:
    """One kube-apiserver (and what was started against it) and the client API the tests use."""

    def __init__(self, plane: ControlPlane, name: str) -> None:
        self.plane = plane
        self.name = name
        self.folder = plane.folder / name
        self.folder.mkdir(parents=True)
        self.port = free_port()
        self.server = f"https://127.0.0.1:{self.port}"
        self.processes: list[Process] = []
        self._discovery: dict[str, dict[str, Resource]] = {}
        self._identities: dict[KeyPair, urllib3.PoolManager] = {}
        self._http = urllib3.PoolManager(
            cert_reqs=ssl.CERT_REQUIRED,
            ca_certs=str(plane.pki.ca.cert),
            cert_file=str(plane.admin.cert),
            key_file=str(plane.admin.key),
            maxsize=4,
        )
        tool = toolchain.kube_apiserver()
        started = time.monotonic()
        self.apiserver = self._start(
            "kube-apiserver",
            [
                str(tool.path),
                f"--etcd-servers={plane.etcd.url}",
                f"--etcd-prefix=/{name}",
                "--bind-address=127.0.0.1",
                "--advertise-address=127.0.0.1",
                # the `kubernetes` Service's endpoints would be 127.0.0.1, which the reconciler refuses
                "--endpoint-reconciler-type=none",
                f"--secure-port={self.port}",
                f"--tls-cert-file={plane.serving.cert}",
                f"--tls-private-key-file={plane.serving.key}",
                f"--client-ca-file={plane.pki.ca.cert}",
                "--authorization-mode=RBAC,Node",
                # the default plugins (NamespaceLifecycle, ServiceAccount, PodSecurity, Priority,
                # webhooks, ...) plus the admission policies, both on by default at 1.37: named so
                # that a minor which drops either fails here, not silently
                "--enable-admission-plugins=ValidatingAdmissionPolicy,MutatingAdmissionPolicy",
                f"--service-account-key-file={plane.sa_key.cert}",
                f"--service-account-signing-key-file={plane.sa_key.key}",
                "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
                "--api-audiences=https://kubernetes.default.svc.cluster.local",
                "--service-cluster-ip-range=10.96.0.0/16",
                "--allow-privileged=true",
                f"--requestheader-client-ca-file={plane.pki.ca.cert}",
                "--requestheader-allowed-names=front-proxy-client",
                "--requestheader-username-headers=X-Remote-User",
                "--requestheader-group-headers=X-Remote-Group",
                "--requestheader-extra-headers-prefix=X-Remote-Extra-",
                f"--proxy-client-cert-file={plane.proxy_client.cert}",
                f"--proxy-client-key-file={plane.proxy_client.key}",
                "--profiling=false",
                "--v=1",
            ],
        )

        self._started = started
        self.ready_seconds = 0.0
        self.kubeconfig = self.folder / "admin.kubeconfig"
        self.kubeconfig.write_text(yaml.safe_dump(self.kubeconfig_for(plane.admin)))

    def wait_ready(self) -> None:
        def ready() -> bool:
            self.apiserver.check()
            return self.request("GET", "/readyz", timeout=2, raw=True)[0] == 200

        wait_until(ready, APISERVER_READY_TIMEOUT, f"kube-apiserver {self.name} /readyz")
        self.ready_seconds = round(time.monotonic() - self._started, 1)

    # -- processes ---------------------------------------------------------------------------

    def _start(self, name: str, argv: list[str], env: Mapping[str, str] | None = None) -> Process:
        process = Process(name, argv, self.folder / f"{name}.log", env)
        self.processes.append(process)
        return process

    def start_process(self, name: str, argv: list[str], env: Mapping[str, str] | None = None) -> Process:
        """Start a process that belongs to this cluster: it is stopped (by pid) with the cluster."""
        return self._start(name, argv, env)

    def stop(self) -> None:
        for process in reversed(self.processes):
            process.stop()
        self._http.clear()
        for pool in self._identities.values():
            pool.clear()

    def _pool(self, identity: KeyPair | None) -> urllib3.PoolManager:
        """The admin's connections, or those of a client certificate of ``identity``."""
        if identity is None:
            return self._http
        if identity not in self._identities:
            self._identities[identity] = urllib3.PoolManager(
                cert_reqs=ssl.CERT_REQUIRED,
                ca_certs=str(self.plane.pki.ca.cert),
                cert_file=str(identity.cert),
                key_file=str(identity.key),
                maxsize=2,
            )
        return self._identities[identity]

    def kubeconfig_for(self, pair: KeyPair, user: str = "admin") -> dict[str, Any]:
        def b64(path: Path) -> str:
            return base64.b64encode(path.read_bytes()).decode()

        return {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {
                    "name": self.name,
                    "cluster": {
                        "server": self.server,
                        "certificate-authority-data": b64(self.plane.pki.ca.cert),
                    },
                }
            ],
            "users": [
                {
                    "name": user,
                    "user": {"client-certificate-data": b64(pair.cert), "client-key-data": b64(pair.key)},
                }
            ],
            "contexts": [{"name": "live", "context": {"cluster": self.name, "user": user}}],
            "current-context": "live",
        }

    # -- raw HTTP ----------------------------------------------------------------------------

    @staticmethod
    def _impersonation(as_user: str | None, groups: Iterable[str]) -> list[tuple[str, str]]:
        """Impersonation headers: one ``Impersonate-Group`` per group, as kubectl sends them."""
        group_list = list(groups)
        if as_user is None:
            if group_list:
                raise ValueError("groups without as_user: impersonating groups needs a user")
            return []
        return [("Impersonate-User", as_user)] + [("Impersonate-Group", g) for g in group_list]

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        query: Mapping[str, str] | None = None,
        content_type: str = "application/json",
        as_user: str | None = None,
        groups: Iterable[str] = (),
        timeout: float = 30,
        raw: bool = False,
        identity: KeyPair | None = None,
    ) -> tuple[int, Any]:
        """One HTTPS request as the admin (or impersonating), or signed in with the client
        certificate ``identity`` (:meth:`ControlPlane.client_certificate`); returns (status,
        decoded JSON body)."""
        url = self.server + path
        if query:
            url += "?" + urllib.parse.urlencode(query)
        headers = urllib3.HTTPHeaderDict()
        headers["Accept"] = "application/json"
        for key, value in self._impersonation(as_user, groups):
            headers.add(key, value)
        data = None
        if body is not None:
            headers["Content-Type"] = content_type
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
        response = self._pool(identity).request(
            method, url, body=data, headers=headers, timeout=timeout, retries=False
        )
        if raw:
            return response.status, response.data
        try:
            decoded = json.loads(response.data) if response.data else None
        except ValueError:
            decoded = response.data.decode(errors="replace")
        return response.status, decoded

    # -- discovery and paths ------------------------------------------------------------------

    def resource(self, api_version: str, kind: str, *, wait: float = 0.0) -> Resource:
        """The REST resource serving ``kind`` at ``api_version`` (discovery, refreshed on a miss;
        ``wait`` seconds for a CRD that was just created to be served)."""

        def lookup(refresh: bool) -> Resource | None:
            if refresh or api_version not in self._discovery:
                path = f"/api/{api_version}" if "/" not in api_version else f"/apis/{api_version}"
                status, body = self.request("GET", path)
                if status != 200:
                    self._discovery.pop(api_version, None)
                    return None
                self._discovery[api_version] = {
                    r["kind"]: Resource(api_version, r["name"], r["namespaced"])
                    for r in body.get("resources", [])
                    if "/" not in r["name"]
                }
            return self._discovery[api_version].get(kind)

        found = lookup(refresh=False) or lookup(refresh=True)
        if found is None and wait > 0:
            found = wait_until(lambda: lookup(refresh=True), wait, f"{kind} at {api_version} to be served")
        if found is None:
            raise LookupError(f"the server serves no {kind} at {api_version}")
        return found

    def path(self, api_version: str, kind: str, name: str | None = None, namespace: str | None = None) -> str:
        res = self.resource(api_version, kind)
        base = f"/api/{api_version}" if "/" not in api_version else f"/apis/{api_version}"
        if res.namespaced:
            if not namespace:
                raise ValueError(f"{kind} is namespaced: give a namespace")
            base += f"/namespaces/{namespace}"
        base += f"/{res.plural}"
        return base + (f"/{name}" if name else "")

    # -- the API the tests use ------------------------------------------------------------------

    def apply(
        self,
        objects: Iterable[Mapping[str, Any]],
        *,
        dry_run: bool = False,
        as_user: str | None = None,
        groups: Iterable[str] = (),
        field_manager: str = FIELD_MANAGER,
        force: bool = True,
        wait_for_kind: float = 30.0,
        identity: KeyPair | None = None,
    ) -> list[Applied]:
        """Server-side apply each object in order; one :class:`Applied` per object, never raising
        for a refusal (a kind the server does not serve is a refusal with status 0).  ``identity``:
        sent with that client certificate instead of the admin's."""
        results: list[Applied] = []
        group_list = tuple(groups)
        for obj in objects:
            ref = ref_of(obj)
            meta = obj.get("metadata") or {}
            try:
                path = self._apply_path(obj, wait_for_kind)
            except (LookupError, TimeoutError, ValueError) as exc:
                results.append(Applied(ref, False, 0, str(exc), reason="NoKind"))
                continue
            query = {"fieldManager": field_manager, "force": "true" if force else "false"}
            if dry_run:
                query["dryRun"] = "All"
            status, body = self.request(
                "PATCH",
                path + f"/{meta.get('name')}",
                dict(obj),
                query=query,
                content_type="application/apply-patch+yaml",
                as_user=as_user,
                groups=group_list,
                identity=identity,
            )
            if 200 <= status < 300:
                results.append(Applied(ref, True, status, "", body if isinstance(body, dict) else None))
            else:
                message = body.get("message", "") if isinstance(body, dict) else str(body)
                reason = body.get("reason", "") if isinstance(body, dict) else ""
                results.append(Applied(ref, False, status, message, reason=reason))
        return results

    def _apply_path(self, obj: Mapping[str, Any], wait: float) -> str:
        api_version, kind = obj.get("apiVersion"), obj.get("kind")
        if not isinstance(api_version, str) or not isinstance(kind, str):
            raise ValueError("an object needs apiVersion and kind")
        meta = obj.get("metadata") or {}
        res = self.resource(api_version, kind, wait=wait)
        return self.path(api_version, kind, namespace=meta.get("namespace") if res.namespaced else None)

    def get(
        self,
        api_version: str,
        kind: str,
        name: str,
        namespace: str | None = None,
        *,
        as_user: str | None = None,
        groups: Iterable[str] = (),
    ) -> dict[str, Any] | None:
        """The object, or None when the server says 404."""
        status, body = self.request(
            "GET", self.path(api_version, kind, name, namespace), as_user=as_user, groups=groups
        )
        if status == 404:
            return None
        if status != 200:
            raise LiveError(f"GET {kind} {namespace or ''}/{name}: {status} {body}")
        assert isinstance(body, dict)
        return body

    def list(
        self,
        api_version: str,
        kind: str,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        as_user: str | None = None,
        groups: Iterable[str] = (),
    ) -> list[dict[str, Any]]:
        res = self.resource(api_version, kind)
        path = self.path(api_version, kind, namespace=namespace) if namespace or not res.namespaced else None
        if path is None:  # all namespaces
            base = f"/api/{api_version}" if "/" not in api_version else f"/apis/{api_version}"
            path = f"{base}/{res.plural}"
        query = {"labelSelector": label_selector} if label_selector else None
        status, body = self.request("GET", path, query=query, as_user=as_user, groups=groups)
        if status != 200:
            raise LiveError(f"LIST {kind}: {status} {body}")
        return list(body.get("items", []))

    def delete(
        self,
        api_version: str,
        kind: str,
        name: str,
        namespace: str | None = None,
        *,
        propagation: str = "Background",
        drop_finalizers: bool = False,
    ) -> int:
        """Delete (background propagation: there is no garbage collector to wait on); with
        ``drop_finalizers`` the object's finalizers are removed first, so it goes at once.
        Returns the HTTP status (404 when it was already gone)."""
        path = self.path(api_version, kind, name, namespace)
        if drop_finalizers:
            self.request(
                "PATCH",
                path,
                {"metadata": {"finalizers": None}},
                content_type="application/merge-patch+json",
            )
        status, body = self.request("DELETE", path, {"propagationPolicy": propagation})
        if status not in (200, 202, 404):
            raise LiveError(f"DELETE {kind} {namespace or ''}/{name}: {status} {body}")
        return status

    def client(self, as_user: str | None = None, groups: Iterable[str] = ()) -> k8s_client.ApiClient:
        """The official client, as the admin or impersonating ``as_user`` with ``groups``.

        (The generated client sends one header per key, so the groups go as one comma-joined
        ``Impersonate-Group``: use a list of one group, or :meth:`request`/:meth:`apply`, which
        send one header per group, when a group name itself has a comma.)"""
        config = k8s_client.Configuration()
        config.host = self.server
        config.ssl_ca_cert = str(self.plane.pki.ca.cert)
        config.cert_file = str(self.plane.admin.cert)
        config.key_file = str(self.plane.admin.key)
        api = k8s_client.ApiClient(config)
        group_list = list(groups)
        if as_user is not None:
            api.default_headers["Impersonate-User"] = as_user
            if group_list:
                api.default_headers["Impersonate-Group"] = ",".join(group_list)
        elif group_list:
            raise ValueError("groups without as_user: impersonating groups needs a user")
        return api

    def wait_for(
        self,
        predicate: Callable[[], T | None],
        timeout: float = 30.0,
        what: str = "the condition",
        interval: float = 0.25,
    ) -> T:
        """Poll ``predicate`` (while checking that every process of ours still runs) until it
        returns something truthy, which is returned; TimeoutError names ``what``."""

        def checked() -> T | None:
            for process in self.processes:
                process.check()
            return predicate()

        return wait_until(checked, timeout, what, interval)


@contextlib.contextmanager
def control_plane(folder: Path | None = None) -> Iterator[ControlPlane]:
    """An etcd + CA for the duration of the block; every process is stopped on the way out."""
    owned = folder is None
    base = Path(tempfile.mkdtemp(prefix="gpu-batch-live-")) if folder is None else folder
    plane: ControlPlane | None = None
    try:
        plane = ControlPlane(base)
        yield plane
    finally:
        if plane is not None:
            plane.stop()
        if owned and not os.environ.get(KEEP_ENV):
            shutil.rmtree(base, ignore_errors=True)
