"""YAML strings inside chart values, parsed with limits: no aliases, bounded depth and size.

Why: the Kueue controller Configuration (``managerConfig.controllerManagerConfigYaml``) and
SkyPilot's ``apiService.config`` are YAML *strings* any contributor writes.  ``yaml.safe_load``
on them let a 300-byte "billion laughs" alias bomb expand for 30 s and more (1.2 GB at one level
less) and a deeply nested document overflow the composer's recursion (``RecursionError``).

So this loader:

* refuses every alias (``*name``, so also ``<<: *name`` merges): neither chart's default
  values (``../shared/vendor/kueue-0.19.2/values.yaml``, ``skypilot-0.13.0/values.yaml``) nor any
  documented config uses one, and refusing them bounds the work by the text's length, where a
  bounded expansion would still need a cost model;
* stops at :data:`MAX_DEPTH` levels of nesting while composing, before Python's recursion limit;
* refuses strings over :data:`MAX_BYTES` before parsing (Helm stores a release's values in one
  Secret, which the API server limits to 1 MiB; the pack's limit is well below it, because the
  pure-Python parser must also stay fast);

and reports each as :class:`YamlLimitError`, whose message says which limit was hit.
"""

from __future__ import annotations

from typing import Any

import yaml
from yaml.events import AliasEvent
from yaml.nodes import Node

MAX_BYTES = 256 * 1024
MAX_DEPTH = 64


class YamlLimitError(yaml.YAMLError):
    """The YAML string is past one of the loader's limits (the message says which)."""


class _LimitedLoader(yaml.SafeLoader):
    """``SafeLoader`` whose composer refuses aliases and counts its nesting depth."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: Node | None, index: Any) -> Node | None:
        events: Any = self  # PyYAML's parser methods are untyped
        if events.check_event(AliasEvent):
            mark = events.peek_event().start_mark
            raise YamlLimitError(
                f"YAML aliases (*name) are not accepted in chart values (line {mark.line + 1})"
            )
        self._depth += 1
        if self._depth > MAX_DEPTH:
            mark = events.peek_event().start_mark
            raise YamlLimitError(f"YAML nested deeper than {MAX_DEPTH} levels (line {mark.line + 1})")
        try:
            composed: Node | None = super().compose_node(parent, index)
            return composed
        finally:
            self._depth -= 1


def load_limited(text: str) -> Any:
    """The one document in ``text``; ``yaml.YAMLError`` (or :class:`YamlLimitError`) if invalid."""
    size = len(text.encode("utf-8", errors="replace"))
    if size > MAX_BYTES:
        raise YamlLimitError(f"YAML string of {size} bytes is over the {MAX_BYTES}-byte limit")
    loader: Any = _LimitedLoader(text)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()
