"""The disk cache of Helm output (issue 44, item 2): a changed input is a miss, an unchanged one a
hit, a damaged entry a miss, the folder bounded, and no secret written.

Renders are counted with a spy on the engine call (``helm_python.Chart.render``); the in-memory
memo is cleared before each second render, so every hit here comes from the disk."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import helm_python
import pytest
from gpu_batch_policy.facts.charts import ChartResolver, reference_from_release, render, render_cache
from gpu_batch_policy.facts.charts.render import render_chart

from preview.postrender import post_render
from preview.project import PROJECT_DIR
from tests.stack_runner import ROOT

MIRROR = ROOT.parent / "shared" / "vendor"
KUEUE = ("kueue", "0.19.2", "oci://registry.k8s.io/kueue/charts/kueue")


@pytest.fixture()
def engine_calls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """A private cache folder; the list of releases the engine rendered."""
    monkeypatch.setenv(render_cache.RENDER_CACHE_ENV, str(tmp_path / "renders"))
    calls: list[str] = []
    real = helm_python.Chart.render

    def spy(self: helm_python.Chart, *args: Any, **kwargs: Any) -> dict[str, str]:
        calls.append(str(kwargs.get("name")))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(helm_python.Chart, "render", spy)
    render._RENDERS.clear()
    yield calls
    render._RENDERS.clear()


@pytest.fixture()
def kueue(tmp_path: Path) -> Path:
    if not MIRROR.is_dir():
        pytest.skip("no chart mirror at ../shared/vendor")
    resolved = ChartResolver(tmp_path / "charts", MIRROR, offline=True).resolve(
        reference_from_release(*KUEUE)
    )
    copy = tmp_path / "chart-copy"
    shutil.copytree(resolved, copy)
    return copy


def _render(chart: Path, values: dict[str, Any] | None = None, **kwargs: Any) -> Any:
    options: dict[str, Any] = {"release_name": "kueue", "namespace": "kueue-system", "secrets": ()}
    options.update(kwargs)
    outcome = render_chart(chart, values or {}, **options)
    render._RENDERS.clear()  # the next call reads the disk, not the memo
    return outcome


def test_an_unchanged_render_is_read_back_identical(kueue: Path, engine_calls: list[str]) -> None:
    first = _render(kueue)
    second = _render(kueue)
    assert len(engine_calls) == 1
    assert second == first and len(first.objects) > 10


@pytest.mark.parametrize(
    "change",
    ["values", "name", "namespace"],
)
def test_a_changed_input_is_a_miss(kueue: Path, engine_calls: list[str], change: str) -> None:
    _render(kueue)
    if change == "values":
        _render(kueue, {"controllerManager": {"replicas": 2}})
    elif change == "name":
        _render(kueue, release_name="other")
    else:
        _render(kueue, namespace="elsewhere")
    assert len(engine_calls) == 2
    _render(kueue)
    assert len(engine_calls) == 2, "the first entry is still there"


def test_changed_chart_content_is_a_miss(kueue: Path, engine_calls: list[str]) -> None:
    before = _render(kueue)
    values = kueue / "values.yaml"
    values.write_text(values.read_text(encoding="utf-8").replace("replicas: 1", "replicas: 3", 1), "utf-8")
    after = _render(kueue)
    assert len(engine_calls) == 2
    assert after != before


def test_other_capabilities_are_a_miss(
    kueue: Path, engine_calls: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The SDK renders with the engine's default capabilities: another engine (or another render
    option) is another key."""
    _render(kueue)
    monkeypatch.setattr(render_cache, "engine_identity", lambda: ("0.2.2", "0.2.2", "v4.99.0", "?"))
    _render(kueue)
    assert len(engine_calls) == 2
    monkeypatch.setitem(render.RENDER_OPTIONS, "is_upgrade", False)
    _render(kueue)
    assert len(engine_calls) == 3


