"""cel-python's parser from lark's cache (issue 44): an unchanged grammar is loaded, not analysed
again; a changed grammar is a rebuild; a damaged file is a rebuild, never an error; one file per
lark version and CPython minor; and the loaded parser reads rules as the built one does."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from celpy import celparser
from gpu_batch_policy.facts.schema import cel_parser
from lark.parsers import lalr_analysis

GRAMMAR = (Path(celparser.__file__).parent / "cel.lark").read_text(encoding="utf-8")
RULES = ["self.a > 1 && has(self.b)", "self.all(x, x.name != '') ? 'ok' : \"no\"", "size(self) <= 3u"]


@pytest.fixture()
def analyses(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """One item per LALR analysis lark runs (a build runs some, a load none)."""
    runs: list[int] = []
    real = lalr_analysis.LALR_Analyzer.compute_lalr

    def counting(self: Any) -> None:
        runs.append(1)
        real(self)  # type: ignore[no-untyped-call]  # lark leaves it unannotated

    monkeypatch.setattr(lalr_analysis.LALR_Analyzer, "compute_lalr", counting)
    yield runs


def test_an_unchanged_grammar_is_loaded_and_parses_alike(tmp_path: Path, analyses: list[int]) -> None:
    path = cel_parser.parser_file(tmp_path)
    built = cel_parser.build(GRAMMAR, path)
    once = len(analyses)
    assert once and path.is_file()
    loaded = cel_parser.build(GRAMMAR, path)
    assert len(analyses) == once
    uncached = cel_parser.build(GRAMMAR, None)
    for rule in RULES:
        assert loaded.parse(rule) == built.parse(rule) == uncached.parse(rule)
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]


def test_a_changed_grammar_is_rebuilt(tmp_path: Path, analyses: list[int]) -> None:
    path = cel_parser.parser_file(tmp_path)
    cel_parser.build(GRAMMAR, path)
    once, first = len(analyses), path.read_bytes().splitlines()[0]
    cel_parser.build(GRAMMAR + "\n// another grammar\n", path)
    assert len(analyses) > once  # analysed again (how many analyses a build runs varies)
    assert path.read_bytes().splitlines()[0] != first


@pytest.mark.parametrize("damage", [b"", b"not a digest\n", b"garbage\x00\xff"])
def test_a_damaged_file_is_rebuilt(tmp_path: Path, analyses: list[int], damage: bytes) -> None:
    path = cel_parser.parser_file(tmp_path)
    cel_parser.build(GRAMMAR, path)
    once, intact = len(analyses), path.read_bytes()
    path.write_bytes(damage if damage else intact[: len(intact) // 2])
    parser = cel_parser.build(GRAMMAR, path)
    assert len(analyses) > once  # analysed again (CI saw 2 then 1: how many a build runs varies)
    assert parser.parse(RULES[0]) == cel_parser.build(GRAMMAR, None).parse(RULES[0])


def test_install_keeps_a_parser_cel_python_already_has(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sentinel: Any = object()
    monkeypatch.setattr(celparser.CELParser, "CEL_PARSER", sentinel)
    cel_parser.install(tmp_path)
    assert celparser.CELParser.CEL_PARSER is sentinel
    assert not list(tmp_path.iterdir())


def test_an_unwritable_folder_only_costs_the_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(celparser.CELParser, "CEL_PARSER", None)
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    cel_parser.install(blocked / "renders")
    assert celparser.CELParser.CEL_PARSER is not None
