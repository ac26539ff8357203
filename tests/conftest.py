"""Make the project root and the policy pack importable the way each runs for real.

The program runs with the project root on sys.path (``import stacks``); the pack runs with
``policies/`` as its working directory (``import gpu_batch_policy``).
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from tests.shared_previews import StackPreview

ROOT = Path(__file__).resolve().parent.parent
for path in (ROOT, ROOT / "policies"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

# Hermetic: charts come from the cache or the mirror (../shared/vendor), never from the network
# (a test release of an unpinned version would otherwise try a registry on every call).  The
# pack processes tests start inherit it.  Resolver tests that exercise a pull build their own.
os.environ.setdefault("GPU_BATCH_CHARTS_OFFLINE", "1")


# The cyclic collector's first threshold in each test process (the main one and every xdist
# worker); the other two stay at CPython's default (10, 10).
YOUNG_COLLECTION_THRESHOLD = 100_000


def pytest_configure(config: pytest.Config) -> None:
    """Collect young objects every 100,000 allocations instead of every 700.

    A test process keeps a large heap for its whole life (each stack's shared run, memoised
    renders and models, the imported program and pack), and the tests allocate millions of
    short-lived objects (program runs, deep copies, proxies, models).  At CPython's default
    threshold (700, 10, 10) the collector ran so often that it was two thirds of building one
    stack's policy arguments (0.59 s with it, 0.19 s without, gpudirect).  The pack process does
    the same for the same reason (``policies/__main__.py``: ``gc.set_threshold(100_000, 50,
    100)``); here the older generations keep their defaults, so a full collection is still
    considered every 10 million allocations and the heap does not grow with a long run's cyclic
    garbage.  Collection is only postponed, never skipped: nothing a test asserts depends on
    when it runs.  Two sets of four files (-p no:xdist, load 2-4): 110.0 -> 89.4 s and 72.5 ->
    53.1 s summed; peak memory 776 -> 906 MB and 506 -> 630 MB."""
    gc.set_threshold(YOUNG_COLLECTION_THRESHOLD, 10, 10)


@pytest.fixture(autouse=True)
def no_internal_rule_errors() -> Iterator[None]:
    """Fail any test in which a pack rule raised (the guard turned it into an advisory finding).

    Tests that provoke one on purpose take the errors out of ``INTERNAL_ERRORS`` themselves.
    """
    from gpu_batch_policy.rules.kit.rule_guard import INTERNAL_ERRORS

    before = len(INTERNAL_ERRORS)
    yield
    new = INTERNAL_ERRORS[before:]
    del INTERNAL_ERRORS[before:]
    assert not new, f"pack rules raised (internal errors): {new}"


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Give each ``xdist_group`` test the ``@<group>`` suffix ``--dist loadgroup`` schedules by.

    pytest-xdist 3.8 (``xdist/remote.py``, ``WorkerInteractor.pytest_collection_modifyitems``)
    appends the suffix by assigning ``item._nodeid``; pytest 9.2 reads a node's id from ``_id``
    (``_pytest/nodes.py``, ``Node.nodeid``; a ``_pytest.nodeid.NodeId``), so the assignment is
    lost and every grouped test was scheduled alone (pytest-dev/pytest-xdist#1386, open): the live
    tier's tests ran on both workers, each starting its own control plane (etcd and API servers),
    and both workers previewed the same stacks.  xdist's hook also runs before
    ``tests/live/conftest.py`` adds the ``live`` group, so this runs last and names the groups
    the way xdist does (sorted, joined by ``_``).  Where the suffix is already there (an xdist
    that sets it) or the id is not pytest 9's ``NodeId``, it leaves the items alone.
    """
    # set on xdist's workers only (xdist/remote.py, setup_config)
    if not getattr(config.option, "loadgroup", False):
        return
    from _pytest.nodeid import NodeId

    for item in items:
        groups = sorted(
            {
                str(m.args[0] if m.args else m.kwargs.get("name", "default"))
                for m in item.iter_markers("xdist_group")
            }
        )
        if (
            not groups
            or "@" in item.nodeid.rpartition("]")[2]
            or not isinstance(getattr(item, "_id", None), NodeId)
        ):
            continue
        item._id = NodeId.parse(f"{item.nodeid}@{'_'.join(groups)}")


@pytest.fixture(scope="session")
def stack_preview(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], StackPreview]:
    """The preview of an unedited repo stack file, run once per test process (tests/shared_previews.py)."""
    from tests.shared_previews import previewer  # imports the preview: after the path and environment above

    return previewer(tmp_path_factory.mktemp("stack-previews"))
