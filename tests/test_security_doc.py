"""docs/security.md names real mechanisms: every rule it cites is a policy of the pack, and every
file it names exists (a renamed rule or module makes the security section lie)."""

from __future__ import annotations

import re

from gpu_batch_policy.runtime.registry import ALL_POLICIES

from tests.stack_runner import ROOT

DOC = (ROOT / "docs" / "security.md").read_text()


def test_every_rule_the_security_section_cites_exists() -> None:
    names = {p.name for p in ALL_POLICIES}
    cited = set(re.findall(r"`([a-z0-9]+(?:-[a-z0-9]+)+)`", DOC)) - {
        "gke-l7-rilb",
        "ray-ml",
        "gmp-system",
        "kuberay-system",
        "skypilot-ingress",
    }  # namespaces
    assert cited and cited <= names, cited - names


def test_every_file_it_names_exists() -> None:
    paths = set(re.findall(r"`((?:components|stacks|tests|policies|docs)/[\w/.-]+\.(?:py|md))`", DOC))
    assert paths and all((ROOT / p).is_file() for p in paths), [p for p in paths if not (ROOT / p).is_file()]
