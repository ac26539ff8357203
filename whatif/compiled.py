"""The simulator's modules compiled with mypyc, used when a build of these very sources exists.

Why (issue 44 item 3): the overloaded benchmark's profile is flat -- no function above 4.5% of the
run -- so what is left is pure Python's cost per call and attribute.  mypyc (shipped in the pinned
``mypy``) compiles the typed modules listed in :data:`MODULES` to C extensions with the same
semantics (the strict typing they already pass is what it compiles against); on the benchmark's
overloaded trace the run takes well under half the CPU (figures: ``whatif/README.md``, "Issue 44
item 3, round 7").  The pure-Python modules stay the reference: tests and in-process callers import
them as they are, and ``tests/whatif/test_compiled_events.py`` runs both on the 4,000-workload
overloaded trace and compares every event.

A build lives outside the checkout, in ``$GPU_BATCH_WHATIF_MYPYC_CACHE``, else ``whatif-mypyc/`` in
the project's cache root (the pack's ``primitives/cache_home.py``), one folder per
:func:`source_key`: the SHA-256 of the compiled modules' sources and of every ``whatif`` module
they import, transitively (compiled code relies on those modules' types too), with the mypy
version and the interpreter (version and extension ABI).  Any change to one of those sources is
another key, so a miss and pure Python, never stale code.  A folder is complete when its
``build.json`` exists (written last); ``make whatif-compiled`` (``python -m
benchmarks.whatif_compile``) builds it.

:func:`activate` (``python -m whatif``, ``python -m benchmarks.whatif_bench``) puts a finder first
on ``sys.meta_path`` that loads the listed modules from the folder; it must run before any of
them is imported.  ``GPU_BATCH_WHATIF_COMPILED=0`` keeps pure Python.  Only the standard library
here, and the pack's stdlib-only ``cache_home`` (its package and ``primitives`` are docstrings):
``python -m whatif`` needs nothing beyond ``requirements.txt``, and imports none of the simulator's
modules before :func:`activate`.
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import importlib.metadata
import importlib.util
import json
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT / "policies") not in sys.path:  # the pack's package, as whatif/pack.py puts it
    sys.path.insert(0, str(ROOT / "policies"))

from gpu_batch_policy.primitives.cache_home import cache_home  # noqa: E402

# the modules a simulation runs through (benchmarks/whatif_bench.py's profile: nominating, flavor
# assignment, preemption searches, the fair-sharing tournament, queues, requeues, the event loop)
MODULES = (
    "whatif.amounts",
    "whatif.capacity",
    "whatif.cluster",
    "whatif.dicts",
    "whatif.fairsharing.ordering",
    "whatif.fairsharing.preemption",
    "whatif.fairsharing.share",
    "whatif.fairsharing.tournament",
    "whatif.fairsharing.verdicts",
    "whatif.flavors",
    "whatif.preemption",
    "whatif.queues",
    "whatif.recurrence",
    "whatif.requeuer",
    "whatif.results",
    "whatif.scheduler",
    "whatif.simulator",
    "whatif.tree",
    "whatif.workload",
)
RECORD = "build.json"
OPT_OUT = "GPU_BATCH_WHATIF_COMPILED"


def cache_root() -> Path:
    """Where builds live (module docstring)."""
    return Path(os.environ.get("GPU_BATCH_WHATIF_MYPYC_CACHE") or cache_home() / "whatif-mypyc")


def source_path(module: str, root: Path = ROOT) -> Path:
    """The source file of ``module`` (a package's ``__init__.py``) under ``root``."""
    base = root.joinpath(*module.split("."))
    return base / "__init__.py" if base.is_dir() else base.with_suffix(".py")


# import statements naming a ``whatif`` module, read as text (``ast`` would cost every
# ``python -m whatif`` ~0.1 s): ``from whatif.x import a, b`` (parenthesised too) and ``import
# whatif.x``; text that only looks like one (in a docstring) can only add to the key
_FROM = re.compile(r"^[ \t]*from[ \t]+(whatif[\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n]*)", re.M)
_IMPORT = re.compile(r"^[ \t]*import[ \t]+([^\n]*)", re.M)


def _imported(module: str, root: Path) -> set[str]:
    """The ``whatif`` modules ``module``'s source imports (a package's imported submodules too)."""
    text = source_path(module, root).read_text()
    names = [m.group(1) for m in _FROM.finditer(text)]
    for m in _FROM.finditer(text):
        for part in re.sub(r"#[^\n]*", "", m.group(2)).strip("()").split(","):
            if part.split():
                names.append(f"{m.group(1)}.{part.split()[0]}")
    for m in _IMPORT.finditer(text):
        names.extend(part.split()[0] for part in m.group(1).split(",") if part.split())
    return {n for n in names if n.split(".")[0] == "whatif" and source_path(n, root).is_file()}


def closure(root: Path = ROOT) -> list[str]:
    """The compiled modules and every ``whatif`` module they import, transitively, sorted."""
    seen: set[str] = set()
    todo = list(MODULES)
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo.extend(_imported(module, root) - seen)
    return sorted(seen)


def toolchain() -> str:
    """The mypy version and interpreter a build is made with and loaded into."""
    try:
        mypy = importlib.metadata.version("mypy")
    except importlib.metadata.PackageNotFoundError:
        mypy = "none"  # no build can exist: the builder needs mypy
    abi = importlib.machinery.EXTENSION_SUFFIXES[0]
    return f"mypy {mypy}; python {sys.version.split()[0]} {sys.implementation.cache_tag} {abi}"


def source_key(root: Path = ROOT) -> str:
    """The cache key of a build of the sources under ``root`` with this toolchain."""
    digest = hashlib.sha256(toolchain().encode() + b"\0" + "\n".join(MODULES).encode() + b"\0")
    for module in closure(root):
        digest.update(module.encode() + b"\0" + source_path(module, root).read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def fresh_folder(root: Path = ROOT) -> Path | None:
    """The complete build of the sources under ``root`` now, or None (a miss)."""
    folder = cache_root() / source_key(root)
    return folder if (folder / RECORD).is_file() else None


class _Finder(importlib.abc.MetaPathFinder):
    """Loads the modules a build lists from its folder, before the checkout's sources."""

    def __init__(self, files: dict[str, Path]) -> None:
        self.files = files

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        file = self.files.get(fullname)
        return None if file is None else importlib.util.spec_from_file_location(fullname, file)


def activate() -> str:
    """Use the compiled modules when a fresh build exists: ``"compiled"``, else ``"python"`` and
    why (for the benchmark's line)."""
    if os.environ.get(OPT_OUT) == "0":
        return f"python ({OPT_OUT}=0)"
    if any(isinstance(f, _Finder) for f in sys.meta_path):
        return "compiled"
    early = [m for m in MODULES if m in sys.modules]
    if early:
        return f"python ({early[0]} imported before activation)"
    folder = fresh_folder()
    if folder is None:
        return "python (no build of these sources: make whatif-compiled)"
    files = json.loads((folder / RECORD).read_text())["files"]
    sys.meta_path.insert(0, _Finder({name: folder / rel for name, rel in files.items()}))
    return "compiled"
