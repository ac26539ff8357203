"""libyaml's loader (``gpu_batch_policy.primitives.yaml_loader.SAFE_LOADER``) reads the project's
YAML as PyYAML's pure-Python ``SafeLoader`` does: the same documents, and the same line and
column for every node (the preview's findings point at them, ``preview.findings.locate``).

Read over every YAML file of the checkout's root (the stack files, ``Pulumi.yaml``,
``charts.lock.yaml``) and the benchmark's 1,000-team stack file."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import yaml
from gpu_batch_policy.primitives.yaml_loader import SAFE_LOADER

from benchmarks.scale import stack_document
from tests.stack_runner import ROOT

TEXTS = {p.name: p.read_text() for p in sorted(ROOT.glob("*.yaml"))}


def _nodes(node: yaml.Node) -> Iterator[tuple[str, int, int, str]]:
    """Every node, depth first: its kind, start line and column, and a scalar's value."""
    value = node.value if isinstance(node, yaml.ScalarNode) else ""
    yield type(node).__name__, node.start_mark.line, node.start_mark.column, value
    if isinstance(node, yaml.MappingNode):
        for key, item in node.value:
            yield from _nodes(key)
            yield from _nodes(item)
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            yield from _nodes(item)


def test_the_fast_loader_is_libyamls_wherever_pyyaml_has_it() -> None:
    assert SAFE_LOADER is (yaml.CSafeLoader if yaml.__with_libyaml__ else yaml.SafeLoader)


@pytest.mark.parametrize("name", [*TEXTS, "Pulumi.t1000.yaml (generated)"])
def test_documents_and_positions_are_the_pure_loaders(name: str) -> None:
    text = TEXTS.get(name) or yaml.safe_dump(stack_document(1000), sort_keys=False)
    assert yaml.load(text, Loader=SAFE_LOADER) == yaml.load(text, Loader=yaml.SafeLoader)
    fast, pure = yaml.compose(text, Loader=SAFE_LOADER), yaml.compose(text, Loader=yaml.SafeLoader)
    assert fast is not None and pure is not None
    assert list(_nodes(fast)) == list(_nodes(pure))


def test_a_broken_file_fails_at_the_same_line_with_either_loader() -> None:
    broken = "config:\n  gpu-batch:teams: [1, 2\n  gpu-batch:cluster: {}\n"
    lines = set()
    for loader in (SAFE_LOADER, yaml.SafeLoader):
        with pytest.raises(yaml.MarkedYAMLError) as error:
            yaml.load(broken, Loader=loader)
        assert error.value.problem_mark is not None
        lines.add(error.value.problem_mark.line)
    assert lines == {2}
