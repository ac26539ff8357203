"""Levels of the findings the preview raises itself, set in the stack's policy config file.

The pack's policies take their levels from ``--policy-pack-config`` (``policies/config.<stack>.json``,
Pulumi's ``ReconcilePolicyPackConfig``: an entry is a level string or an object with
``enforcementLevel``, after ``all``).  A finding only the preview can compute (a team's
expected week needs the what-if and the price table, which the pack does not have) is set in
the same file the same way, so one file says how strict a stack is.  The preview takes those
entries out before it hands the file to the pack.  ``pulumi preview --policy-pack-config`` with
the same file still runs: the engine keeps an entry naming no policy of the pack without
complaint (pulumi/pulumi ``pkg/resource/analyzer/config.go`` ``applyConfig``; only the pack's
policies are validated, ``validatePolicyPackConfig``), and the Python policy SDK's ``Configure``
stores it unused (pulumi_policy 1.21.0 ``policy.py`` ``_PolicyAnalyzerServicer.Configure``).
This repo's analyzer is stricter (``reconcile_config`` rejects unknown names), hence ``pack_part``.

Allowed levels are ``advisory`` (the default), ``mandatory`` (the preview exits 1, as a
mandatory pack finding makes ``pulumi preview`` fail) and ``disabled``; ``remediate`` has no
meaning for a finding that changes nothing, and these policies take no properties.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from preview.analyzer import AnalyzerError
from preview.cost.budget import POLICY as BUDGET

PreviewLevel = Literal["advisory", "mandatory", "disabled"]
PREVIEW_POLICIES: tuple[str, ...] = (BUDGET,)
_ALLOWED: tuple[PreviewLevel, ...] = ("advisory", "mandatory", "disabled")


def pack_part(file_config: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The file without the preview's own entries: what the pack is given."""
    if file_config is None:
        return None
    return {k: v for k, v in file_config.items() if k not in PREVIEW_POLICIES}


def preview_level(file_config: Mapping[str, Any] | None, policy: str) -> PreviewLevel:
    """``policy``'s level: advisory, then ``all``, then its own entry (later wins)."""
    level: PreviewLevel = "advisory"
    for name in ("all", policy):
        if file_config is None or name not in file_config:
            continue
        value = file_config[name]
        raw = value.get("enforcementLevel") if isinstance(value, Mapping) else value
        if isinstance(value, Mapping) and set(value) - {"enforcementLevel"}:
            extra = sorted(set(value) - {"enforcementLevel"})
            raise AnalyzerError(f"policy config {name!r}: {policy} takes no properties, got {extra}")
        if raw is None and isinstance(value, Mapping):
            continue
        if name == "all" and raw == "remediate":
            continue  # 'all: remediate' is for the pack's remediation policies; the budget keeps its level
        matched = [allowed for allowed in _ALLOWED if allowed == raw]
        if not matched:
            raise AnalyzerError(
                f"policy config {name!r}: got {raw!r} for {policy}, expected one of {', '.join(_ALLOWED)}"
            )
        level = matched[0]
    return level
