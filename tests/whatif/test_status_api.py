"""``python -m whatif.status --kubeconfig``: the live path, through the pinned ``kubernetes`` client.

An HTTP server on 127.0.0.1 (started and stopped by the test) answers the Kubernetes API paths
from a recorded fixture as an API server with the RBAC authorizer would for a member of
``research`` holding the prod stack's team Role: 403 for what the Role does not allow, an empty
list for a kind with no objects, 404 for a pending-workloads summary it does not have.  The
command, pointed at it by a kubeconfig (bearer token, context namespace ``research``), must ask
only for paths the Role allows or report them as not visible, and must answer exactly what the
same reads of the dump answer.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.whatif.test_status import NOW, dump, prod_run, team_role  # noqa: F401  (fixtures)
from whatif.status import cli
from whatif.status.collect import collect
from whatif.status.objects import timestamp
from whatif.status.reads import DumpReader, NotVisibleError, RbacReader, Read
from whatif.status.render import to_json
from whatif.status.report import build

TOKEN = "research-member-token"
KINDS = {
    "clusterqueues": "ClusterQueue",
    "cohorts": "Cohort",
    "resourceflavors": "ResourceFlavor",
    "admissionchecks": "AdmissionCheck",
    "provisioningrequestconfigs": "ProvisioningRequestConfig",
    "localqueues": "LocalQueue",
    "workloads": "Workload",
    "provisioningrequests": "ProvisioningRequest",
    "podgroups": "PodGroup",
    "queues": "Queue",
}


def read_of(path: str) -> Read:
    """A request path as the API server's RequestInfo resolves it."""
    parts = path.strip("/").split("/")
    assert parts[0] == "apis", path
    group, version, rest = parts[1], parts[2], parts[3:]
    namespace = None
    if rest[0] == "namespaces":
        namespace, rest = rest[1], rest[2:]
    resource = rest[0]
    name = rest[1] if len(rest) > 1 else None
    sub = rest[2] if len(rest) > 2 else None
    kind = "PendingWorkloadsSummary" if sub == "pendingworkloads" else KINDS[resource]
    return Read("get" if name else "list", group, version, resource, kind, namespace, name, sub)


class FakeApiServer:
    def __init__(self, rbac: RbacReader, inner: DumpReader) -> None:
        self.paths: list[str] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_: Any) -> None:
                pass

            def _send(self, status: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                outer.paths.append(self.path)
                if self.headers.get("Authorization") != f"Bearer {TOKEN}":
                    self._send(401, {"kind": "Status", "code": 401})
                    return
                read = read_of(self.path.split("?")[0])
                if not rbac.allowed(read):
                    self._send(403, {"kind": "Status", "code": 403, "reason": "Forbidden"})
                    return
                try:
                    body = inner.get(read) if read.verb == "get" else {"items": inner.list(read)}
                except NotVisibleError:
                    if read.verb == "get":
                        self._send(404, {"kind": "Status", "code": 404})
                        return
                    body = {"items": []}
                self._send(
                    200, {"kind": f"{read.kind}List", "apiVersion": f"{read.group}/{read.version}", **body}
                )

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}"


@pytest.fixture
def api(team_role: dict[str, Any]) -> Iterator[FakeApiServer]:  # noqa: F811
    objects = dump("quota")
    server = FakeApiServer(
        RbacReader(DumpReader(objects), team_role["rules"], "research"), DumpReader(objects)
    )
    server.thread.start()
    try:
        yield server
    finally:
        server.server.shutdown()
        server.server.server_close()
        server.thread.join(timeout=10)


def kubeconfig(tmp_path: Path, server: str) -> Path:
    path = tmp_path / "kubeconfig"
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "gke", "cluster": {"server": server}}],
                "users": [{"name": "research-member", "user": {"token": TOKEN}}],
                "contexts": [
                    {
                        "name": "research",
                        "context": {"cluster": "gke", "user": "research-member", "namespace": "research"},
                    }
                ],
                "current-context": "research",
            }
        )
    )
    return path


def test_live_path_asks_what_the_role_allows_and_answers_as_the_dump(
    api: FakeApiServer,
    team_role: dict[str, Any],  # noqa: F811
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert cli.main(["--kubeconfig", str(kubeconfig(tmp_path, api.url)), "--now", NOW, "--json"]) == 0
    live = json.loads(capsys.readouterr().out)
    assert live["namespaces"] == ["research"]  # the context's namespace
    rbac = RbacReader(DumpReader(dump("quota")), team_role["rules"], "research")
    denied = []
    for path in api.paths:
        read = read_of(path.split("?")[0])
        if not rbac.allowed(read):
            denied.append(read)
    assert (
        "/apis/visibility.kueue.x-k8s.io/v1beta2/namespaces/research/localqueues/l4/pendingworkloads"
        in api.paths
    )
    assert "/apis/kueue.x-k8s.io/v1beta2/namespaces/research/workloads" in api.paths
    for read in denied:
        assert read.kind in ("PodGroup", "Queue") or any(
            k.startswith(read.kind) for k in live["notVisible"]
        ), read
    now = timestamp(NOW)
    assert now is not None
    offline = to_json(build(collect(rbac, ["research"]), now))
    assert live["pending"] == offline["pending"]
    assert [p["kueue"]["message"] for p in live["pending"]] == [
        "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor l4, 4 more needed",
        "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor l4, 8 more needed",
    ]


def test_a_cluster_that_cannot_be_reached_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    assert cli.main(["--kubeconfig", str(kubeconfig(tmp_path, f"http://127.0.0.1:{port}")), "--json"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot reach" in err
