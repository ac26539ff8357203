"""The readiness gates' providers work from the stack's state alone, in a fresh process.

Pulumi stores a dynamic provider as a dill pickle and runs every later update and delete by
unpickling it in a new ``python -m pulumi.dynamic`` process (pulumi ``dynamic/__main__.py``
``get_provider``: ``dill.loads``).  These tests do the same: serialise each provider with the SDK's
own ``serialize_provider``, unpickle it in an isolated interpreter (``python -I``) whose working
directory is outside the checkout, so no project module can be imported, and run its ``create``
and ``update`` against a stand-in Kubernetes API server that answers the way a cluster does
while an operator is still starting.  A provider pickled by module reference fails to load there
(the last test proves the harness would notice).

The state's copy must also load under *another CPython minor* than the one that wrote it (the
README allows 3.11+; a dill pickle of code objects written under 3.11 segfaults under 3.12).  The
cross-minor tests run the same calls in every other minor they find: interpreters named in
``GPU_BATCH_OTHER_PYTHONS`` (``os.pathsep``-separated), or the virtualenvs ``make gate-venvs``
creates next to the system's temp dir (``gpu-batch-gate-py3.N``, with the pinned ``pulumi``,
``dill``, ``kubernetes`` and ``PyYAML``).  They skip, saying so, when there is none.
"""

from __future__ import annotations

import base64
import json
import os
import pickletools
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from pulumi import dynamic
from pulumi.dynamic.dynamic import serialize_provider

from components.gates.runtime import RuntimeClassProvider, WebhookReadinessProvider, must_wait_again

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
elif request["op"] == "read":
    result = {"id": provider.read("id", request["news"]).id}
elif request["op"] == "delete":
    result = {"deleted": provider.delete("id", request["news"]) is None}
else:
    result = {"outs": sorted(provider.update("id", request["olds"], request["news"]).outs)}
result["python"] = "%d.%d" % sys.version_info[:2]
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
    python: str = sys.executable,
) -> dict[str, Any]:
    request = {
        "provider": serialize_provider(provider),
        "op": op,
        "news": news,
        "olds": olds or {},
        "projectPackages": PROJECT_PACKAGES,
    }
    done = subprocess.run(
        [python, "-I", "-c", RUNNER],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    del result["python"]
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
    result = run_isolated(WebhookReadinessProvider(), tmp_path, "create", gate_props(server, "v1"))
    assert result == {"id": "clusterqueues", "projectModules": []}
    # It waited through "no webhook registered" and "connection refused" before succeeding.
    assert state.count(WEBHOOKS_PATH) == 3 and state.count(QUEUE_DRY_RUN) == 2


def test_webhook_gate_waits_again_only_when_the_release_changed(
    cluster: tuple[StartingCluster, str], tmp_path: Path
) -> None:
    state, server = cluster
    same = run_isolated(
        WebhookReadinessProvider(), tmp_path, "update", gate_props(server, "v1"), gate_props(server, "v1")
    )
    assert same["projectModules"] == [] and state.requests == []
    upgraded = run_isolated(
        WebhookReadinessProvider(), tmp_path, "update", gate_props(server, "v2"), gate_props(server, "v1")
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
    result = run_isolated(RuntimeClassProvider(), tmp_path, "create", props)
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


GATE_PROVIDERS = {"webhook": WebhookReadinessProvider, "runtimeClass": RuntimeClassProvider}
THIS_MINOR = f"{sys.version_info[0]}.{sys.version_info[1]}"


def other_minors() -> dict[str, str]:
    """{"3.N": interpreter} for every CPython minor other than this one that can load a gate."""
    named = [p for p in os.environ.get("GPU_BATCH_OTHER_PYTHONS", "").split(os.pathsep) if p]
    found = sorted(str(p) for p in Path(tempfile.gettempdir()).glob("gpu-batch-gate-py3.*/bin/python"))
    minors: dict[str, str] = {}
    for python in named + found:
        done = subprocess.run(
            [python, "-I", "-c", "import sys, dill, pulumi.dynamic; print('%d.%d' % sys.version_info[:2])"],
            capture_output=True,
            text=True,
            check=False,
        )
        minor = done.stdout.strip()
        if done.returncode == 0 and minor != THIS_MINOR:
            minors.setdefault(minor, python)
    return minors


def test_the_state_holds_source_not_bytecode() -> None:
    """The pickle names one global, ``builtins.eval``, and carries no code object (module doc)."""
    for provider in GATE_PROVIDERS.values():
        data = base64.b64decode(serialize_provider(provider()))
        strings = [arg for op, arg, _ in pickletools.genops(data) if isinstance(arg, str)]
        opcodes = {op.name for op, _, _ in pickletools.genops(data)}
        assert "STACK_GLOBAL" in opcodes and strings[:2] == ["builtins", "eval"], strings[:4]
        assert not any(s in ("_create_code", "CodeType", "_create_function") for s in strings)
        assert not any(isinstance(arg, bytes) for _, arg, _ in pickletools.genops(data))
        # The source is the module's, verbatim, and it imports nothing of the project.
        source = next(s for s in strings if "class SourceCarried" in s)
        assert "from components" not in source and "import components" not in source


def test_the_carried_source_imports_only_what_every_process_has() -> None:
    """Only the standard library, pulumi and the pinned kubernetes/PyYAML clients."""
    import ast

    import components.gates.runtime as runtime

    allowed = set(sys.stdlib_module_names) | {"pulumi", "kubernetes", "yaml"}
    tree = ast.parse(runtime.carried_source())
    imported = {
        (node.module or "").split(".")[0] if isinstance(node, ast.ImportFrom) else alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    }
    assert imported and imported <= allowed, imported - allowed


@pytest.fixture(scope="module")
def minors() -> dict[str, str]:
    found = other_minors()
    if not found:
        pytest.skip(
            f"no CPython minor other than {THIS_MINOR} with dill and pulumi: run `make gate-venvs` "
            "or set GPU_BATCH_OTHER_PYTHONS"
        )
    return found


@pytest.mark.parametrize("op", ["create", "read", "delete"])
def test_a_gate_written_here_runs_under_every_other_minor(
    minors: dict[str, str], cluster: tuple[StartingCluster, str], tmp_path: Path, op: str
) -> None:
    """Serialised by this interpreter, loaded and run by another minor, as ``destroy`` does."""
    state, server = cluster
    for minor, python in minors.items():
        props = gate_props(server, "v1")
        result = run_isolated(WebhookReadinessProvider(), tmp_path, op, props, python=python)
        assert result["projectModules"] == [], minor
        rc_props = {
            "kubeconfig": kubeconfig(server),
            "names": ["nvidia"],
            "installed": "v1",
            "timeoutSeconds": 60,
            "pollSeconds": 0.05,
        }
        rc_result = run_isolated(RuntimeClassProvider(), tmp_path, op, rc_props, python=python)
        assert rc_result["projectModules"] == [], minor
    if op == "create":  # it really waited, under the other minor, through the operator's start
        assert state.count(QUEUE_DRY_RUN) >= 2 and state.count(RUNTIME_CLASS) >= 3
