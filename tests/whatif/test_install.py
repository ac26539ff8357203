"""``python -m whatif`` after the README's install step (``pip install -r requirements.txt``).

Complete, not sampled: every third-party module that ``whatif/`` or the policy pack it imports
in-process (``policies/gpu_batch_policy``) imports anywhere is provided by a distribution pinned in
``requirements.txt`` or by one of those pins' own dependencies -- so a new import without its pin
fails here (``pulumi_policy`` was missing).  And a package that is missing anyway is one line.
"""

from __future__ import annotations

import ast
import importlib.metadata as md
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LOCAL = {"whatif", "gpu_batch_policy", "tests", "stacks", "preview", "components", "benchmarks"}


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _imported_top_levels() -> set[str]:
    names: set[str] = set()
    for root in (ROOT / "whatif", ROOT / "policies" / "gpu_batch_policy"):
        for path in root.rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Import):
                    names.update(a.name.split(".")[0] for a in node.names)
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names.add(node.module.split(".")[0])
    return {n for n in names if n not in sys.stdlib_module_names and n not in LOCAL}


def _installed_by_requirements() -> set[str]:
    """The distributions ``requirements.txt`` pins, and everything they require, transitively."""
    pins = [
        line.split("==")[0].strip()
        for line in (ROOT / "requirements.txt").read_text().splitlines()
        if "==" in line and not line.lstrip().startswith("#")
    ]
    seen: set[str] = set()
    todo = [_norm(p) for p in pins]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        try:
            requires = md.requires(name) or []
        except md.PackageNotFoundError:
            continue
        for req in requires:
            if "extra ==" in req:
                continue
            todo.append(_norm(re.split(r"[ ;<>=!~\[(]", req, maxsplit=1)[0]))
    return seen


def test_every_module_the_whatif_imports_comes_with_requirements_txt() -> None:
    providers = md.packages_distributions()
    installed = _installed_by_requirements()
    missing = {}
    for module in sorted(_imported_top_levels()):
        dists = providers.get(module, [])
        if not {_norm(d) for d in dists} & installed:
            missing[module] = dists
    assert missing == {}


def test_a_missing_package_is_one_line_naming_it() -> None:
    code = (
        "import runpy, sys; sys.modules['pulumi_policy'] = None; "
        "sys.argv = ['whatif', '--help']; runpy.run_module('whatif', run_name='__main__')"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert "'pulumi_policy' is not installed" in done.stderr
    assert "pip install -r requirements.txt" in done.stderr
