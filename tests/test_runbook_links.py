"""Every in-page link of the runbook lands on a heading (the day-two table links each diff line
or finding to its procedure, issue 28), and the diff's drain link is one of them."""

from __future__ import annotations

import re
from pathlib import Path

from preview.plan_diff import DRAIN_PROCEDURE
from tests.stack_runner import ROOT

RUNBOOK = Path(ROOT) / "docs" / "runbook.md"


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to dashes."""
    return re.sub(r"[^a-z0-9 _-]", "", heading.strip().lower()).replace(" ", "-")


def test_in_page_links_resolve() -> None:
    text = RUNBOOK.read_text()
    anchors = {slug(h) for h in re.findall(r"^#+ (.+)$", text, flags=re.M)}
    links = re.findall(r"\]\(#([^)]+)\)", text)
    assert len(links) >= 6
    assert [link for link in links if link not in anchors] == []
    assert DRAIN_PROCEDURE.split("#")[1] in anchors


def test_the_day_two_table_names_each_call() -> None:
    section = RUNBOOK.read_text().split("## Day two")[1].split("\n## ")[0]
    for call in (
        "refused: the resource is protected",
        "drain it first",
        "### Upgrade:",
        "known-bug-in-pinned-version",
        "retainOnDelete",
    ):
        assert call in section, call
