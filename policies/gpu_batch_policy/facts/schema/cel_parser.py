"""cel-python's LALR parser, loaded from lark's own on-disk cache instead of rebuilt per process.

Why (issue 44): ``celpy.Environment()`` builds its parser from ``celpy/cel.lark`` with lark's
LALR analysis on first use, ~0.5 s of CPU in every process that checks CRD rules: the preview
and the pack process each pay it on every preview, competing for the same cores.  lark can save
a built LALR parser and load it back (``lark.Lark(..., cache=<file>)``, lark 1.3.1
``lark/lark.py`` ``Lark.__init__``): the file's first line is the SHA-256 of the grammar, every
hashable option, lark's version and CPython's minor, so a changed grammar, option or version is
a rebuild that rewrites the file; a file that does not load (truncated, damaged, written by a
concurrent process) is caught there and rebuilt too.

The options are exactly those of ``celpy.celparser.CELParser.__init__`` (cel-python 0.5.0) with
the default runner's ``tree_class`` (``InterpretedRunner.tree_node_class``, ``lark.Tree``), so
cel-python parses with the same parser it would have built; it keeps a parser it finds already
set on ``CELParser.CEL_PARSER``.  The file lives in the render cache's folder (outside the
checkout, ``gpu_batch_policy.facts.charts.render_cache.cache_dir``), one per lark version and
CPython minor, so the folder gains a bounded handful of files; a folder that cannot be written
only costs the build.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import lark
from celpy import celparser

from ..charts import render_cache


def parser_file(folder: Path | None = None) -> Path:
    """Where the parser is kept: one file per lark version and CPython minor."""
    minor = "".join(str(n) for n in sys.version_info[:2])
    return (folder or render_cache.cache_dir()) / f"cel-parser-lark{lark.__version__}-py{minor}.lark"


def build(grammar: str, cache: Path | None) -> lark.Lark:
    """cel-python's parser for ``grammar``, through lark's cache at ``cache`` when given."""
    return lark.Lark(
        grammar,
        parser="lalr",
        start="expr",
        debug=True,
        g_regex_flags=re.M,
        lexer_callbacks={"IDENT": celparser.CELParser.ambiguous_literals},
        propagate_positions=True,
        maybe_placeholders=False,
        priority="invert",
        tree_class=lark.Tree,
        cache=str(cache) if cache is not None else False,
    )


def install(folder: Path | None = None) -> None:
    """Give cel-python its parser (loaded or built and saved) unless it already has one."""
    if celparser.CELParser.CEL_PARSER is not None:
        return
    grammar = (Path(celparser.__file__).parent / "cel.lark").read_text(encoding="utf-8")
    path: Path | None = parser_file(folder)
    try:
        assert path is not None
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError:
        path = None
    celparser.CELParser.CEL_PARSER = build(grammar, path)
