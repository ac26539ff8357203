"""``make whatif-compiled``: build (or find) the what-if's simulator modules compiled with mypyc.

Once per machine and per source: the build goes to ``whatif.compiled``'s cache folder for the
sources' key (see its docstring), so the next run of ``python -m whatif`` or
``python -m benchmarks.whatif_bench`` loads it, and a changed source is a miss until this runs
again.  The modules are compiled by mypyc's ``mypycify`` (the pinned ``mypy``, with this
checkout's ``pyproject.toml`` mypy settings) and setuptools' ``build_ext``, in a child process,
into a staging folder renamed into place with ``build.json`` last; an exclusive ``flock`` on
``<key>.lock`` keeps two builders from building one key twice (as ``tests/live/toolchain.py``).
After a build, all but the :data:`KEEP` newest builds are dropped.

Where it cannot build (no C compiler, no ``Python.h``, no mypyc or setuptools), one line says so
and the what-if runs as pure Python; a build that fails with all of them present is an error
(exit 1, the log's tail): a module no longer compiles.  Prints one line: where the build is and
what it cost.
"""

from __future__ import annotations

import fcntl
import importlib.machinery
import importlib.util
import json
import os
import resource
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

from whatif.compiled import MODULES, RECORD, ROOT, cache_root, source_key, source_path, toolchain

GROUP = "whatif_compiled"  # mypyc's shared library: whatif_compiled__mypyc
# builds kept (3 MB each): every edit of a compiled source makes another, and several checkouts of
# one machine (worktrees) each use their own
KEEP = 10


def cannot_build() -> str | None:
    """Why no build can be made here, or None."""
    cc = shlex.split(str(sysconfig.get_config_var("CC") or "cc"))[0]
    if shutil.which(cc) is None:
        return f"no C compiler ({cc})"
    header = Path(sysconfig.get_paths()["include"]) / "Python.h"
    if not header.is_file():
        return f"no {header.name} for this Python (its development headers)"
    for package in ("mypyc", "setuptools"):
        if importlib.util.find_spec(package) is None:
            return f"Python package {package} not installed"
    return None


def _compile(staging: Path) -> None:
    """In the child, from the checkout: C sources, objects and extensions all under ``staging``."""
    from mypyc.build import mypycify
    from setuptools import setup  # type: ignore[import-untyped]

    paths = [str(source_path(m).relative_to(ROOT)) for m in MODULES]
    options = ["--config-file", "pyproject.toml", "--cache-dir", str(staging / "mypy-cache")]
    extensions = mypycify(paths + options, target_dir=str(staging / "c"), group_name=GROUP)
    build = ["build_ext", "--build-lib", str(staging / "lib"), "--build-temp", str(staging / "tmp")]
    setup(name=GROUP, ext_modules=extensions, script_args=[*build, "--parallel", str(os.cpu_count() or 1)])


def _files(lib: Path) -> dict[str, str]:
    """Module name -> extension file (relative to the build folder) for every built extension."""
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    files = {}
    for path in sorted(lib.rglob("*" + suffix)):
        rel = path.relative_to(lib)
        files[".".join(rel.with_name(rel.name[: -len(suffix)]).parts)] = str(Path(lib.name) / rel)
    return files


def build() -> tuple[Path, dict[str, object]]:
    """The build folder for the sources now and its record, built under the key's lock if absent."""
    key = source_key()
    folder = cache_root() / key
    if (folder / RECORD).is_file():
        return folder, json.loads((folder / RECORD).read_text())
    cache_root().mkdir(parents=True, exist_ok=True)
    with (cache_root() / f"{key}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (folder / RECORD).is_file():  # another builder finished while we waited
            return folder, json.loads((folder / RECORD).read_text())
        staging = Path(tempfile.mkdtemp(prefix=f".{key}.", dir=cache_root()))
        log = staging / "build.log"
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.monotonic()
        with log.open("w") as out:
            child = subprocess.run(
                [sys.executable, "-m", "benchmarks.whatif_compile", "--into", str(staging)],
                cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, check=False,
            )  # fmt: skip
        files = _files(staging / "lib")
        missing = [m for m in MODULES if m not in files]
        if child.returncode != 0 or missing or source_key() != key:
            failed = cache_root() / f"{key}.failed.log"
            shutil.copyfile(log, failed)
            shutil.rmtree(staging, ignore_errors=True)
            why = "the sources changed during the build" if source_key() != key else f"see {failed}"
            raise RuntimeError(f"mypyc build failed ({why}): {failed.read_text()[-2000:]}")
        for scratch in ("c", "tmp", "mypy-cache"):
            shutil.rmtree(staging / scratch)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        record: dict[str, object] = {
            "toolchain": toolchain(),
            "files": files,
            "wall_s": round(time.monotonic() - start, 1),
            "cpu_s": round((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), 1),
            "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        (staging / RECORD).write_text(json.dumps(record, indent=1) + "\n")
        if folder.exists():  # a half-folder without its record
            shutil.rmtree(folder)
        staging.rename(folder)
    prune()
    return folder, record


def prune(keep: int = KEEP) -> list[Path]:
    """Drop all but the ``keep`` most recently built folders (by their record); what was dropped.
    A process that loaded a dropped build keeps it (its files stay mapped)."""
    built = sorted(cache_root().glob(f"*/{RECORD}"), key=lambda r: r.stat().st_mtime, reverse=True)
    dropped = [record.parent for record in built[keep:]]
    for folder in dropped:
        shutil.rmtree(folder, ignore_errors=True)
    return dropped


def main(argv: list[str]) -> int:
    if argv[:1] == ["--into"]:
        _compile(Path(argv[1]))
        return 0
    why = cannot_build()
    if why is not None:
        print(f"whatif-compiled: not built ({why}): the what-if runs as pure Python")
        return 0
    try:
        folder, record = build()
    except RuntimeError as failure:
        print(f"whatif-compiled: {failure}", file=sys.stderr)
        return 1
    print(
        f"whatif-compiled: {folder} ({len(MODULES)} modules; built in {record['wall_s']} s wall, "
        f"{record['cpu_s']} s CPU, at {record['built_at']})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
