"""A small PromQL evaluator over in-memory series, for the alert tests.

It evaluates the expression trees promql-parser produces (the parser the pack uses) with
Prometheus' semantics for the constructs the stack's alerts use, cited from prometheus/prometheus
(``promql/engine.go``, ``promql/functions.go``, ``promql/quantile.go``):

- instant selectors with ``=``, ``!=``, ``=~``, ``!~`` matchers (anchored regexes), taking the
  latest sample within the 5-minute lookback;
- range selectors over the left-open window ``(t - range, t]``; ``rate`` / ``increase`` as
  Prometheus computes them (:func:`extrapolated_rate`, a port of ``extrapolatedRate`` for float
  counters; no ``offset`` or ``@``, which raise);
- ``sum`` / ``max`` / ``min`` / ``avg`` / ``count`` with ``by (...)`` or none;
- ``histogram_quantile`` with ``bucketQuantile``'s linear interpolation (the ``+Inf`` bucket
  answers the highest finite bound);
- comparisons against a number (filtering), arithmetic with a number, and ``and``/``or``/
  ``unless`` with ``on(...)``.

Anything else raises, so a test can never pass on a construct this does not evaluate.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import promql_parser as pp

Labels = tuple[tuple[str, str], ...]
LOOKBACK = 300.0


@dataclass
class Series:
    labels: dict[str, str]
    samples: list[tuple[float, float]] = field(default_factory=list)  # (time, value), ascending

    def at(self, t: float) -> float | None:
        latest = None
        for ts, v in self.samples:
            if ts > t:
                break
            if t - ts <= LOOKBACK:
                latest = v
        return latest

    def window(self, t: float, seconds: float) -> list[tuple[float, float]]:
        return [(ts, v) for ts, v in self.samples if t - seconds < ts <= t]


Vector = dict[Labels, float]


def _key(labels: Mapping[str, str]) -> Labels:
    return tuple(sorted(labels.items()))


def _matches(series: Series, selector: pp.VectorSelector) -> bool:
    labels = {**series.labels}
    if selector.name and labels.get("__name__") != selector.name:
        return False
    for m in selector.matchers.matchers:
        have = labels.get(m.name, "")
        if m.op == pp.MatchOp.Equal and have != m.value:
            return False
        if m.op == pp.MatchOp.NotEqual and have == m.value:
            return False
        if m.op == pp.MatchOp.Re and re.fullmatch(m.value, have) is None:
            return False
        if m.op == pp.MatchOp.NotRe and re.fullmatch(m.value, have) is not None:
            return False
    return True


def _without_name(labels: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in labels.items() if k != "__name__"}


class Evaluator:
    def __init__(self, series: list[Series]) -> None:
        self.series = series

    def instant(self, query: str, t: float) -> Vector | float:
        return self._eval(pp.parse(query), t)

    def _eval(self, node: object, t: float) -> Vector | float:
        if isinstance(node, pp.NumberLiteral):
            return node.val
        if isinstance(node, pp.ParenExpr):
            return self._eval(node.expr, t)
        if isinstance(node, pp.VectorSelector):
            out: Vector = {}
            for s in self.series:
                if _matches(s, node):
                    value = s.at(t)
                    if value is not None:
                        out[_key(s.labels)] = value
            return out
        if isinstance(node, pp.Call):
            return self._call(node, t)
        if isinstance(node, pp.AggregateExpr):
            return self._aggregate(node, t)
        if isinstance(node, pp.BinaryExpr):
            return self._binary(node, t)
        raise NotImplementedError(type(node).__name__)

    def _call(self, node: pp.Call, t: float) -> Vector:
        name = node.func.name
        if name in ("rate", "increase"):
            (arg,) = node.args
            assert isinstance(arg, pp.MatrixSelector)
            selector = arg.vector_selector
            if getattr(selector, "offset", None) or getattr(selector, "at", None):
                raise NotImplementedError("offset / @ modifiers")
            seconds = arg.range.total_seconds()
            out: Vector = {}
            for s in self.series:
                if not _matches(s, selector):
                    continue
                value = extrapolated_rate(s.window(t, seconds), t - seconds, t, is_rate=name == "rate")
                if value is not None:
                    out[_key(_without_name(s.labels))] = value
            return out
        if name == "histogram_quantile":
            phi_node, vec_node = node.args
            phi = self._eval(phi_node, t)
            vec = self._eval(vec_node, t)
            assert isinstance(phi, float) and isinstance(vec, dict)
            return _histogram_quantile(phi, vec)
        raise NotImplementedError(name)

    def _aggregate(self, node: pp.AggregateExpr, t: float) -> Vector:
        inner = self._eval(node.expr, t)
        assert isinstance(inner, dict)
        keep: list[str] = []
        if node.modifier is not None:
            assert node.modifier.type == pp.AggModifierType.By, "only by (...) is evaluated"
            keep = list(node.modifier.labels)
        groups: dict[Labels, list[float]] = {}
        for labels, value in inner.items():
            group = tuple((k, v) for k, v in labels if k in keep)
            groups.setdefault(group, []).append(value)
        op = str(node.op).lower()
        reduce: dict[str, Callable[[list[float]], float]] = {
            "sum": sum,
            "max": max,
            "min": min,
            "avg": lambda v: sum(v) / len(v),
            "count": lambda v: float(len(v)),
        }
        fn = next((f for k, f in reduce.items() if op.endswith(k)), None)
        if fn is None:
            raise NotImplementedError(op)
        return {g: fn(v) for g, v in groups.items()}

    def _binary(self, node: pp.BinaryExpr, t: float) -> Vector | float:
        op = str(node.op).lower()
        lhs, rhs = self._eval(node.lhs, t), self._eval(node.rhs, t)
        if op.endswith(("and", "or", "unless")):
            assert isinstance(lhs, dict) and isinstance(rhs, dict)
            on: list[str] | None = None
            if node.modifier is not None and node.modifier.matching is not None:
                on = list(node.modifier.matching.labels)

            def sig(labels: Labels) -> Labels:
                return tuple((k, v) for k, v in labels if on is None or k in on)

            right = {sig(k) for k in rhs}
            if op.endswith("unless"):
                return {k: v for k, v in lhs.items() if sig(k) not in right}
            if op.endswith("and"):
                return {k: v for k, v in lhs.items() if sig(k) in right}
            left = {sig(k) for k in lhs}
            return {**lhs, **{k: v for k, v in rhs.items() if sig(k) not in left}}
        compare: dict[str, Callable[[float, float], bool]] = {
            ">": lambda a, b: a > b,
            "<": lambda a, b: a < b,
            ">=": lambda a, b: a >= b,
            "<=": lambda a, b: a <= b,
            "==": lambda a, b: a == b,
            "!=": lambda a, b: a != b,
        }
        arith: dict[str, Callable[[float, float], float]] = {
            "+": lambda a, b: a + b,
            "-": lambda a, b: a - b,
            "*": lambda a, b: a * b,
            "/": lambda a, b: a / b if b else math.nan,
        }
        symbol = _symbol(op)
        if isinstance(lhs, dict) and isinstance(rhs, float):
            if symbol in compare:
                return {k: v for k, v in lhs.items() if compare[symbol](v, rhs)}
            return {k: arith[symbol](v, rhs) for k, v in lhs.items()}
        if isinstance(lhs, float) and isinstance(rhs, float) and symbol in arith:
            return arith[symbol](lhs, rhs)
        raise NotImplementedError(f"{op} between {type(lhs).__name__} and {type(rhs).__name__}")


_SYMBOLS = {
    "gtr": ">",
    "lss": "<",
    "gte": ">=",
    "lte": "<=",
    "eqlc": "==",
    "neq": "!=",
    "add": "+",
    "sub": "-",
    "mul": "*",
    "div": "/",
}


def extrapolated_rate(
    points: list[tuple[float, float]], range_start: float, range_end: float, *, is_rate: bool
) -> float | None:
    """``rate`` (per second) or ``increase`` of a float counter over ``(range_start, range_end]``.

    A port of prometheus/prometheus ``promql/functions.go`` ``extrapolatedRate`` (the current
    ordering, as ``promql/promqltest/testdata/functions.test`` @ 0043f1e4 pins it): the
    last-minus-first difference with every counter reset's pre-reset value added back; then the
    covered interval is extended to each range boundary when the first/last sample lies within
    1.1 average sample intervals of it, else by half an average interval; on the left the
    extension stops where the counter would reach zero (counters are not negative).  None
    (no output element) with fewer than two samples.
    """
    if len(points) < 2:
        return None
    first_t, first_v = points[0]
    last_t, last_v = points[-1]
    result = last_v - first_v
    previous = first_v
    for _, value in points[1:]:
        if value < previous:
            result += previous
        previous = value
    to_start = first_t - range_start
    to_end = range_end - last_t
    sampled = last_t - first_t
    average = sampled / (len(points) - 1)
    threshold = average * 1.1
    if to_start >= threshold:
        to_start = average / 2
    if result > 0 and first_v >= 0:
        to_zero = sampled * (first_v / result)
        if to_zero < to_start:
            to_start = to_zero
    if to_end >= threshold:
        to_end = average / 2
    factor = (sampled + to_start + to_end) / sampled
    if is_rate:
        factor /= range_end - range_start
    return result * factor


def _symbol(op: str) -> str:
    for word, symbol in _SYMBOLS.items():
        if op.endswith(word) or op == symbol:
            return symbol
    raise NotImplementedError(op)


def _histogram_quantile(phi: float, vec: Vector) -> Vector:
    groups: dict[Labels, list[tuple[float, float]]] = {}
    for labels, value in vec.items():
        le = dict(labels).get("le")
        if le is None:
            continue
        rest = tuple((k, v) for k, v in labels if k != "le")
        groups.setdefault(rest, []).append((float(le), value))
    out: Vector = {}
    for rest, buckets in groups.items():
        buckets.sort()
        total = buckets[-1][1]
        if total == 0 or not math.isinf(buckets[-1][0]):
            continue
        rank = phi * total
        index = next(i for i, (_, count) in enumerate(buckets) if count >= rank)
        if index == len(buckets) - 1:
            out[rest] = buckets[-2][0]
            continue
        start, lower = (0.0, 0.0) if index == 0 else buckets[index - 1]
        end, count = buckets[index]
        if index == 0 and end <= 0:
            out[rest] = end
            continue
        out[rest] = start + (end - start) * ((rank - lower) / (count - lower))
    return out
