"""The project's cache root is one function, and every cache outside the checkout hangs off it.

``cache_home()`` (``policies/gpu_batch_policy/primitives/cache_home.py``) is
``$XDG_CACHE_HOME/gpu-batch``, with ``$HOME/.cache`` when XDG_CACHE_HOME is unset or empty.  Its
five callers each keep their own override variable (an empty one counts as unset) and
sub-folder: checked here for every combination, with HOME and XDG_CACHE_HOME in ``tmp_path``,
comparing the paths as text.  ``whatif.compiled`` imports it before the simulator's modules
(``python -m whatif`` activates the mypyc build first), so importing it must bring in none of
them, nor any third-party package.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from gpu_batch_policy.facts.charts import render_cache
from gpu_batch_policy.primitives.cache_home import cache_home

from benchmarks import kueue_oracle, suite_time
from tests.live import toolchain
from whatif import compiled

ROOT = Path(__file__).resolve().parent.parent
XDG_STATES = ("unset", "empty", "set")
OVERRIDE_STATES = ("unset", "empty", "set")

# caller -> (what resolves its folder, its override variable, its folder in the root without one)
CALLERS: dict[str, tuple[Callable[[], Path], str, tuple[str, ...]]] = {
    "render cache": (render_cache.cache_dir, render_cache.RENDER_CACHE_ENV, ("renders",)),
    "mypyc build": (compiled.cache_root, "GPU_BATCH_WHATIF_MYPYC_CACHE", ("whatif-mypyc",)),
    "live tools": (toolchain.cache_root, "GPU_BATCH_LIVE_CACHE", ("live",)),
    "test durations": (
        suite_time.durations_path,
        suite_time.DURATIONS_ENV,
        ("test-durations", "make-test.xml"),
    ),
    "kueue oracle": (kueue_oracle.cache_root, kueue_oracle.ORACLE_CACHE_ENV, ("oracle",)),
}
# every override variable a caller reads, cleared first so the machine's own settings do not leak in
OVERRIDES = (*(env for _, env, _ in CALLERS.values()), render_cache.CHART_CACHE_ENV)


def _environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, xdg: str) -> Path:
    """Set HOME and XDG_CACHE_HOME as ``xdg`` says; the root the XDG Base Directory rule gives."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for env in OVERRIDES:
        monkeypatch.delenv(env, raising=False)
    if xdg == "unset":
        monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    else:
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg") if xdg == "set" else "")
    return (tmp_path / "xdg" if xdg == "set" else tmp_path / "home" / ".cache") / "gpu-batch"


@pytest.mark.parametrize("xdg", XDG_STATES)
def test_the_root_follows_xdg_cache_home_else_home(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, xdg: str
) -> None:
    expected = _environment(monkeypatch, tmp_path, xdg)
    assert str(cache_home()) == str(expected)


@pytest.mark.parametrize("caller", sorted(CALLERS))
@pytest.mark.parametrize("override", OVERRIDE_STATES)
@pytest.mark.parametrize("xdg", XDG_STATES)
def test_each_cache_keeps_its_override_and_folder_under_the_root(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, xdg: str, override: str, caller: str
) -> None:
    resolve, env, folder = CALLERS[caller]
    root = _environment(monkeypatch, tmp_path, xdg)
    if override != "unset":
        monkeypatch.setenv(env, str(tmp_path / "elsewhere") if override == "set" else "")
    expected = tmp_path / "elsewhere" if override == "set" else root.joinpath(*folder)
    assert str(resolve()) == str(expected)


@pytest.mark.parametrize("xdg", XDG_STATES)
def test_the_render_cache_sits_beside_the_chart_cache_before_the_root(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, xdg: str
) -> None:
    _environment(monkeypatch, tmp_path, xdg)
    monkeypatch.setenv(render_cache.CHART_CACHE_ENV, str(tmp_path / "c" / "charts"))
    assert str(render_cache.cache_dir()) == str(tmp_path / "c" / "renders")
    monkeypatch.setenv(render_cache.RENDER_CACHE_ENV, str(tmp_path / "r"))
    assert str(render_cache.cache_dir()) == str(tmp_path / "r")


def test_importing_the_compiled_loader_brings_no_simulator_module_nor_third_party_package() -> None:
    code = (
        "import json, sys; before = set(sys.modules); import whatif.compiled; "
        "print(json.dumps(sorted(set(sys.modules) - before)))"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    loaded = set(json.loads(done.stdout))
    assert "gpu_batch_policy.primitives.cache_home" in loaded
    assert not loaded & set(compiled.MODULES)
    assert {m.split(".")[0] for m in loaded} - set(sys.stdlib_module_names) == {"whatif", "gpu_batch_policy"}
