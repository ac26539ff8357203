"""The multi-region example stack (``Pulumi.multiregion.yaml``) run once under the SDK mocks and
split into its MultiKueue manager and workers (``whatif.multikueue.fleet``)."""

from __future__ import annotations

import pytest

from tests.stack_runner import run_stack
from whatif.multikueue.fleet import Fleet, fleet
from whatif.sources import Record

# the example stack's research gang: one a3-highgpu-8g node
GANG = [{"name": "workers", "count": 1, "requests": {"cpu": "100", "memory": "700Gi", "nvidia.com/gpu": "8"}}]


@pytest.fixture(scope="session")
def records() -> list[Record]:
    run = run_stack("multiregion")
    return [(r.type, r.inputs, r.urn, r.name, r.provider or "", tuple(r.dependencies)) for r in run.resources]


@pytest.fixture(scope="session")
def found(records: list[Record]) -> Fleet:
    got = fleet(records)
    assert got is not None
    return got
