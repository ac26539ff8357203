"""Whether a PromQL query keeps the series of different clusters apart.

Every series GKE Managed Service for Prometheus stores carries the ``prometheus_target``
resource labels, ``cluster`` among them (GMP docs, "Query using Cloud Monitoring": resource
labels are queried like metric labels).  Prometheus' semantics (prometheus/prometheus
``promql/engine.go``): an aggregation keeps exactly its ``by (...)`` labels, or drops its
``without (...)`` ones, and ``sum(x)`` keeps none; a binary operation between two vectors
matches on every label, on its ``on (...)`` labels only, or on all but its ``ignoring (...)``
ones.  So a query tells clusters apart when no step drops ``cluster`` -- or when every selector
picks one cluster itself (``cluster="..."``), so nothing of another cluster is ever read.

:func:`merges_clusters` answers with the first step that merges them, or None.
"""

from __future__ import annotations

import promql_parser as pp

LABEL = "cluster"


def _pinned(node: object) -> bool:
    """The selector ``node`` matches ``cluster`` by equality."""
    if isinstance(node, pp.VectorSelector):
        return any(m.name == LABEL and m.op == pp.MatchOp.Equal for m in node.matchers.matchers)
    return False


def _children(node: object) -> list[object]:
    if isinstance(node, pp.MatrixSelector):
        return [node.vector_selector]
    if isinstance(node, pp.AggregateExpr):
        return [node.expr]
    if isinstance(node, pp.BinaryExpr):
        return [node.lhs, node.rhs]
    if isinstance(node, pp.Call):
        return list(node.args)
    if isinstance(node, (pp.ParenExpr, pp.UnaryExpr, pp.SubqueryExpr)):
        return [node.expr]
    return []


def _selects(node: object) -> bool:
    """``node`` reads some series (a literal reads none)."""
    if isinstance(node, pp.VectorSelector):
        return True
    return any(_selects(c) for c in _children(node))


def _merging_step(node: object) -> str | None:
    if isinstance(node, pp.AggregateExpr):
        modifier = node.modifier
        op = str(node.op).rsplit(".", 1)[-1].lower()
        if modifier is None:
            return f"{op}(...) with no by ({LABEL})"
        if modifier.type == pp.AggModifierType.By and LABEL not in modifier.labels:
            return f"{op} by ({', '.join(modifier.labels)})"
        if modifier.type == pp.AggModifierType.Without and LABEL in modifier.labels:
            return f"{op} without ({LABEL})"
    if isinstance(node, pp.BinaryExpr) and node.modifier is not None and node.modifier.matching is not None:
        matching = node.modifier.matching
        both = _selects(node.lhs) and _selects(node.rhs)
        include = matching.type == pp.LabelModifierType.Include
        if both and (
            (include and LABEL not in matching.labels) or (not include and LABEL in matching.labels)
        ):
            word = "on" if include else "ignoring"
            return f"{word}({', '.join(matching.labels)})"
    for child in _children(node):
        found = _merging_step(child)
        if found is not None:
            return found
    return None


def merges_clusters(query: str) -> str | None:
    """The step of ``query`` that adds up or matches series across clusters; None when it keeps
    them apart (or reads one cluster only).  Raises ``ValueError`` when it does not parse."""
    node = pp.parse(query)
    if _selects(node) and _all_pinned(node):
        return None
    return _merging_step(node)


def _all_pinned(node: object) -> bool:
    if isinstance(node, pp.VectorSelector):
        return _pinned(node)
    return all(_all_pinned(c) for c in _children(node) if _selects(c))