@pytest.mark.parametrize("damage", ["truncate", "garbage", "other-key", "empty"])
def test_a_damaged_entry_is_a_miss(kueue: Path, engine_calls: list[str], tmp_path: Path, damage: str) -> None:
    first = _render(kueue)
    (entry,) = (tmp_path / "renders").glob("*.json")
    text = entry.read_text(encoding="utf-8")
    entry.write_text(
        {
            "truncate": text[: len(text) // 2],
            "garbage": "\x00not json",
            "other-key": text.replace(entry.stem, "0" * 64),
            "empty": "",
        }[damage],
        encoding="utf-8",
    )
    assert _render(kueue) == first
    assert len(engine_calls) == 2


def test_a_render_holding_a_secret_is_never_written(
    kueue: Path, engine_calls: list[str], tmp_path: Path
) -> None:
    secret = "s3cr3t-t0ken-value"
    values = {"controllerManager": {"manager": {"image": {"tag": secret}}}}
    _render(kueue, values, secrets={secret})
    _render(kueue, values, secrets=None)  # secrets unknown: not written either
    assert not list((tmp_path / "renders").glob("*.json"))
    assert len(engine_calls) == 2
    _render(kueue, values, secrets={"another-secret"})  # known, and not among the inputs
    entries = list((tmp_path / "renders").glob("*.json"))
    assert len(entries) == 1 and secret in entries[0].read_text(encoding="utf-8")


def test_request_secrets_reach_the_pack_render(kueue: Path, engine_calls: list[str], tmp_path: Path) -> None:
    from gpu_batch_policy.facts.charts.release import render_release

    resolver = ChartResolver(tmp_path / "charts", MIRROR, offline=True)
    values = {"controllerManager": {"manager": {"image": {"tag": "hunter2-secret"}}}}

    def release() -> str:
        outcome = render_release(
            chart=KUEUE[2],
            version=KUEUE[1],
            repo=None,
            release_name="kueue",
            namespace="kueue-system",
            values=values,
            resolver=resolver,
            secrets=render_cache.request_secrets(),
        )
        render._RENDERS.clear()
        return outcome.status

    assert release() == "rendered"  # outside an analyzer call: secrets unknown
    with render_cache.known_secrets({"hunter2-secret"}):
        assert release() == "rendered"
    assert not list((tmp_path / "renders").glob("*.json"))
    with render_cache.known_secrets(set()):
        release()
    assert len(list((tmp_path / "renders").glob("*.json"))) == 1


def test_the_folder_is_bounded_oldest_first(tmp_path: Path) -> None:
    folder = tmp_path / "renders"
    folder.mkdir()
    for i in range(6):
        entry = folder / f"{i:064x}.json"
        entry.write_text("x" * 100, encoding="utf-8")
        os.utime(entry, ns=(i * 10**9, i * 10**9))
    render_cache.evict(folder, max_entries=4, max_bytes=10**6)
    assert sorted(p.stem[-1] for p in folder.glob("*.json")) == ["2", "3", "4", "5"]
    render_cache.evict(folder, max_entries=100, max_bytes=250)
    assert sorted(p.stem[-1] for p in folder.glob("*.json")) == ["4", "5"]


def test_the_cache_lives_outside_the_checkout(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(render_cache.RENDER_CACHE_ENV, raising=False)
    monkeypatch.delenv(render_cache.CHART_CACHE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert render_cache.cache_dir() == tmp_path / "xdg" / "gpu-batch" / "renders"
    monkeypatch.setenv(render_cache.CHART_CACHE_ENV, str(tmp_path / "c" / "charts"))
    assert render_cache.cache_dir() == tmp_path / "c" / "renders"


def test_the_post_renderer_is_part_of_the_key(engine_calls: list[str], tmp_path: Path) -> None:
    from gpu_batch_policy.facts.charts.release import ReleaseRender
    from gpu_batch_policy.facts.charts.render import RenderedObject

    tool = tmp_path / "tool"
    tool.mkdir()
    script = tool / "post"
    counter = tmp_path / "runs"
    script.write_text(f"#!/bin/sh\necho run >> {counter}\ncat\n", encoding="utf-8")
    script.chmod(0o755)
    base = ReleaseRender(
        "rendered",
        objects=(RenderedObject("c/templates/a.yaml", {"kind": "ConfigMap", "metadata": {"name": "a"}}),),
    )

    def runs() -> int:
        return len(counter.read_text(encoding="utf-8").splitlines()) if counter.exists() else 0

    first = post_render(base, str(script), PROJECT_DIR)
    assert post_render(base, str(script), PROJECT_DIR) == first and runs() == 1
    (tool / "patch.yaml").write_text("a: 1\n", encoding="utf-8")  # a file beside it changed
    post_render(base, str(script), PROJECT_DIR)
    assert runs() == 2
    script.write_text(script.read_text(encoding="utf-8") + "\n", encoding="utf-8")  # the executable
    post_render(base, str(script), PROJECT_DIR)
    assert runs() == 3
    other = ReleaseRender(
        "rendered",
        objects=(RenderedObject("c/templates/a.yaml", {"kind": "ConfigMap", "metadata": {"name": "b"}}),),
    )
    post_render(other, str(script), PROJECT_DIR)  # another input
    assert runs() == 4


def test_the_fast_loader_reads_every_pinned_manifest_as_the_safe_loader_does() -> None:
    """The pinned plain manifests are read with libyaml (charts/manifests.py ``LOADER``): the
    same documents as PyYAML's pure-Python safe loader, file by file."""
    import yaml
    from gpu_batch_policy.facts.charts.manifests import (
        LOADER,
        ManifestUnavailableError,
        locked_manifests,
        resolve_manifest,
    )

    if not MIRROR.is_dir():
        pytest.skip("no chart mirror at ../shared/vendor")
    compared = 0
    for entry in locked_manifests().values():
        for path in entry.files:
            if not path.endswith((".yaml", ".yml")):
                continue  # a Terraform template (cluster-toolkit's *.tftpl): not YAML until rendered
            try:
                text = resolve_manifest(entry.key, path).read_text(encoding="utf-8")
            except ManifestUnavailableError:
                continue  # not here: nothing to compare
            assert list(yaml.load_all(text, Loader=LOADER)) == list(yaml.safe_load_all(text)), path
            compared += 1
    assert compared > 10
