"""``benchmarks/suite_time.py`` ranks the files of pytest's own JUnit XML (what ``make test`` writes).

The XML comes from a real pytest run of two small files, in both JUnit families, so a change of
pytest's format or of the Makefile's family breaks this rather than the next session's ranking.
Only counts and files are asserted: the seconds are whatever the machine took.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from benchmarks import suite_time

FILES = {
    "test_one.py": """
        def test_a():
            pass

        def test_b():
            pass

        class TestGrouped:
            def test_c(self):
                pass
    """,
    "test_two.py": """
        def test_d():
            pass
    """,
}


@pytest.mark.parametrize("family", ["xunit1", "xunit2"])
def test_every_test_is_counted_under_its_own_file(tmp_path: Path, family: str) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    for name, text in FILES.items():
        (suite / name).write_text(textwrap.dedent(text))
    xml = tmp_path / "out" / "durations.xml"
    options = ["-p", "no:cacheprovider", "-p", "no:xdist", "-c", "/dev/null", "--rootdir", str(suite)]
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            *options,
            f"--junitxml={xml}",
            "-o",
            f"junit_family={family}",
            str(suite),
        ],
        cwd=suite,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    totals = suite_time.seconds_per_file(xml)
    assert {file: count for file, (_, count) in totals.items()} == {"test_one.py": 3, "test_two.py": 1}
    lines = suite_time.report(totals, top=1)
    assert len(lines) == 2 and lines[-1].split()[2:4] == ["4", "tests"]


def test_make_test_writes_where_the_ranking_reads(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(suite_time.DURATIONS_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert suite_time.durations_path() == tmp_path / "gpu-batch" / "test-durations" / "make-test.xml"
    makefile = (Path(__file__).resolve().parent.parent / "Makefile").read_text()
    assert "--junitxml=$(TEST_DURATIONS) -o junit_family=xunit1" in makefile
    assert "TEST_DURATIONS ?= $(shell $(PY) -m benchmarks.suite_time --path)" in makefile
