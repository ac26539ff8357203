"""Refuse a stack file that still holds the repository's sample values, before any cloud call.

The stack files ship with placeholders: Google Groups at ``example.com`` (a domain reserved for
documentation, RFC 2606: no Google Workspace can own it, so a RoleBinding to such a group binds
nobody and ``cluster.securityGroup`` names a group that cannot exist) and the sample project ids
``gpu-batch-<stack>``.  The deploy workflow runs ``python -m stacks.placeholders <stack>`` first:
one line per placeholder, key path and value, exit 2 -- before it authenticates to Google Cloud.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Final

import yaml

from stacks.errors import ConfigIssue, key_path

ROOT: Final = Path(__file__).resolve().parents[1]
RESERVED_DOMAIN: Final = re.compile(r"@example\.(com|org|net)$|\.example\.(com|org|net)$", re.IGNORECASE)
SAMPLE_PROJECTS: Final = frozenset({"gpu-batch-dev", "gpu-batch-prod", "gpu-batch-kai", "gpu-batch-skypilot"})


def _strings(value: Any, path: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(item, key_path(path, [str(key)]))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _strings(item, key_path(path, [index]))


def placeholders(config: dict[str, Any]) -> list[ConfigIssue]:
    """Every placeholder among the stack file's ``config`` values."""
    issues = []
    for key, value in config.items():
        for path, text in _strings(value, str(key)):
            if RESERVED_DOMAIN.search(text):
                issues.append(
                    ConfigIssue(path, "a real group or user (example.com is the sample's placeholder)", text)
                )
            elif path == "gcp:project" and text in SAMPLE_PROJECTS:
                issues.append(ConfigIssue(path, "your own project id (the sample's is a placeholder)", text))
            elif any(text.startswith(f"projects/{p}/") for p in SAMPLE_PROJECTS):
                issues.append(
                    ConfigIssue(path, "a resource of your own project (the sample's is a placeholder)", text)
                )
    return issues


def main(argv: Sequence[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m stacks.placeholders <stack>", file=sys.stderr)
        return 2
    document = yaml.safe_load((ROOT / f"Pulumi.{argv[0]}.yaml").read_text()) or {}
    issues = placeholders(document.get("config") or {})
    for issue in issues:
        print(f"config error: {issue.line()}", file=sys.stderr)
    return 2 if issues else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
