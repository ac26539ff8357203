"""Upgrades planned from records (issue 28, item 5).

The records are checked for form; the worked example is KAI v0.13.0 -> v0.17.0, computed from
the two charts vendored in ``../shared/vendor`` (read at run time, never copied); Kueue 0.19 ->
0.20 is a record: 0.20.0-0.20.5 blocked, the storage-version migration first.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from preview.plan import plan_document
from preview.upgrades.capabilities import flipped, gates
from preview.upgrades.charts import crd_changes, default_flips, removed_values, values_of
from preview.upgrades.plans import blocked_upgrades, cluster_minor_sections, upgrade_sections
from preview.upgrades.records import all_records, load, problems, version
from preview.upgrades.section import upgrade_section
from tests.stack_runner import ROOT, config_value, run_stack, unedited_run

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

VENDOR = Path(ROOT).parent / "shared" / "vendor"
KAI_OLD, KAI_NEW = VENDOR / "kai-scheduler-v0.13.0", VENDOR / "kai-scheduler-v0.17.0"
# What a stack on v0.13.0 set to give fraction pods the NVIDIA runtime (that chart's key).
V013_VALUES = {"admission": {"gpuPodRuntimeClassName": "nvidia"}}
POD_GROUP = {
    "apiVersion": "scheduling.run.ai/v2alpha2",
    "kind": "PodGroup",
    "metadata": {"name": "gang", "namespace": "team-a"},
    "spec": {"minMember": 2, "queue": "team-a", "backoffLimit": 3},
}


def test_every_record_file_is_well_formed() -> None:
    records = all_records()
    assert {"kai-scheduler", "kueue"} <= set(records)
    for component in records.values():
        assert problems(component) == [], component.path


def _write(tmp_path: Path, transitions: list[dict[str, Any]], pin: str = "0.17.0") -> Path:
    path = tmp_path / "x.json"
    path.write_text(json.dumps({"component": "x", "chart": "x", "pin": pin, "transitions": transitions}))
    return path


def _t(low: str, before: str, to: tuple[str, str] = ("0.17.0", "0.18.0"), **more: Any) -> dict[str, Any]:
    return {
        "from": {"min": low, "before": before},
        "to": {"min": to[0], "before": to[1]},
        "verdict": more.pop("verdict", "manual"),
        "steps": more.pop("steps", [{"phase": "operator", "do": "upgrade"}]),
        "references": ["r"],
        **more,
    }


def test_the_checks_catch_overlap_hole_unproven_safe_and_step_order(tmp_path: Path) -> None:
    overlap = load(_write(tmp_path, [_t("0.13.0", "0.16.0"), _t("0.15.0", "0.17.0")]))
    assert any("overlaps" in p for p in problems(overlap))
    hole = load(_write(tmp_path, [_t("0.13.0", "0.14.0"), _t("0.15.0", "0.17.0")]))
    assert any("hole below the pin" in p for p in problems(hole))
    unproven = load(_write(tmp_path, [_t("0.13.0", "0.17.0", verdict="safe")]))
    assert any("'safe' without evidence" in p for p in problems(unproven))
    backwards = [{"phase": "objects", "do": "a"}, {"phase": "crds", "do": "b"}]
    assert any(
        "out of order" in p
        for p in problems(load(_write(tmp_path, [_t("0.13.0", "0.17.0", steps=backwards)])))
    )
    assert problems(load(_write(tmp_path, [_t("0.13.0", "0.15.0"), _t("0.15.0", "0.17.0")]))) == []


def test_kai_values_key_renamed_and_dropped_silently() -> None:
    removed = {
        k.path: k
        for k in removed_values(
            values_of(KAI_OLD),
            values_of(KAI_NEW),
            V013_VALUES,
            all_records()["kai-scheduler"].transitions[0].renames,
        )
    }
    key = removed["admission.gpuPodRuntimeClassName"]
    assert key.renamed_to == "admission.gpuFractionRuntimeClassName" and key.set_by_stack
    # The new name exists in the target chart, the old one does not: Helm would ignore it.
    assert "gpuFractionRuntimeClassName" in values_of(KAI_NEW)["admission"]
    assert "gpuPodRuntimeClassName" not in values_of(KAI_NEW)["admission"]


def test_kai_podgroup_crd_drops_eight_fields_and_names_their_users() -> None:
    (podgroups,) = [c for c in crd_changes(KAI_OLD, KAI_NEW, [POD_GROUP]) if c.kind == "PodGroup"]
    assert len(podgroups.removed_paths) == 8
    assert {"spec.backoffLimit", "spec.completions", "spec.parallelism"} <= set(podgroups.removed_paths)
    assert podgroups.users == {"gang": ("spec.backoffLimit",)}
    assert podgroups.unserved == ()


def test_kai_default_flips_leave_out_what_the_stack_pins() -> None:
    flips = {f.path for f in default_flips(values_of(KAI_OLD), values_of(KAI_NEW), {})}
    assert "global.registry" in flips
    pinned = {
        f.path for f in default_flips(values_of(KAI_OLD), values_of(KAI_NEW), {"global": {"registry": "x"}})
    }
    assert "global.registry" not in pinned


def test_the_kai_worked_example_section() -> None:
    lines = upgrade_section(
        all_records()["kai-scheduler"],
        "v0.13.0",
        "v0.17.0",
        KAI_OLD,
        KAI_NEW,
        stack_values=V013_VALUES,
        plan_objects=[POD_GROUP],
    )
    text = "\n".join(lines)
    assert "Verdict: **manual**" in text
    steps = [line.split(":")[0] for line in lines if line.startswith("1. ")]
    assert steps == ["1. crds", "1. operator", "1. objects"]
    assert (
        "`admission.gpuPodRuntimeClassName` -> renamed `admission.gpuFractionRuntimeClassName` (**set by this stack**)"
        in text
    )
    assert "used by PodGroup `gang`: spec.backoffLimit" in text


def test_kueue_0_20_record() -> None:
    kueue = all_records()["kueue"]
    blocked = kueue.find(version("0.19.2"), version("0.20.3"))
    assert blocked is not None and blocked.verdict == "blocked"
    fixed = kueue.find(version("0.19.2"), version("0.20.6"))
    assert fixed is not None and fixed.verdict == "manual"
    assert fixed.steps[0].phase == "migrate" and "v1beta1" in fixed.steps[0].do
    patch = kueue.find(version("0.19.2"), version("0.19.5"))
    assert patch is not None and patch.verdict == "safe" and patch.evidence
    assert kueue.find(version("0.19.2"), version("0.21.0")) is None


@pytest.mark.parametrize("chart_name", ["kai-scheduler"])
def test_plan_sections_appear_only_when_a_recorded_chart_version_changes(chart_name: str) -> None:
    def plan(ver: str) -> dict[str, Any]:
        release = {
            "urn": "urn:pulumi:kai::gpu-batch::kubernetes:helm.sh/v3:Release::kai-release",
            "type": "kubernetes:helm.sh/v3:Release",
            "inputs": {
                "chart": "oci://ghcr.io/nvidia/kai-scheduler/kai-scheduler",
                "version": ver,
                "values": V013_VALUES,
            },
        }
        return {
            "resources": [
                release,
                {"urn": "u2", "type": "kubernetes:scheduling.run.ai/v2alpha2:PodGroup", "inputs": POD_GROUP},
            ]
        }

    assert upgrade_sections(plan("v0.17.0"), plan("v0.17.0")) == []
    text = "\n".join(upgrade_sections(plan("v0.13.0"), plan("v0.17.0")))
    assert f"### Upgrade: {chart_name} v0.13.0 -> v0.17.0" in text


def test_a_gke_minor_upgrade_lists_the_kueue_templates_that_start_rendering() -> None:
    """Kueue 0.19.2's MutatingAdmissionPolicy templates are gated on the API being served."""
    kueue = VENDOR / "kueue-0.19.2"
    assert {g.api for g in gates(kueue)} >= {"admissionregistration.k8s.io/v1/MutatingAdmissionPolicy"}
    assert flipped(kueue, (1, 33), (1, 35)) == []
    (line,) = flipped(kueue, (1, 35), (1, 36))
    assert "templates/map/manifests.yaml" in line and "starts rendering them at 1.36" in line

    cluster = config_value("prod", "gpu-batch:cluster")
    before = unedited_run("prod")
    after = run_stack("prod", {"gpu-batch:cluster": {**cluster, "minMasterVersion": "1.36.1-gke.100"}})
    text = "\n".join(
        cluster_minor_sections(
            plan_document("gpu-batch", "prod", before.resources, before.outputs),
            plan_document("gpu-batch", "prod", after.resources, after.outputs),
        )
    )
    assert "### Upgrade: GKE 1.33 -> 1.36" in text
    assert "release `kueue-release`" in text and "MutatingAdmissionPolicy" in text


def test_a_blocked_kueue_upgrade_fails_the_base_preview() -> None:
    """0.19.2 -> 0.20.3 is blocked (kueue#18411): ``make preview BASE=...`` exits 1 on it."""

    def plan(ver: str) -> dict[str, Any]:
        release = {
            "urn": "urn:pulumi:dev::gpu-batch::gpu-batch:kueue:Install$kubernetes:helm.sh/v3:Release::kueue-release",
            "type": "kubernetes:helm.sh/v3:Release",
            "inputs": {"chart": "oci://registry.k8s.io/kueue/charts/kueue", "version": ver, "values": {}},
        }
        return {"resources": [release]}

    assert blocked_upgrades(plan("0.19.2"), plan("0.20.3")) == ["kueue 0.19.2 -> 0.20.3"]
    assert blocked_upgrades(plan("0.19.2"), plan("0.20.6")) == []
    assert blocked_upgrades(plan("0.19.2"), plan("0.19.2")) == []
