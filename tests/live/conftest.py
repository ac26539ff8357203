"""Fixtures of the live tier: one control plane (etcd + CA) per pytest process, clusters on it.

Every test under ``tests/live/`` is put in the xdist group ``live`` (``make test`` runs pytest
with ``--dist loadgroup``), so one worker runs them all against one etcd, whatever the worker
count.  Nothing here skips: a tool that cannot be built fails the tests with the reason.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.live.cluster import KEEP_ENV, Cluster, ControlPlane
from tests.live.stacks import Deployment, deploy, deploy_clusters, kueue_objects, stack_clusters
from tests.live.tas_nodes import delete_nodes

LIVE_DIR = Path(__file__).resolve().parent
# the stack whose Kueue release (and Kueue configuration) the kueue_cluster fixture installs
KUEUE_STACK = "dev"
# the stack applied once per session for every test that needs it whole (the most hardened one)
SHARED_STACK = "prod"
APPLY_MODULE = "test_stacks_apply.py"
QUEUES_MODULE = "test_queues_live.py"


def pytest_configure(config: pytest.Config) -> None:
    # pytest-xdist registers it; without -n (make test-live) it is still a known mark
    config.addinivalue_line("markers", "xdist_group(name): run in one xdist worker with the group")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if LIVE_DIR in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.xdist_group("live"))
    follow_stack_apply(items)


def _stack_of(item: pytest.Item, module: str) -> str | None:
    callspec = getattr(item, "callspec", None)
    if Path(str(item.path)).name != module or callspec is None:
        return None
    stack = callspec.params.get("stack")
    return stack if isinstance(stack, str) else None


def follow_stack_apply(items: list[pytest.Item]) -> None:
    """Each stack's ``test_queues_live`` test right after its ``test_stacks_apply`` test, so both
    use one deployment of the stack (:class:`StackDeployments` keeps the last stack's only)."""
    queued = {s: i for i in items if (s := _stack_of(i, QUEUES_MODULE))}
    applied = {s for i in items if (s := _stack_of(i, APPLY_MODULE))}
    moved = [i for s, i in queued.items() if s in applied]
    if not moved:
        return
    rest = [i for i in items if i not in moved]
    items[:] = []
    for item in rest:
        items.append(item)
        stack = _stack_of(item, APPLY_MODULE)
        if stack in queued and queued[stack] in moved:
            items.append(queued[stack])


def next_test_uses(request: pytest.FixtureRequest, stack: str) -> bool:
    """Whether the test after this one in the session's order is ``stack``'s ``test_queues_live``
    test (:func:`follow_stack_apply` puts it there; ``-k`` may have deselected it)."""
    items = request.session.items
    try:
        index = items.index(request.node)
    except ValueError:
        return False
    return index + 1 < len(items) and _stack_of(items[index + 1], QUEUES_MODULE) == stack


class StackDeployments:
    """Whole stacks deployed (one cluster per cluster of the stack), shared by consecutive tests
    of the same stack.  Its last user stops them (:meth:`stop`): a MultiKueue stack's three
    clusters and Kueue managers left running keep a core half busy for the rest of the suite.
    Deploying the next stack stops the previous one's too, and the session's end whatever is left."""

    def __init__(self, plane: ControlPlane) -> None:
        self.plane = plane
        self.stack: str | None = None
        self.deployments: list[Deployment] = []

    def get(self, stack: str) -> list[Deployment]:
        if stack != self.stack:
            self.stop()
            self.deployments = deploy_clusters(self.plane, stack_clusters(stack), name=stack)
            self.stack = stack
        return self.deployments

    def stop(self) -> None:
        """Stop every cluster of the stack, the Nodes a test played on it deleted first (GKE's
        nodes of a stack go with the stack: :mod:`tests.live.tas_nodes`)."""
        for deployment in self.deployments:
            delete_nodes(deployment.cluster)
            deployment.cluster.stop()
        self.deployments, self.stack = [], None


@pytest.fixture(scope="session")
def control_plane() -> Iterator[ControlPlane]:
    """etcd and the session's CA; every process started on it is stopped at the end, by pid."""
    folder = Path(tempfile.mkdtemp(prefix="gpu-batch-live-"))
    try:
        plane = ControlPlane(folder)
        try:
            yield plane
        finally:
            plane.stop()
    finally:
        if os.environ.get(KEEP_ENV):
            print(f"\nlive tier: {KEEP_ENV} is set, its logs and PKI are kept in {folder}")
        else:
            shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def cluster(control_plane: ControlPlane, request: pytest.FixtureRequest) -> Iterator[Cluster]:
    """A fresh, empty cluster (kube-apiserver only) for one test."""
    cluster = control_plane.cluster(request.node.name[:40])
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="session")
def kueue_deployment(control_plane: ControlPlane) -> Iterator[Deployment]:
    """A cluster with Kueue's CRDs and release applied and Kueue's manager serving (the dev
    stack's Kueue configuration), with the manager (its ports) for tests that need them."""
    deployment = deploy(control_plane, kueue_objects(KUEUE_STACK), name="kueue")
    try:
        refused = deployment.refused
        assert not refused, "\n".join(map(str, refused))
        yield deployment
    finally:
        deployment.cluster.stop()


@pytest.fixture(scope="session")
def kueue_cluster(kueue_deployment: Deployment) -> Cluster:
    """The :func:`kueue_deployment`'s cluster; shared by the tests that bring their own queues:
    each uses names of its own."""
    return kueue_deployment.cluster


@pytest.fixture(scope="session")
def shared_stack(control_plane: ControlPlane) -> Iterator[Deployment]:
    """The ``prod`` stack applied whole (one cluster), Kueue serving, kept for the session:
    ``test_stacks_apply`` checks its answers and ``test_security_claims`` acts on it, so it is
    applied once (~50 s) instead of twice.  Tests write only dry runs or names of their own."""
    (objects,) = stack_clusters(SHARED_STACK)
    deployment = deploy(control_plane, objects, name=SHARED_STACK)
    try:
        yield deployment
    finally:
        deployment.cluster.stop()


@pytest.fixture(scope="session")
def stack_deployments(control_plane: ControlPlane) -> Iterator[StackDeployments]:
    """Every stack but :data:`SHARED_STACK` deployed whole, for ``test_stacks_apply`` and then
    ``test_queues_live`` (run one after the other per stack: :func:`follow_stack_apply`)."""
    deployments = StackDeployments(control_plane)
    try:
        yield deployments
    finally:
        deployments.stop()
