"""The readiness gates' providers work from the stack's state alone, in a fresh process.

Pulumi stores a dynamic provider as a dill pickle and runs every later update and delete by
unpickling it in a new ``python -m pulumi.dynamic`` process (pulumi ``dynamic/__main__.py``
``get_provider``: ``dill.loads``).  These tests do the same: serialise each provider with the SDK's
own ``serialize_provider``, unpickle it in an isolated interpreter (``python -I``) whose working
directory is outside the checkout, so no project module can be imported, and run its ``create``
and ``update`` against a stand-in Kubernetes API server that answers the way a cluster does
while an operator is still starting.  A provider pickled by module reference fails to load there
(the last test proves the harness would notice).
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from pulumi import dynamic
from pulumi.dynamic.dynamic import serialize_provider

from components.readiness_gate import _WebhookReadinessProvider, must_wait_again
from components.runtime_class_gate import _RuntimeClassProvider

PROJECT_PACKAGES = ("components", "stacks", "policies", "preview", "whatif", "tests")

# Runs in the isolated interpreter: what pulumi.dynamic.__main__.get_provider does, then one call.
RUNNER = """
import base64, json, sys
import dill
request = json.load(sys.stdin)
PROJECT_PACKAGES = tuple(request["projectPackages"])
provider = dill.loads(base64.b64decode(request["provider"]))
if request["op"] == "create":
    result = {"id": provider.create(request["news"]).id}
else:
    result = {"outs": sorted(provider.update("id", request["olds"], request["news"]).outs)}
