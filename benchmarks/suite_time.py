"""Where a warm ``make test`` spends its time: summed seconds per test file, from the last run.

``make test`` (the Makefile's ``unit`` target) writes pytest's JUnit XML of every test to
:func:`durations_path` outside the checkout, every run, so ranking the files by summed time needs
no new run of the suite.  pytest's JUnit writer (pytest 9.2, ``_pytest/junitxml.py``:
``LogXML.update_testcase_duration`` under the default ``junit_duration_report = "total"``) gives
each ``<testcase>`` a ``time`` summed over its setup, call and teardown, and, with
``junit_family=xunit1`` (the Makefile sets it; ``_NodeReporter.record_testreport`` keeps the
legacy attributes then), a ``file`` attribute: the test's file as pytest collected it.  A session-scoped fixture's setup is charged to the first test that needs it.

Usage: ``python -m benchmarks.suite_time [--top 25] [--xml FILE]`` prints one line per file,
slowest first (seconds, tests, file), then the total; ``--path`` prints where ``make test``
writes the XML (the Makefile asks this, so the location is written once).
"""

from __future__ import annotations

import argparse
import os
import sys
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

from gpu_batch_policy.primitives.cache_home import cache_home

ROOT = Path(__file__).resolve().parent.parent

DURATIONS_ENV = "GPU_BATCH_TEST_DURATIONS"


def durations_path() -> Path:
    """``$GPU_BATCH_TEST_DURATIONS``, else ``test-durations/make-test.xml`` in the project's cache root.

    The root (``cache_home()``, the pack's ``primitives/cache_home.py``) holds the project's other
    caches too.
    """
    explicit = os.environ.get(DURATIONS_ENV)
    if explicit:
        return Path(explicit)
    return cache_home() / "test-durations" / "make-test.xml"


def _file_of(case: ET.Element) -> str:
    """The test's file: ``file`` (xunit1), else the module path spelled by ``classname`` (xunit2)."""
    file = case.get("file")
    if file:
        return file
    parts = (case.get("classname") or "").split(".")
    # A class inside the module adds one capitalised component (pytest's Class nodes).
    while len(parts) > 1 and parts[-1][:1].isupper():
        parts.pop()
    return "/".join(parts) + ".py"


def seconds_per_file(xml: Path) -> dict[str, tuple[float, int]]:
    """File -> (summed seconds, number of test cases) over every ``<testcase>`` in ``xml``."""
    totals: dict[str, list[float]] = defaultdict(lambda: [0.0, 0])
    for case in ET.parse(xml).getroot().iter("testcase"):
        entry = totals[_file_of(case)]
        entry[0] += float(case.get("time") or 0.0)
        entry[1] += 1
    return {file: (seconds, int(count)) for file, (seconds, count) in totals.items()}


def report(totals: dict[str, tuple[float, int]], top: int) -> list[str]:
    ranked = sorted(totals.items(), key=lambda item: (-item[1][0], item[0]))
    lines = [f"{seconds:9.1f} s {count:5d} tests  {file}" for file, (seconds, count) in ranked[:top]]
    total = sum(seconds for seconds, _ in totals.values())
    tests = sum(count for _, count in totals.values())
    lines.append(f"{total:9.1f} s {tests:5d} tests  total over {len(totals)} files (summed, not wall)")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--xml", type=Path, default=None, help="a JUnit XML file (default: make test's)")
    parser.add_argument("--top", type=int, default=25, help="how many files to list (default 25)")
    parser.add_argument("--path", action="store_true", help="print where make test writes the XML and exit")
    args = parser.parse_args(argv)
    if args.path:
        print(durations_path())
        return 0
    xml = args.xml or durations_path()
    if not xml.exists():
        print(f"no test durations at {xml}: run `make test` first", file=sys.stderr)
        return 1
    print("\n".join(report(seconds_per_file(xml), args.top)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
