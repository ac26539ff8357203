"""The 1-based line and column of a config key path in a stack file, from PyYAML's node marks.

A key path is the one :func:`stacks.errors.key_path` writes (``gpu-batch:gpuPools[0].maxNodes``):
the qualified top-level key under ``config:``, then ``.key`` and ``[index]`` steps.  Keys may
themselves hold dots (``nvidia.com/gpu``), so a step matches the longest mapping key that is a
prefix of what is left.  A path that goes deeper than the file (a key the user did not write,
or one a template expanded) resolves to the deepest node that exists: the nearest line the
user wrote.  PyYAML's ``Mark.line``/``Mark.column`` are 0-based (yaml/error.py ``Mark``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml
from gpu_batch_policy.primitives.yaml_loader import SAFE_LOADER


@dataclass(frozen=True)
class Position:
    """Where a finding points: a repository-relative file and a 1-based line and column."""

    file: str
    line: int
    column: int
    # The part of the key path the file really holds ("" when only the file is known).
    found: str = ""


class YamlPositions:
    """A composed YAML document, kept for repeated key-path look-ups."""

    def __init__(self, file: str, text: str) -> None:
        self.file = file
        try:
            self._root: yaml.Node | None = yaml.compose(text, Loader=SAFE_LOADER)
        except yaml.YAMLError:
            self._root = None  # an unreadable file: every look-up points at its first line

    @classmethod
    def read(cls, project_dir: Path, name: str) -> YamlPositions:
        path = project_dir / name
        return cls(name, path.read_text() if path.exists() else "")

    def node_at(self, *keys: str) -> yaml.Node | None:
        """The node under plain mapping keys (``"config"``), or None."""
        node = self._root
        for key in keys:
            node = _value_of(node, key) if node is not None else None
        return node

    def locate(self, path: str, under: tuple[str, ...] = ("config",)) -> Position:
        """The position of ``path`` below the mapping at ``under`` (``config`` of a stack file)."""
        node = self.node_at(*under)
        if node is None:
            return Position(self.file, 1, 1)
        best, found = _walk(node, path)
        if best is None:
            return Position(self.file, 1, 1)
        return Position(self.file, best.line + 1, best.column + 1, found)


def _value_of(node: yaml.Node, key: str) -> yaml.Node | None:
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            if isinstance(k, yaml.ScalarNode) and k.value == key and isinstance(v, yaml.Node):
                return v
    return None


def _walk(node: yaml.Node, path: str) -> tuple[yaml.Mark | None, str]:
    """The start mark of the deepest node ``path`` reaches and the consumed prefix."""
    mark: yaml.Mark | None = None
    rest = path
    first = True
    while rest:
        if isinstance(node, yaml.MappingNode):
            body = rest if first else rest[1:] if rest.startswith(".") else None
            if body is None:
                break
            step = _longest_key(node, body)
            if step is None:
                break
            key, value = step
            mark = key.start_mark
            node = value
            rest = body[len(key.value) :]
        elif isinstance(node, yaml.SequenceNode) and rest.startswith("["):
            close = rest.find("]")
            index = rest[1:close] if close > 0 else ""
            if not index.isdigit() or int(index) >= len(node.value):
                break
            node = node.value[int(index)]
            mark = node.start_mark
            rest = rest[close + 1 :]
        else:
            break
        first = False
    return mark, path[: len(path) - len(rest)]


def _longest_key(node: yaml.MappingNode, body: str) -> tuple[yaml.ScalarNode, yaml.Node] | None:
    best: tuple[yaml.ScalarNode, yaml.Node] | None = None
    for key, value in node.value:
        if not isinstance(key, yaml.ScalarNode):
            continue
        name = str(key.value)
        ends = len(name) == len(body) or body[len(name) : len(name) + 1] in (".", "[")
        if body.startswith(name) and ends and (best is None or len(name) > len(best[0].value)):
            best = (key, value)
    return best
