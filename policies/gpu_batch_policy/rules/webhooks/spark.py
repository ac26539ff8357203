"""The Spark operator's validating webhook for SparkApplication and ScheduledSparkApplication at v2.5.1.

The stack installs no Spark operator, so the version judged is the one Kueue v0.19.2's ``go.mod``
pins: ``github.com/kubeflow/spark-operator/v2 v2.5.1``.  Sources, kubeflow/spark-operator v2.5.1:

* ``internal/webhook/sparkapplication_validator.go`` ``ValidateCreate``: ``validateName`` (the
  name is a DNS-1035 label: it names the driver's Service), ``validateSpec`` ->
  ``validateSparkVersion`` (a driver or executor ``template`` needs ``sparkVersion`` >= 3.0.0 by
  ``golang.org/x/mod/semver`` ``Compare`` after a ``v`` prefix: an invalid or empty version sorts
  below every valid one), ``nodeSelector`` not both on the application and on the driver or
  executor, and each ``driverIngressOptions`` entry with a ``servicePort`` and an
  ``ingressURLFormat``, both unique.  ``validateResourceUsage`` runs only with
  ``--enable-resource-quota-enforcement`` and reads the namespace's ResourceQuotas from the cluster.
* ``internal/webhook/scheduledsparkapplication_validator.go``: ``validateName`` (DNS-1035);
  ``validate`` is empty at v2.5.1.

SparkConnect (``sparkconnect_validator.go``, v1alpha1) is not ported.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pulumi_policy import Policy

from ...facts.model.base import KubeObject
from ...primitives.k8s_names import dns1035_label_error
from .port import (
    ACCEPTS_DELETE,
    CANNOT,
    CONSTRUCTS,
    NOT_A_CHECK,
    UPDATE_ONLY,
    Finding,
    Judged,
    Problem,
    Unsure,
    Upstream,
    get,
    items,
    name_of,
    port_policy,
    text,
)

UPSTREAM = Upstream(
    project="Spark operator",
    repo="kubeflow/spark-operator",
    ref="v2.5.1",
    version="v2.5.1",
    why="the version Kueue v0.19.2's go.mod pins; the stack installs no Spark operator",
    files=(
        "internal/webhook/sparkapplication_validator.go",
        "internal/webhook/scheduledsparkapplication_validator.go",
    ),
)
GROUP = "sparkoperator.k8s.io"
SEMVER = re.compile(
    r"v(0|[1-9][0-9]*)(?:\.(0|[1-9][0-9]*)(?:\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?)?)?"
)


def semver_below(version: str, minimum: tuple[int, int, int]) -> bool:
    """``semver.Compare("v"+version, "v"+minimum) < 0`` (x/mod/semver: an invalid version is lowest)."""
    prefixed = version if version.startswith("v") else f"v{version}"
    match = SEMVER.fullmatch(prefixed)
    if match is None:
        return True
    parts = tuple(int(p or 0) for p in match.group(1, 2, 3))
    if parts != minimum:
        return parts < minimum
    return match.group(4) is not None  # a prerelease sorts below its release


def name_problems(obj: KubeObject) -> list[Finding]:
    """``validateName`` of either kind."""
    name = name_of(obj)
    if name is None:
        return [Unsure("metadata.name (generated at apply)")]
    error = dns1035_label_error(name)
    if error is None:
        return []
    return [
        (f"metadata.name '{name}' {error} (it names the driver's Service)", "rename it to a DNS-1035 label")
    ]


def spec_problems(spec: Any) -> list[Problem]:
    """``validateSpec`` with ``validateSparkVersion``."""
    problems: list[Problem] = []
    templates = get(spec, "driver", "template") is not None or get(spec, "executor", "template") is not None
    version = text(spec, "sparkVersion") or ""
    if templates and semver_below(version, (3, 0, 0)):
        problems.append(
            (
                f"uses a driver/executor pod template with sparkVersion '{version}'; pod templates need Spark 3.0.0 or higher",
                "set sparkVersion >= 3.0.0",
            )
        )
    if get(spec, "nodeSelector") is not None and (
        get(spec, "driver", "nodeSelector") is not None or get(spec, "executor", "nodeSelector") is not None
    ):
        problems.append(
            ("defines nodeSelector on the application and on the driver/executor", "keep one of them")
        )
    ports: set[int] = set()
    formats: set[str] = set()
    for index, item in enumerate(items(spec, "driverIngressOptions")):
        where = f"spec.driverIngressOptions[{index}]"
        port = get(item, "servicePort")
        if port is None:
            problems.append((f"{where} has no servicePort", "set servicePort"))
            break  # upstream returns at the first
        if port in ports:
            problems.append((f"{where} repeats servicePort {port}", "use each port once"))
            break
        ports.add(port)
        url = text(item, "ingressURLFormat") or ""
        if not url:
            problems.append((f"{where} has an empty ingressURLFormat", "set ingressURLFormat"))
            break
        if url in formats:
            problems.append((f"{where} repeats ingressURLFormat '{url}'", "use each format once"))
            break
        formats.add(url)
    return problems


def spark_application_problems(obj: KubeObject) -> list[Finding]:
    """``ValidateCreate`` of a SparkApplication (v1beta2); the name check first, as upstream."""
    if obj.version != "v1beta2":
        return []
    found = name_problems(obj)
    if any(not isinstance(f, Unsure) for f in found):
        return found  # upstream returns at the first error
    return found + list(spec_problems(get(obj.props, "spec")))


COVERAGE: Mapping[str, str] = {
    "NewSparkApplicationValidator": CONSTRUCTS,
    "NewScheduledSparkApplicationValidator": CONSTRUCTS,
    "ValidateCreate": "spark_application_problems",
    "ValidateUpdate": UPDATE_ONLY,
    "ValidateDelete": ACCEPTS_DELETE,
    "validateSpec": "spec_problems",
    "validateName": "name_problems",
    "validateSparkVersion": "spec_problems",
    "validateResourceUsage": CANNOT
    + "lists the namespace's ResourceQuotas on the cluster, only with quota enforcement on",
    "validate": NOT_A_CHECK + "empty at v2.5.1 (ScheduledSparkApplication)",
}
"""Every function of the two validator files at v2.5.1 (same-named methods listed once)."""


POLICIES: list[Policy] = [
    port_policy(
        "spark-webhook",
        "SparkApplications pass the Spark operator v2.5.1's webhook (the version Kueue v0.19.2 pins): a "
        "DNS-1035 name, Spark >= 3.0.0 for pod templates, one nodeSelector level, unique driver ingress options.",
        UPSTREAM,
        GROUP,
        Judged(
            ("SparkApplication",),
            spark_application_problems,
            "internal/webhook/sparkapplication_validator.go ValidateCreate",
        ),
        Judged(
            ("ScheduledSparkApplication",),
            name_problems,
            "internal/webhook/scheduledsparkapplication_validator.go validateName",
        ),
    ),
]