result["projectModules"] = sorted(
    m for m in sys.modules if m.split(".")[0] in PROJECT_PACKAGES
)
print(json.dumps(result))
"""

WEBHOOKS_PATH = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"
QUEUE_DRY_RUN = "/apis/kueue.x-k8s.io/v1beta2/clusterqueues"
RUNTIME_CLASS = "/apis/node.k8s.io/v1/runtimeclasses/nvidia"


class StartingCluster:
    """An API server during an operator's start: no webhook, then one that refuses, then served;
    the RuntimeClass is missing until the third look."""

    def __init__(self) -> None:
        self.requests: list[str] = []

    def count(self, path: str) -> int:
        return sum(1 for r in self.requests if r.split("?")[0].endswith(path))

    def answer(self, method: str, path: str) -> tuple[int, dict[str, Any]]:
        self.requests.append(f"{method} {path}")
        bare = path.split("?", maxsplit=1)[0]
        if method == "GET" and bare == WEBHOOKS_PATH:
            registered = self.count(WEBHOOKS_PATH) > 1
            return 200, _webhook_list(registered)
        if method == "POST" and bare == QUEUE_DRY_RUN:
            if "dryRun=All" not in path:
                return 400, _status(400, "the gate must only dry-run")
            if self.count(QUEUE_DRY_RUN) == 1:
                return 500, _status(
                    500,
                    'Internal error occurred: failed calling webhook "vclusterqueue.kb.io": '
                    "connect: connection refused",
                )
            return 201, {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {}}
        if method == "GET" and bare == RUNTIME_CLASS:
            if self.count(RUNTIME_CLASS) < 3:
                return 404, _status(404, 'runtimeclasses.node.k8s.io "nvidia" not found')
            return 200, {
                "apiVersion": "node.k8s.io/v1",
                "kind": "RuntimeClass",
                "metadata": {"name": "nvidia"},
                "handler": "nvidia",
            }
        return 404, _status(404, f"unexpected {method} {path}")


def _status(code: int, message: str) -> dict[str, Any]:
    return {"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": message, "code": code}


def _webhook_list(registered: bool) -> dict[str, Any]:
    webhook = {
        "name": "vclusterqueue.kb.io",
        "admissionReviewVersions": ["v1"],
        "sideEffects": "None",
        "clientConfig": {"service": {"name": "kueue-webhook-service", "namespace": "kueue-system"}},
        "rules": [
            {
                "apiGroups": ["kueue.x-k8s.io"],
                "apiVersions": ["v1beta2"],
                "operations": ["CREATE", "UPDATE"],
                "resources": ["clusterqueues"],
            }
        ],
    }
    items = (
        [{"metadata": {"name": "kueue-validating-webhook-configuration"}, "webhooks": [webhook]}]
        if registered
        else []
    )
    return {
        "kind": "ValidatingWebhookConfigurationList",
        "apiVersion": "admissionregistration.k8s.io/v1",
        "metadata": {},
        "items": items,
    }


@pytest.fixture()
def cluster() -> Iterator[tuple[StartingCluster, str]]:
    state = StartingCluster()

    class Handler(BaseHTTPRequestHandler):
        def _reply(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                self.rfile.read(length)
            code, body = state.answer(self.command, self.path)
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = _reply  # noqa: N815 (http.server's handler names)

        def log_message(self, *_: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def kubeconfig(server: str) -> str:
    return json.dumps(
        {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "c", "cluster": {"server": server}}],
            "users": [{"name": "u", "user": {"token": "test-token"}}],
            "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
            "current-context": "c",
        }
    )


def run_isolated(
    provider: dynamic.ResourceProvider,
    tmp_path: Path,
    op: str,
    news: dict[str, Any],
    olds: dict[str, Any] | None = None,
) -> dict[str, Any]:
    request = {
        "provider": serialize_provider(provider),
        "op": op,
        "news": news,
        "olds": olds or {},
        "projectPackages": PROJECT_PACKAGES,
    }
    done = subprocess.run(
        [sys.executable, "-I", "-c", RUNNER],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def gate_props(server: str, installed: str) -> dict[str, Any]:
    return {
        "kubeconfig": kubeconfig(server),
        "probes": [
            {
                "group": "kueue.x-k8s.io",
                "version": "v1beta2",
                "plural": "clusterqueues",
                "body": {
                    "apiVersion": "kueue.x-k8s.io/v1beta2",
                    "kind": "ClusterQueue",
                    "metadata": {"name": "p"},
                },
            }
        ],
        "installed": installed,
        "timeoutSeconds": 60,
        "pollSeconds": 0.05,
    }


def test_the_isolated_interpreter_cannot_import_the_project(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-I", "-c", "import components"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode != 0 and "No module named 'components'" in done.stderr


def test_webhook_gate_creates_from_its_pickle_alone(
    cluster: tuple[StartingCluster, str], tmp_path: Path
) -> None:
    state, server = cluster
    result = run_isolated(_WebhookReadinessProvider(), tmp_path, "create", gate_props(server, "v1"))
    assert result == {"id": "clusterqueues", "projectModules": []}
    # It waited through "no webhook registered" and "connection refused" before succeeding.
    assert state.count(WEBHOOKS_PATH) == 3 and state.count(QUEUE_DRY_RUN) == 2


def test_webhook_gate_waits_again_only_when_the_release_changed(
    cluster: tuple[StartingCluster, str], tmp_path: Path
) -> None:
    state, server = cluster
    same = run_isolated(
        _WebhookReadinessProvider(), tmp_path, "update", gate_props(server, "v1"), gate_props(server, "v1")
    )
    assert same["projectModules"] == [] and state.requests == []
    upgraded = run_isolated(
        _WebhookReadinessProvider(), tmp_path, "update", gate_props(server, "v2"), gate_props(server, "v1")
    )
    assert upgraded["projectModules"] == [] and state.count(QUEUE_DRY_RUN) == 2


def test_runtime_class_gate_creates_from_its_pickle_alone(
    cluster: tuple[StartingCluster, str], tmp_path: Path
) -> None:
    state, server = cluster
    props = {
        "kubeconfig": kubeconfig(server),
        "names": ["nvidia"],
        "installed": "v1",
        "timeoutSeconds": 60,
        "pollSeconds": 0.05,
    }
    result = run_isolated(_RuntimeClassProvider(), tmp_path, "create", props)
    assert result == {"id": "nvidia", "projectModules": []}
    assert state.count(RUNTIME_CLASS) == 3


def test_a_provider_pickled_by_reference_would_be_caught(tmp_path: Path) -> None:
    class ByReference(dynamic.ResourceProvider):
        def create(self, props: dict[str, Any]) -> dynamic.CreateResult:
            return dynamic.CreateResult(id_="x", outs=props)

    # A class defined in a test function is still located through this module by dill, so the
    # isolated interpreter must fail to import it: the harness would catch a by-reference pickle.
    ByReference.__qualname__ = "ByReference"
    globals()["ByReference"] = ByReference
    try:
        request = json.dumps(
            {
                "provider": serialize_provider(ByReference()),
                "op": "create",
                "news": {},
                "projectPackages": PROJECT_PACKAGES,
            }
        )
    finally:
        del globals()["ByReference"]
    done = subprocess.run(
        [sys.executable, "-I", "-c", RUNNER],
        input=request,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
    )
    assert done.returncode != 0 and "No module named 'tests'" in done.stderr


def test_must_wait_again_follows_the_fingerprint_and_the_probes() -> None:
    base = {"installed": "a", "probes": [{"plural": "queues"}], "kubeconfig": "k1"}
    assert not must_wait_again(base, {**base, "kubeconfig": "k2"})
    assert must_wait_again(base, {**base, "installed": "b"})
    assert must_wait_again(base, {**base, "probes": [{"plural": "clusterqueues"}]})
