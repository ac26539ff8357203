"""Every policy of the pack, in one flat list (``policies/__main__.py`` hands it to PolicyPack).

Keep it a simple list with one line per rule module so parallel additions merge trivially.
"""

from __future__ import annotations

from pulumi_policy import Policy

ALL_POLICIES: list[Policy] = []
