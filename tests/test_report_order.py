"""``report.md`` is the same whatever order the program registered its resources in.

Registration order varies from run to run (which SDK executor thread registers first); the
gpudirect stack's report listed its GPU networks' firewall rules as it met them, so two previews
of one program wrote different reports.  Each repo stack's capacity sections are written from its
resources as registered and from the same resources shuffled, and compared line for line.
"""

from __future__ import annotations

import random

import pytest

from preview.report import capacity_sections
from preview.stack_files import stack_names
from tests.stack_runner import ROOT, unedited_run


@pytest.mark.parametrize("stack", stack_names(ROOT))
def test_the_capacity_sections_do_not_follow_registration_order(stack: str) -> None:
    resources = unedited_run(stack).resources
    shuffled = list(resources)
    random.Random(stack).shuffle(shuffled)
    assert [r.urn for r in shuffled] != [r.urn for r in resources]
    assert capacity_sections(stack, shuffled) == capacity_sections(stack, resources)
