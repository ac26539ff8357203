"""Dashboards and alerts that read nothing: PromQL that does not parse, or a Kueue metric that
the stack's Kueue never exports.

Where PromQL lives, for any program: ``gcp:monitoring/dashboard:Dashboard`` ``dashboardJson``
(Cloud Monitoring dashboards: every ``prometheusQuery`` string, and every
``timeSeriesFilter.filter`` naming ``prometheus.googleapis.com/<metric>/<kind>``, GMP's metric-type
form), ``gcp:monitoring/alertPolicy:AlertPolicy`` ``conditions[].conditionPrometheusQueryLanguage
.query`` (pulumi-gcp 10.2.0), and GMP ``Rules``/``ClusterRules``/``GlobalRules``
``spec.groups[].rules[].expr`` (prometheus-engine @ 2ffde4ec CRDs).

KubeRay (``kuberay_``) series must be metrics of the KubeRay v1.7.0 operator (:mod:`..metrics.kuberay`)
and its release must not turn them off (``metrics.enabled: false``).  ``DCGM_`` series are judged
where the GPU Operator's dcgm-exporter with its default counters is the stack's only DCGM source
(:mod:`..metrics.dcgm`, :mod:`..metrics.dcgm_source`); under GKE's managed DCGM, a custom counters
ConfigMap or no exporter in the stack they are not (no citable list).  Ray's own ``ray_`` metrics:
the advisory ``promql-ray-metric-documented`` (rules/monitoring_ray.py).  Other families: not
judged.

KAI Scheduler v0.17.0 series must carry the ``kai_`` prefix and be one of its metrics
(:mod:`..metrics.kai`): its documentation names them without it.

``promql-parses``: Cloud Monitoring refuses an alert policy whose PromQL does not parse, and a
dashboard panel with one shows only an error.  ``promql-metric-exported``: a Kueue series
(``kueue_``/``multikueue_``) must be a metric of Kueue 0.19.2 and exported under the stack's
Kueue configuration (:mod:`..metrics.kueue`, :mod:`..metrics.kueue_settings`): the
accelerated-platforms Kueue dashboard's quota panel reads ``kueue_cluster_queue_resource_usage``
under a configuration without ``enableClusterQueueResources``, and stays empty.  Both mandatory:
the panel or alert cannot work.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from typing import Any

from pulumi_policy import Policy, PolicyConfigSchema

from ...facts.kueue_install import INSTALL_PROPERTIES
from ...facts.metrics.dcgm import PREFIX as DCGM_PREFIX
from ...facts.metrics.dcgm import dcgm_problem
from ...facts.metrics.dcgm_source import operator_default_exporter_only
from ...facts.metrics.kai import kai_problem
from ...facts.metrics.kuberay import kuberay_problem
from ...facts.metrics.kueue import SETTING_KEYS, is_kueue_series, metric_for_series
from ...facts.metrics.kueue_settings import kueue_metric_settings
from ...facts.metrics.promql import Parsed, expand_dashboard_variables, metric_names
from ...facts.model import StackModel
from ...facts.model.base import Resource
from ...primitives.values import Unknown, dig
from ..kit.builders import stack_policy
from ..kit.report import Reporter

DASHBOARD = "gcp:monitoring/dashboard:Dashboard"
ALERT_POLICY = "gcp:monitoring/alertPolicy:AlertPolicy"
GMP_RULE_KINDS = ("Rules", "ClusterRules", "GlobalRules")
_FILTER_METRIC = re.compile(r"prometheus\.googleapis\.com/([A-Za-z_:][A-Za-z0-9_:]*)/")


def _json_strings(value: Any, key: str, path: str = "") -> Iterator[tuple[str, str]]:
    if isinstance(value, Mapping):
        for k, v in value.items():
            here = f"{path}.{k}" if path else str(k)
            if k == key and isinstance(v, str):
                yield here, v
            else:
                yield from _json_strings(v, key, here)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _json_strings(v, key, f"{path}[{i}]")


Query = tuple[str, str, bool]  # (where, text, is PromQL: False for a GCM filter)


def _read(res: Resource) -> tuple[list[Query] | None, str | None]:
    """Every PromQL string (and GMP metric filter) ``res`` holds (None: unknown until apply), and
    the error of a ``dashboardJson`` that is not JSON (then it holds none)."""
    if res.type == DASHBOARD:
        raw = res.get("dashboardJson")
        if isinstance(raw, Unknown):
            return None, None
        if not isinstance(raw, str):
            return [], None
        try:
            doc = json.loads(raw)
        except ValueError as error:
            return [], str(error)
        found: list[Query] = [
            (w, expand_dashboard_variables(q), True) for w, q in _json_strings(doc, "prometheusQuery")
        ]
        found += [(w, f, False) for w, f in _json_strings(doc, "filter") if _FILTER_METRIC.search(f)]
        return found, None
    if res.type == ALERT_POLICY:
        conditions = res.get("conditions")
        if isinstance(conditions, Unknown):
            return None, None
        out: list[Query] = []
        for i, condition in enumerate(conditions if isinstance(conditions, list) else []):
            query = dig(condition, "conditionPrometheusQueryLanguage", "query")
            if isinstance(query, Unknown):
                return None, None
            if isinstance(query, str):
                out.append((f"conditions[{i}].conditionPrometheusQueryLanguage.query", query, True))
        return out, None
    groups = dig(res.get("spec"), "groups")
    if isinstance(groups, Unknown):
        return None, None
    rules_out: list[Query] = []
    for g, group in enumerate(groups if isinstance(groups, list) else []):
        rules = dig(group, "rules")
        for r, rule in enumerate(rules if isinstance(rules, list) else []):
            expr = dig(rule, "expr")
            if isinstance(expr, Unknown):
                return None, None
            if isinstance(expr, str):
                rules_out.append((f"spec.groups[{g}].rules[{r}].expr", expr, True))
    return rules_out, None


def _holders(model: StackModel) -> list[Resource]:
    return [
        *model.of_type(DASHBOARD),
        *model.of_type(ALERT_POLICY),
        *(o for o in model.kube_objects("monitoring.googleapis.com") if o.kind in GMP_RULE_KINDS),
    ]


def known_queries(model: StackModel, reporter: Reporter) -> Iterator[tuple[Resource, Query]]:
    """``(holder, query)`` for every query of the stack's holders; a holder whose queries are
    unknown until apply is recorded as such instead.

    Four rules read the same queries (this module's two, ``cluster_label``, ``ray_metrics``):
    each holder is read once per model -- ``json.loads`` of every dashboard and the walk over it
    were a third of those rules' time at 1,000 teams -- and a ``dashboardJson`` that is not JSON
    is still a violation of each rule that reads it."""
    held = model.memo("monitoring.queries", lambda: [(res, *_read(res)) for res in _holders(model)])
    for res, found, not_json in held:
        if not_json is not None:
            reporter.violation(
                res, f"dashboardJson is not JSON ({not_json})", "write dashboardJson as a JSON document"
            )
        if found is None:
            reporter.cannot_check(res, "its queries are unknown until apply")
            continue
        for query in found:
            yield res, query


def parsed_promql(model: StackModel, text: str) -> Parsed:
    """``metric_names(text)``, once per model: three rules parse the same PromQL."""
    known: dict[str, Parsed] = model.memo("monitoring.parsed", dict)
    found = known.get(text)
    if found is None:
        found = known[text] = metric_names(text)
    return found


def check_promql_parses(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    for res, (where, text, is_promql) in known_queries(model, reporter):
        parsed = parsed_promql(model, text) if is_promql else None
        if parsed is not None and parsed.error is not None:
            reporter.violation(
                res,
                f"{where} is not valid PromQL ({parsed.error}): {text!r}",
                "fix the expression (it must parse with Prometheus' grammar)",
            )


def _series(model: StackModel, text: str, is_promql: bool) -> tuple[str, ...]:
    if is_promql:
        return parsed_promql(model, text).names
    return tuple(_FILTER_METRIC.findall(text))


def series_read(model: StackModel, reporter: Reporter) -> Iterator[tuple[Resource, str, str]]:
    """``(holder, where, series)`` for every series a dashboard, alert policy or GMP rule of the
    stack reads; a holder whose queries are unknown until apply is recorded as such instead."""
    for res, (where, text, is_promql) in known_queries(model, reporter):
        for series in _series(model, text, is_promql):
            yield res, where, series


def _kuberay_metrics_off(model: StackModel) -> list[str]:
    """KubeRay releases whose operator emits no metrics: chart value ``metrics.enabled: false``
    (ray-project/kuberay v1.7.0 helm-chart/kuberay-operator templates/deployment.yaml
    ``--enable-metrics``; ray-operator/main.go creates the metrics managers only
    ``if config.EnableMetrics``)."""
    return sorted(r.describe() for r in model.kuberay_releases() if r.value("metrics", "enabled") is False)


def _other_family_problem(
    series: str, *, dcgm_judged: bool, kuberay_off: list[str]
) -> tuple[str, str] | None:
    """A DCGM or KubeRay series the stack never gets, with the fix (None: fine, or not judged)."""
    kuberay = kuberay_problem(series)
    if kuberay is not None:
        return (
            kuberay,
            "use a metric of KubeRay v1.7.0 (policies/gpu_batch_policy/facts/metrics/kuberay.py lists them)",
        )
    if series.startswith("kuberay_") and kuberay_off:
        return (
            f"the KubeRay operator emits no metrics with metrics.enabled: false ({', '.join(kuberay_off)})",
            "set metrics.enabled: true on the kuberay-operator release, or drop the panel/alert",
        )
    dcgm = dcgm_problem(series) if dcgm_judged else None
    if dcgm is not None:
        return dcgm, (
            "use a default counter (policies/gpu_batch_policy/facts/metrics/dcgm.py lists them), or give the "
            "exporter a counters ConfigMap that has it (dcgmExporter.config)"
        )
    return None


def check_metric_exported(model: StackModel, reporter: Reporter, config: Mapping[str, Any]) -> None:
    holders = _holders(model)
    if not holders:
        return
    settings = None
    kai_installed = bool(model.kai_releases())
    dcgm_judged = operator_default_exporter_only(model)
    kuberay_off = _kuberay_metrics_off(model)
    for res, where, series in series_read(model, reporter):
        kai = kai_problem(series, kai_installed=kai_installed)
        if kai is not None:
            reporter.violation(res, f"{where} reads {series}: {kai}", "use the kai_-prefixed name")
            continue
        if dcgm_judged is None and series.startswith(DCGM_PREFIX):
            reporter.cannot_check(
                res,
                f"{where} reads {series}; whether the GPU Operator's default dcgm-exporter "
                "is the stack's DCGM source is unknown until apply",
            )
            continue
        other = _other_family_problem(series, dcgm_judged=dcgm_judged is True, kuberay_off=kuberay_off)
        if other is not None:
            problem, fix = other
            reporter.violation(res, f"{where} reads {series}: {problem}", fix)
            continue
        if not is_kueue_series(series):
            continue
        metric = metric_for_series(series)
        if metric is None:
            reporter.violation(
                res,
                f"{where} reads {series}, which Kueue 0.19.2 does not export (pkg/metrics/metrics.go)",
                "use a metric of Kueue 0.19.2 (policies/gpu_batch_policy/facts/metrics/kueue.py lists them)",
            )
            continue
        settings = settings or kueue_metric_settings(model, config)
        if settings.unknown is not None:
            reporter.cannot_check(res, f"{settings.unknown} is unknown until apply")
            return
        missing = sorted(metric.needs - settings.on)
        if missing:
            reporter.violation(
                res,
                f"{where} reads {series}, which this stack's Kueue never exports: it needs "
                f"{'; '.join(SETTING_KEYS[m] for m in missing)}{settings.assumption}",
                f"turn on {'; '.join(SETTING_KEYS[m] for m in missing)} in Kueue's configuration, "
                "or drop the panel/alert",
            )


POLICIES: list[Policy] = [
    stack_policy(
        "promql-parses",
        "Every PromQL string of a dashboard, alert policy or GMP rule parses.",
        check_promql_parses,
    ),
    stack_policy(
        "promql-metric-exported",
        "Every Kueue, KAI, KubeRay or (GPU Operator default) DCGM metric a dashboard, alert or GMP rule "
        "reads exists in the pinned version (KAI's with its kai_ prefix) and is exported under the "
        "stack's configuration.",
        check_metric_exported,
        config_schema=PolicyConfigSchema(properties=INSTALL_PROPERTIES),
    ),
]
