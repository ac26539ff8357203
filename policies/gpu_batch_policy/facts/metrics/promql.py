"""The metric names a PromQL expression reads, with the parser Prometheus users keep.

promql-parser (PyPI, Python binding of GreptimeTeam's Rust ``promql-parser``, which follows
Prometheus' own grammar) parses the string; a syntax error is a ``ValueError`` whose message is the
parser's.  Names are read from every ``VectorSelector`` (``name``, or an ``__name__="..."``
matcher), including those under ``MatrixSelector``, calls, aggregations, binary and sub-queries.
A selector that picks metrics only by regex on ``__name__`` yields no name (nothing to check).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import promql_parser

# Cloud Monitoring dashboard variables in PromQL (Cloud Monitoring docs, "Create and manage
# dashboard variables": ``${name}`` inside a selector's braces expands to that label's matcher,
# ``${name.value}`` to the bare value; ``${__interval}`` is the chart's alignment period).  They
# are expanded to a neutral form of the same syntax before parsing, so a valid dashboard query
# parses; only dashboards use them.
_TIME_VARIABLE = re.compile(r"\$\{__(?:interval|rate_interval|range)\}")
_VALUE_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\.value\}")
_MATCHER_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def expand_dashboard_variables(query: str) -> str:
    """``query`` with Cloud Monitoring dashboard variables replaced by well-formed stand-ins."""
    query = _TIME_VARIABLE.sub("5m", query)
    query = _VALUE_VARIABLE.sub(r"\1", query)
    return _MATCHER_VARIABLE.sub(r'\1=~".*"', query)


@dataclass(frozen=True)
class Parsed:
    names: tuple[str, ...]
    error: str | None = None


def _walk(node: object, out: list[str]) -> None:
    if isinstance(node, promql_parser.VectorSelector):
        if node.name:
            out.append(node.name)
        else:
            out.extend(
                m.value
                for m in node.matchers.matchers
                if m.name == "__name__" and m.op == promql_parser.MatchOp.Equal
            )
        return
    if isinstance(node, promql_parser.MatrixSelector):
        _walk(node.vector_selector, out)
        return
    if isinstance(node, promql_parser.BinaryExpr):
        _walk(node.lhs, out)
        _walk(node.rhs, out)
        return
    if isinstance(node, promql_parser.Call):
        for arg in node.args:
            _walk(arg, out)
        return
    if isinstance(node, promql_parser.AggregateExpr):
        _walk(node.expr, out)
        if node.param is not None:
            _walk(node.param, out)
        return
    if isinstance(node, (promql_parser.ParenExpr, promql_parser.UnaryExpr, promql_parser.SubqueryExpr)):
        _walk(node.expr, out)


def metric_names(query: str) -> Parsed:
    """The metric names ``query`` reads, in order of appearance without repeats, or its parse error."""
    try:
        expr = promql_parser.parse(query)
    except ValueError as error:
        return Parsed((), str(error).splitlines()[0] if str(error) else "does not parse")
    found: list[str] = []
    _walk(expr, found)
    return Parsed(tuple(dict.fromkeys(found)))
