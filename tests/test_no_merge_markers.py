"""No tracked file keeps a merge's conflict markers.

A conflict resolved by hand in a Markdown table once left git's markers in
``tests/live/README.md`` for two merges: no other test reads that file's text, so nothing failed.
Git writes the markers as a line starting with seven ``<``, ``=`` or ``>`` (``git merge-file``);
the ``=`` line alone is also a Markdown heading underline, so only the opening and closing
markers are looked for.
"""

from __future__ import annotations

import subprocess

from tests.stack_runner import ROOT

OPEN, CLOSE = "<" * 7 + " ", ">" * 7 + " "


def markers(text: str) -> list[int]:
    """1-based numbers of the lines that open or close a conflict."""
    return [n for n, line in enumerate(text.splitlines(), 1) if line.startswith((OPEN, CLOSE))]


def test_no_tracked_file_has_conflict_markers() -> None:
    files = (
        subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True)
        .stdout.decode()
        .split("\0")
    )
    found = []
    for name in filter(None, files):
        path = ROOT / name
        if not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue  # binary
        found += [f"{name}:{n}" for n in markers(text)]
    assert not found, f"merge conflict markers left in: {found}"


def test_a_left_conflict_is_found() -> None:
    text = f"a\n{OPEN}HEAD\nours\n{'=' * 7}\ntheirs\n{CLOSE}branch\nb\n"
    assert markers(text) == [2, 6]
    assert markers("Title\n=======\n") == []
