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
from tests.live.stacks import Deployment, deploy, kueue_objects, stack_clusters

LIVE_DIR = Path(__file__).resolve().parent
# the stack whose Kueue release (and Kueue configuration) the kueue_cluster fixture installs
KUEUE_STACK = "dev"
# the stack applied once per session for every test that needs it whole (the most hardened one)
SHARED_STACK = "prod"


def pytest_configure(config: pytest.Config) -> None:
    # pytest-xdist registers it; without -n (make test-live) it is still a known mark
    config.addinivalue_line("markers", "xdist_group(name): run in one xdist worker with the group")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if LIVE_DIR in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.xdist_group("live"))


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
