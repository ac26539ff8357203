"""Chart resolution: cache, mirror, upstream, and one clear line when all fail."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from gpu_batch_policy.facts.charts import (
    ChartReference,
    ChartResolver,
    ChartUnavailableError,
    UnsupportedChartError,
    reference_from_release,
)
from gpu_batch_policy.facts.charts.resolver import default_mirror

from components.chart_lock import ChartLockError, locked_charts
from tests.stack_runner import ROOT

MIRROR = ROOT.parent / "shared" / "vendor"
KUEUE = ChartReference("kueue", "0.19.2", "oci://registry.k8s.io/kueue/charts/kueue")


def test_references_pin_oci_charts_and_repository_charts() -> None:
    oci = reference_from_release("oci://registry.k8s.io/kueue/charts/kueue", "0.19.2", None)
    assert (oci.name, oci.version, oci.oci, oci.folder) == ("kueue", "0.19.2", True, "kueue-0.19.2")
    repo = reference_from_release("kuberay-operator", "1.7.0", "https://ray-project.github.io/kuberay-helm/")
    assert (repo.name, repo.oci, repo.source) == (
        "kuberay-operator",
        False,
        "https://ray-project.github.io/kuberay-helm/",
    )


@pytest.mark.parametrize(
    ("chart", "version", "repo", "reason"),
    [
        ("kueue", "0.19.2", None, "neither an oci:// reference"),
        ("oci://registry.k8s.io/kueue/charts/kueue", "", None, "no pinned version"),
        ("bitnami/redis", "1.0.0", "https://charts.bitnami.com", "bare chart name"),
        (None, "1.0.0", None, "names no chart"),
    ],
)
def test_references_that_pin_nothing_are_refused_with_the_reason(
    chart: object, version: object, repo: object, reason: str
) -> None:
    with pytest.raises(UnsupportedChartError, match=reason):
        reference_from_release(chart, version, repo)


def test_a_mirror_fills_the_cache_with_a_writable_copy(tmp_path: Path) -> None:
    resolver = ChartResolver(tmp_path / "cache", MIRROR, offline=True)
    folder = resolver.resolve(KUEUE)
    assert folder == tmp_path / "cache" / "kueue-0.19.2"
    assert (folder / "Chart.yaml").is_file()
    assert all(os.access(d, os.W_OK) for d in (folder, *folder.rglob("*")) if d.is_dir())
    # A second resolver (another process) finds it in the cache, even with no mirror at all.
    assert ChartResolver(tmp_path / "cache", None, offline=True).resolve(KUEUE) == folder


def test_a_folder_holding_another_version_is_not_taken_for_the_pinned_chart(tmp_path: Path) -> None:
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    (mirror / "kueue-0.19.3").symlink_to(MIRROR / "kueue-0.19.2", target_is_directory=True)
    resolver = ChartResolver(tmp_path / "cache", mirror, offline=True)
    with pytest.raises(ChartUnavailableError, match=r"cannot resolve chart kueue 0\.19\.3"):
        resolver.resolve(ChartReference("kueue", "0.19.3", KUEUE.source))


def test_nowhere_to_get_it_is_one_line_naming_chart_version_and_both_places(tmp_path: Path) -> None:
    resolver = ChartResolver(tmp_path / "cache", tmp_path / "no-mirror", offline=True)
    with pytest.raises(ChartUnavailableError) as caught:
        resolver.resolve(KUEUE)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("cannot resolve chart kueue 0.19.2 (tried ")
    assert "oci://registry.k8s.io/kueue/charts/kueue" in message
    assert "no-mirror/kueue-0.19.2: not found" in message


def test_an_unreachable_upstream_says_what_the_pull_answered(tmp_path: Path) -> None:
    """Upstream really is tried (no network here: the Helm engine's own error is quoted)."""
    resolver = ChartResolver(tmp_path / "cache", None, offline=False, pull_timeout_s=60)
    reference = ChartReference("kueue", "0.19.2", "oci://registry.invalid/kueue/charts/kueue")
    with pytest.raises(ChartUnavailableError) as caught:
        resolver.resolve(reference)
    assert "oci://registry.invalid/kueue/charts/kueue: " in str(caught.value)
    assert "mirror: none (set GPU_BATCH_CHART_MIRROR)" in str(caught.value)
    # Remembered: the same process does not try the registry again.
    with pytest.raises(ChartUnavailableError) as again:
        resolver.resolve(reference)
    assert again.value is caught.value


def test_a_pull_that_never_answers_is_cut_at_the_deadline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A wedged registry or Helm client costs one line, never a hung preview or pack."""
    from gpu_batch_policy.facts.charts import resolver as module

    monkeypatch.setattr(module, "_PULL_SCRIPT", "import time; time.sleep(60)")
    slow = ChartResolver(tmp_path / "cache", None, offline=False, pull_timeout_s=0.5)
    with pytest.raises(
        ChartUnavailableError, match=r"no answer within 0\.5 s \(set GPU_BATCH_CHART_PULL_TIMEOUT\)"
    ):
        slow.resolve(KUEUE)


def test_the_default_mirror_is_the_workspace_vendor_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GPU_BATCH_CHART_MIRROR", raising=False)
    assert default_mirror() == MIRROR
    monkeypatch.setenv("GPU_BATCH_CHART_MIRROR", "/elsewhere")
    assert default_mirror() == Path("/elsewhere")


def test_the_lock_pins_every_chart_the_mirror_holds_at_that_version() -> None:
    charts = locked_charts()
    assert set(charts) == {
        "kueue",
        "kai-scheduler",
        "kuberay-operator",
        "skypilot",
        "ingress-nginx",
        "gpu-operator",
    }
    for chart in charts.values():
        folder = MIRROR / f"{chart.name}-{chart.version}"
        bundled = [
            p
            for p in MIRROR.glob(f"*/charts/{chart.name}")
            if f"version: {chart.version}" in (p / "Chart.yaml").read_text()
        ]
        assert (folder / "Chart.yaml").is_file() or bundled, chart


def test_a_chart_another_mirrored_chart_bundles_resolves_from_there(tmp_path: Path) -> None:
    """ingress-nginx 4.11.8 is in the mirror only inside skypilot-0.13.0/charts (its Chart.lock)."""
    nginx = locked_charts()["ingress-nginx"]
    resolver = ChartResolver(tmp_path / "cache", MIRROR, offline=True, pull_timeout_s=1)
    found = resolver.resolve(ChartReference(nginx.name, nginx.version, nginx.source))
    assert "version: 4.11.8" in (found / "Chart.yaml").read_text()
    other = ChartReference("ingress-nginx", "9.9.9", nginx.source)
    with pytest.raises(ChartUnavailableError):
        resolver.resolve(other)


def test_a_broken_lock_entry_is_one_line_with_its_key(tmp_path: Path) -> None:
    lock = tmp_path / "charts.lock.yaml"
    lock.write_text("charts:\n  kueue:\n    name: kueue\n    source: oci://x/kueue\n")
    with pytest.raises(
        ChartLockError, match=r"charts\.kueue\.version: got None, expected a non-empty string"
    ):
        locked_charts(lock)
    lock.write_text("charts:\n  kueue: {name: kueue, version: 1.0.0, source: oci://x/other}\n")
    with pytest.raises(ChartLockError, match=r"ending in /kueue"):
        locked_charts(lock)


def test_preview_without_any_chart_source_exits_2_with_one_line(tmp_path: Path) -> None:
    """What a fresh clone with no ../shared and no network sees from ``make preview``."""
    env = {
        **os.environ,
        "GPU_BATCH_CHART_MIRROR": str(tmp_path / "absent"),
        "GPU_BATCH_CHART_CACHE": str(tmp_path / "cache"),
        "GPU_BATCH_CHARTS_OFFLINE": "1",
    }
    run = subprocess.run(
        [sys.executable, "-m", "preview", "--stack", "dev", "--out", str(tmp_path / "build")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 2
    assert run.stdout == ""
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    assert lines[0].startswith("cannot resolve chart ")
    assert "Traceback" not in run.stderr
