"""Every Helm release must render: the chart accepts its values, exactly as ``helm install`` would.

A chart can refuse values three ways, all of which fail ``pulumi up`` at the Release (and, with
``atomic: true``, roll it back): a ``fail`` call in a template (SkyPilot 0.13.0's
``templates/NOTES.txt`` refuses an API server below 4 CPU / 8 GiB unless
``apiService.skipResourceCheck``), a ``required`` value, or a value its ``values.schema.json``
rejects.  The pack renders each release with the real Helm engine (:mod:`.charts`) and reports
the chart's own message.  A release whose chart cannot be resolved, or whose values are unknown
until apply, is "cannot check yet": never a failure, never a crash.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import Policy

from ...facts.model import StackModel
from ..kit.builders import stack_policy
from ..kit.report import Reporter


def stack_of(urn: str) -> str:
    """The stack name inside a URN (``urn:pulumi:<stack>::<project>::…``); "" when malformed."""
    parts = urn.split(":", 3)
    return parts[2] if len(parts) == 4 and parts[0] == "urn" and parts[1] == "pulumi" else ""


def check_release_renders(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    """Each release's chart renders with its values; the chart's refusal is the finding."""
    for release in model.helm_releases():
        outcome = model.renders.get(release.urn)
        if outcome is None or outcome.status == "rendered":
            continue
        if outcome.status == "refused":
            stack = stack_of(release.urn)
            where = f" in stack {stack}" if stack else ""
            reporter.violation(
                release,
                f"chart {outcome.reference} refuses the values of release '{outcome.release_name}'"
                f"{where} ({outcome.error_kind}): {outcome.message}",
                "change the release values until the chart accepts them; `helm template` with the "
                "same values reproduces the error",
            )
        else:
            reporter.cannot_check(release, f"chart not rendered: {outcome.message}")


POLICIES: list[Policy] = [
    stack_policy(
        "helm-release-renders",
        "Every Helm release renders with its pinned chart and values, as `helm install` would "
        "(the chart's fail/required checks and values.schema.json).",
        check_release_renders,
    ),
]
