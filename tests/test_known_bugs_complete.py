"""Known bugs of the pins, complete (issue 39): every upstream entry after each pin is classified.

The sources and the classification are ``policies/gpu_batch_policy/facts/known_bugs/changelogs.json``.
Each source is read where it is: ``../shared/upstream/<owner>+<repo>/<ref>/<path>`` when there,
else the fetched mirror at the recorded commit (``tests/policies/upstream_git.py``); a test skips
with the reason only when neither exists.  Kueue: the "Bug or Regression" bullets of every
``## vX.Y.Z`` section newer than the pin in ``CHANGELOG-0.19.md``; KAI: the ``Fixed`` changelog
fragments (changie) not yet folded into a release; KubeRay: commits on the release branch after
the pin.  An entry not listed fails; a listed one that upstream no longer has fails too.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from gpu_batch_policy.facts.known_bugs import known_bugs, parse_version
from gpu_batch_policy.facts.known_bugs.conditions import CONDITIONS
from gpu_batch_policy.primitives.values import plain

from tests.policies.pack_harness import Res, run
from tests.policies.pack_harness import policy as get_policy
from tests.policies.pack_objects import k8s
from tests.stack_runner import ROOT, unedited_run
from tests.test_tenancy_findings import model
from tests.upstream import mirror, show, upstream_file

CLASSIFICATION = json.loads(
    (ROOT / "policies" / "gpu_batch_policy" / "facts" / "known_bugs" / "changelogs.json").read_text()
)
MIRRORS = {
    "kubernetes-sigs/kueue": "kubernetes-sigs+kueue",
    "kai-scheduler/KAI-Scheduler": "kai-scheduler+KAI-Scheduler",
    "ray-project/kuberay": "ray-project+kuberay",
}
BUG_SECTION = "### Bug or Regression"


def source(component: str) -> dict[str, Any]:
    (found,) = [s for s in CLASSIFICATION["sources"] if s["component"] == component]
    return dict(found)


def classified(component: str) -> dict[str, dict[str, Any]]:
    return {e["source"]: e for e in CLASSIFICATION["entries"] if e["component"] == component}


def _git(component: str) -> Path:
    src = source(component)
    folder = MIRRORS[src["repository"]]
    found = mirror(src["repository"], f"GPU_BATCH_{component.upper()}_GIT")
    if found is None:
        pytest.skip(f"no ../.mirror/{folder} git mirror holds {src['path']} (../shared/upstream has no copy)")
    return found


def _git_out(git: Path, *args: str) -> str:
    return subprocess.run(
        ["git", f"--git-dir={git}", *args], check=True, capture_output=True, text=True
    ).stdout


def kueue_entries(text: str, pin: str) -> list[str]:
    """The Bug or Regression bullets of every section newer than ``pin``, by their first PR number."""
    pinned = parse_version(pin)
    entries: list[str] = []
    for section in re.split(r"^## ", text, flags=re.MULTILINE)[1:]:
        version = parse_version(section.split("\n", 1)[0].strip())
        if version is None or pinned is None or version <= pinned or BUG_SECTION not in section:
            continue
        bugs = section.split(BUG_SECTION, 1)[1].split("\n### ", 1)[0]
        for bullet in re.findall(r"^- (.+)$", bugs, flags=re.MULTILINE):
            numbers = re.findall(r"#(\d+)", bullet)
            entries.append(f"#{numbers[0]}" if numbers else bullet[:80])
    return entries


def test_parser_finds_bug_entries_of_a_newer_section() -> None:
    """The parser can fail: a made-up v0.19.3 section's bullets are found, v0.19.2's are not."""
    text = "## v0.19.3\n\n### Bug or Regression\n\n- Fix A (#15001, @x)\n- Fix B (#15002)\n\n### Other\n- C (#1)\n\n## v0.19.2\n\n### Bug or Regression\n\n- Old (#14000)\n"
    assert kueue_entries(text, "v0.19.2") == ["#15001", "#15002"]


def test_every_kueue_entry_after_the_pin_is_classified() -> None:
    src = source("kueue")
    text = upstream_file(src["repository"], src["commit"], src["path"], env="GPU_BATCH_KUEUE_GIT")
    entries = kueue_entries(text, src["pin"])
    assert set(entries) == set(classified("kueue")), sorted(set(entries) ^ set(classified("kueue")))
    if not entries:
        # Complete because empty: the changelog's newest section is the pin itself.
        assert text.lstrip().startswith(f"## {src['pin']}"), (
            "a newer section without Bug or Regression entries"
        )


def test_every_kai_fix_after_the_pin_is_classified() -> None:
    src = source("kai")
    git = _git("kai")
    names = _git_out(git, "ls-tree", "--name-only", f"{src['commit']}:{src['path']}").split()
    fixed = sorted(n for n in names if n.lower().startswith("fixed-"))
    assert fixed and set(fixed) == set(classified("kai")), sorted(set(fixed) ^ set(classified("kai")))
    for name, entry in classified("kai").items():
        body = show(git, src["commit"], f"{src['path']}/{name}")
        assert entry["issue"] in body or entry["verdict"] == "cannot-meet", name


def test_kuberay_has_no_commit_after_the_pin() -> None:
    src = source("kuberay")
    git = _git("kuberay")
    # The release branch at the recorded commit holds nothing after the pin.
    log = _git_out(git, "log", "--oneline", f"{src['pin']}..{src['commit']}").split("\n")
    assert [line for line in log if line] == [], "classify KubeRay's fixes after v1.7.0 in changelogs.json"


def test_every_can_meet_entry_names_a_record_with_an_evaluated_condition() -> None:
    records = {b.id: b for b in known_bugs()}
    for entry in CLASSIFICATION["entries"]:
        assert entry["why"], entry
        if entry["verdict"] == "can-meet":
            assert records[entry["record"]].condition in CONDITIONS, entry
        else:
            assert entry["verdict"] == "cannot-meet" and entry["record"] is None, entry
    # The bugs issue 39 names are recorded, each with a condition the pack evaluates.
    named = {"#14871", "#15082", "#16307", "#16376", "#1968"}
    cited = {
        ref.split("#", 1)[1].split(" ", 1)[0] for b in records.values() for ref in b.references if "#" in ref
    }
    assert {n[1:] for n in named} <= cited


# --- the conditions, on programs that meet them and ones that do not -----------------------------

RULE = get_policy("known-bug-in-pinned-version")


def kueue_release() -> Res:
    return Res(
        "kubernetes:helm.sh/v3:Release",
        "kueue",
        {
            "chart": "oci://registry.k8s.io/kueue/charts/kueue",
            "version": "0.19.2",
            "name": "kueue",
            "namespace": "kueue-system",
        },
    )


def cohort(name: str, parent: str | None) -> Res:
    spec = {"parentName": parent} if parent else {}
    return k8s("kueue.x-k8s.io/v1beta2", "Cohort", name, spec=spec)


def test_a_cohort_cycle_is_met_and_a_tree_is_not() -> None:
    met = run(RULE, [kueue_release(), cohort("a", "b"), cohort("b", "a")])
    assert any("kueue-cohort-cycle-hang" in m for m in met.messages), met.text()
    tree = run(RULE, [kueue_release(), cohort("a", None), cohort("b", "a")])
    assert not any("kueue-cohort-cycle-hang" in m for m in tree.messages)


@pytest.fixture(scope="module")
def kai_items() -> list[tuple[str, Any, str, str]]:
    return [(r.type, plain(r.inputs), r.urn, r.name) for r in unedited_run("kai").resources]


def test_the_kai_stack_applies_the_stale_gang_mitigation_and_without_it_meets_the_bug(
    kai_items: list[tuple[str, Any, str, str]],
) -> None:
    condition = CONDITIONS["kai-stale-gang-eviction-default"]
    assert condition(model(kai_items)) == []
    bare = []
    for t, props, urn, name in kai_items:
        kai = t == "kubernetes:helm.sh/v3:Release" and "kai-scheduler" in str(props.get("chart"))
        without = {k: v for k, v in (props.get("values") or {}).items() if k != "scheduler"}
        bare.append((t, {**props, "values": without} if kai else props, urn, name))
    (shard,) = condition(model(bare))
    assert shard.kind == "SchedulingShard" and shard.name == "default"
