"""The pack's layout is its architecture (issue 38): runtime → rules → facts → primitives.

A module may import its own layer and the layers below it, never one above: a fact that imported
a rule would make facts depend on how findings are worded, and a primitive that read a stack
would no longer be reusable by ``stacks/`` and ``preview/``.  Inside the rules layer the author's
kit (``rules/kit``) sits below the rule modules.  Every import is counted, also the ones inside
functions and under ``TYPE_CHECKING``, so the direction cannot be hidden from this test.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACK = Path(__file__).resolve().parents[2] / "policies" / "gpu_batch_policy"
LAYERS = ("primitives", "facts", "rules", "runtime")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACK).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def rank(module: str) -> tuple[int, int]:
    """(layer, sub-rank): the kit ranks below the rule modules of its layer."""
    parts = module.split(".")
    layer = LAYERS.index(parts[0])
    return layer, 0 if parts[:2] == ["rules", "kit"] else 1


def imported_modules(source: str, module: str, is_package: bool) -> list[str]:
    """Pack-relative names of the modules ``source`` imports (relative or ``gpu_batch_policy.``)."""
    package = module.split(".") if is_package else module.split(".")[:-1]
    if module == "":
        package = []
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1] if node.level > 1 else package
                target = [*base, *(node.module.split(".") if node.module else [])]
            elif node.module and node.module.split(".")[0] == "gpu_batch_policy":
                target = node.module.split(".")[1:]
            else:
                continue
            found.append(".".join(target))
            found += [".".join([*target, alias.name]) for alias in node.names]
        elif isinstance(node, ast.Import):
            found += [
                a.name[len("gpu_batch_policy.") :]
                for a in node.names
                if a.name.startswith("gpu_batch_policy.")
            ]
    return found


def known_modules() -> set[str]:
    return {module_name(p) for p in PACK.rglob("*.py")}


def violations(module: str, source: str, is_package: bool, known: set[str]) -> list[str]:
    """Imports of ``module`` that point up the layers (only names that are modules of the pack)."""
    if module == "" or module.split(".", maxsplit=1)[0] not in LAYERS:
        return []
    out = []
    for target in imported_modules(source, module, is_package):
        if target not in known or target == "" or target.split(".")[0] not in LAYERS:
            continue
        if rank(target) > rank(module) and not target.startswith(module + "."):
            out.append(f"{module} imports {target}")
    return out


def test_the_top_level_holds_only_the_layers() -> None:
    entries = {p.name for p in PACK.iterdir() if p.name != "__pycache__"}
    assert entries == {"__init__.py", *LAYERS}


def test_no_module_imports_up_the_layers() -> None:
    known = known_modules()
    found = [
        v
        for path in sorted(PACK.rglob("*.py"))
        for v in violations(module_name(path), path.read_text(), path.name == "__init__.py", known)
    ]
    assert found == []


def test_the_check_catches_an_upward_import() -> None:
    """A fact that imports a rule, a primitive that reads a stack, a kit module that imports a
    rule module, and rules that import the runtime: each is caught, relative or absolute."""
    known = known_modules()
    cases = {
        (
            "facts.pools",
            "from ..rules.kueue.capacity import POLICIES\n",
        ): "facts.pools imports rules.kueue.capacity",
        (
            "primitives.values",
            "from gpu_batch_policy.facts import pools\n",
        ): "primitives.values imports facts.pools",
        (
            "rules.kit.report",
            "def f():\n    from ..kueue import api\n",
        ): "rules.kit.report imports rules.kueue.api",
        (
            "rules.gke.dws",
            "from ...runtime.registry import ALL_POLICIES\n",
        ): "rules.gke.dws imports runtime.registry",
    }
    for (module, source), expected in cases.items():
        assert expected in violations(module, source, False, known), module
    # the allowed direction stays allowed
    assert (
        violations(
            "rules.gke.dws", "from ..kit.report import Reporter\nfrom ...facts import pools\n", False, known
        )
        == []
    )
