"""``--dist loadgroup`` runs every test of an ``xdist_group`` on one worker (``make test``).

The live tier counts on it (one control plane per run, ``tests/live/conftest.py``), and so do
the shared previews (``tests/shared_previews.py``).  With pytest 9.2 and pytest-xdist 3.8 it held
only through :func:`tests.conftest.pytest_collection_modifyitems` (pytest-dev/pytest-xdist#1386):
a real two-worker run of a small suite, with one group marked in the test file and one added by a
sub-folder's conftest hook the way the live tier's is, shows where each test ran.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

TESTS = """
    import pytest

    @pytest.mark.xdist_group("marked")
    @pytest.mark.parametrize("i", range(4))
    def test_marked(i):
        pass

    @pytest.mark.parametrize("i", range(4))
    def test_free(i):
        pass
"""

LATE_CONFTEST = """
    import pathlib
    import pytest

    HERE = pathlib.Path(__file__).resolve().parent

    def pytest_collection_modifyitems(items):
        for item in items:
            if HERE in pathlib.Path(str(item.path)).resolve().parents:
                item.add_marker(pytest.mark.xdist_group("late"))
"""


def test_each_group_runs_on_one_worker(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    (suite / "late").mkdir(parents=True)
    (suite / "conftest.py").write_text(
        "from tests.conftest import pytest_collection_modifyitems  # noqa: F401\n"
    )
    (suite / "late" / "conftest.py").write_text(textwrap.dedent(LATE_CONFTEST))
    for name in ("test_one.py", "test_two.py", "late/test_three.py", "late/test_four.py"):
        (suite / name).write_text(textwrap.dedent(TESTS))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    options = [
        "-p",
        "no:cacheprovider",
        "-c",
        "/dev/null",
        "--rootdir",
        str(suite),
        "-n",
        "2",
        "--dist",
        "loadgroup",
    ]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-v", *options, str(suite)],
        cwd=suite,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    # "[gw0] [  3%] PASSED late/test_three.py::test_marked[0]@late_marked": the worker, and the id
    # whose suffix xdist's scheduler groups by (xdist/scheduler/loadgroup.py, _split_scope)
    worker = {
        test: gw for gw, test in re.findall(r"^\[(gw[01])\] .*PASSED (\S+)\s*$", done.stdout, re.MULTILINE)
    }
    assert len(worker) == 32, done.stdout
    by_group: dict[str, set[str]] = {}
    counts: dict[str, int] = {}
    for test, gw in worker.items():
        group = test.rpartition("@")[2] if "@" in test else ""
        by_group.setdefault(group, set()).add(gw)
        counts[group] = counts.get(group, 0) + 1
    # test_one/test_two's marked tests share "marked"; late/'s marked tests carry both groups
    # ("late_marked"), late/'s others "late" alone; the rest none.
    assert counts == {"marked": 8, "late_marked": 8, "late": 8, "": 8}, counts
    for group in ("marked", "late_marked", "late"):
        assert len(by_group[group]) == 1, (group, done.stdout)
