"""The mypyc build of the simulator's modules (``whatif.compiled``) gives the same events as the
pure-Python modules, and a changed source is never run compiled (issue 44, item 3).

The pure-Python modules are the reference (Kueue's own scheduler judges them:
``tests/whatif/test_differential_kueue.py``); the compiled ones are an optimisation of the same
sources that must change no event.  The build is made by ``make whatif-compiled`` (a prerequisite
of ``make unit``), never here; without one for these sources the comparison is skipped, and a
build that failed for these sources fails it.  Speed is measured by the benchmark, never here.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import whatif_compile
from benchmarks.whatif_bench import simulation
from whatif import compiled
from whatif.compiled import MODULES, RECORD, ROOT, cache_root, closure, fresh_folder, source_key
from whatif.results import document

WORKLOADS = 4_000  # tests/whatif/test_overloaded_trace_events.py's trace: preemptions are common

_CHILD = """
import json, sys
from whatif.compiled import activate
code = activate()
from benchmarks.whatif_bench import simulation
import whatif.simulator
from whatif.results import document
sim = simulation(int(sys.argv[1]), "overloaded")
doc = document(sim.cluster, sim.run())
json.dump({"code": code, "file": whatif.simulator.__file__, "events": doc["events"], "doc": doc}, open(sys.argv[2], "w"))
"""


def _child(tmp_path: Path, workloads: int, env: dict[str, str] | None = None) -> dict[str, object]:
    out = tmp_path / "child.json"
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(workloads), str(out)],
        cwd=ROOT, capture_output=True, text=True, check=False, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    result: dict[str, object] = json.loads(out.read_text())
    return result


def test_the_compiled_modules_give_every_event_of_the_pure_ones(tmp_path: Path) -> None:
    if fresh_folder() is None:
        failed = cache_root() / f"{source_key()}.failed.log"
        assert not failed.exists(), f"the mypyc build of these sources failed: {failed}"
        pytest.skip(
            f"no mypyc build of these sources ({whatif_compile.cannot_build() or 'make whatif-compiled'})"
        )
    ran = _child(tmp_path, WORKLOADS)
    assert ran["code"] == "compiled"
    assert not str(ran["file"]).endswith(".py")  # the extension from the build, not the source
    sim = simulation(WORKLOADS, "overloaded")
    pure_doc = document(sim.cluster, sim.run())
    pure = pure_doc["events"]
    fast = ran["events"]
    assert isinstance(fast, list)
    assert {"preempted", "inadmissible", "finished"} <= {e["event"] for e in pure}
    assert len(fast) == len(pure)
    differ = [(a, b) for a, b in zip(fast, pure, strict=True) if a != b]
    assert differ[:1] == [], json.dumps(differ[:1])
    # the rest of the ``--json`` document too (``whatif.results`` is compiled since round 13):
    # through JSON, as the child's came
    assert ran["doc"] == json.loads(json.dumps(pure_doc))


def test_without_a_build_of_these_sources_the_modules_are_pure_python(tmp_path: Path) -> None:
    env = {**os.environ, "GPU_BATCH_WHATIF_MYPYC_CACHE": str(tmp_path / "empty")}
    ran = _child(tmp_path, 50, env)
    assert str(ran["code"]).startswith("python (no build")
    assert str(ran["file"]).endswith(".py")


def test_a_changed_source_is_a_miss(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The key covers the compiled modules, the ``whatif`` modules they import and the toolchain;
    a module outside that closure does not move it."""
    root = tmp_path / "checkout"
    modules = closure()
    assert set(MODULES) < set(modules)  # the closure reaches modules that are not compiled
    assert "whatif.errors" in modules and "whatif.status.cli" not in modules
    for module in [*modules, "whatif.status.cli"]:
        target = compiled.source_path(module, root)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(compiled.source_path(module), target)
    monkeypatch.setenv("GPU_BATCH_WHATIF_MYPYC_CACHE", str(tmp_path / "cache"))
    assert source_key(root) == source_key()  # the same sources: the same key
    built = cache_root() / source_key(root)
    built.mkdir(parents=True)
    assert fresh_folder(root) is None  # no record yet: a half-built folder is a miss
    (built / RECORD).write_text("{}")
    assert fresh_folder(root) == built

    outside = compiled.source_path("whatif.status.cli", root)
    outside.write_text(outside.read_text() + "\n# edited\n")
    assert fresh_folder(root) == built

    for module in ("whatif.tree", "whatif.errors"):  # compiled; imported by compiled modules
        source = compiled.source_path(module, root)
        before = source.read_text()
        source.write_text(before + "\n# edited\n")
        assert fresh_folder(root) is None, module
        source.write_text(before)
        assert fresh_folder(root) == built

    monkeypatch.setattr(compiled, "toolchain", lambda: "mypy 0.0; python 0.0")
    assert fresh_folder(root) is None


def test_without_a_compiler_one_line_says_pure_python_and_nothing_is_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("GPU_BATCH_WHATIF_MYPYC_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(shutil, "which", lambda name: None)
    assert whatif_compile.main([]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and "no C compiler" in out and "pure Python" in out
    assert not (tmp_path / "cache").exists()


def test_every_form_of_import_puts_the_module_in_the_key(tmp_path: Path) -> None:
    """What the key reads as imports: parenthesised names with comments, ``import a, b as c``;
    a module outside ``whatif`` or one that does not exist is not a source of the key."""
    package = tmp_path / "whatif"
    package.mkdir()
    for name in ("__init__", "a", "b", "c", "d", "unused"):
        (package / f"{name}.py").write_text("")
    (package / "x.py").write_text(
        "from whatif import (\n    a,  # why\n    b,\n)\nimport os, whatif.c as cc\n"
        "from whatif.d import thing\nfrom whatif import missing\n"
    )
    assert compiled._imported("whatif.x", tmp_path) == {
        "whatif",
        "whatif.a",
        "whatif.b",
        "whatif.c",
        "whatif.d",
    }


def test_old_builds_are_dropped_beyond_the_newest_few(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GPU_BATCH_WHATIF_MYPYC_CACHE", str(tmp_path))
    for age in range(whatif_compile.KEEP + 2):
        folder = tmp_path / f"key{age}"
        folder.mkdir()
        (folder / RECORD).write_text("{}")
        os.utime(folder / RECORD, (1e9 - age, 1e9 - age))  # key0 the newest
    (tmp_path / "half").mkdir()  # no record: another builder's staging, not a build
    dropped = whatif_compile.prune()
    assert sorted(p.name for p in dropped) == [f"key{whatif_compile.KEEP}", f"key{whatif_compile.KEEP + 1}"]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["half", *(f"key{age}" for age in range(whatif_compile.KEEP))]
    )
