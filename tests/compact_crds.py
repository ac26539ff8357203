"""Stack records with each CustomResourceDefinition's schema replaced by the smallest structural one.

Why: the stacks declare Kueue's and KubeRay's CRDs as resources (components/chart_crds.py), a few
MB of schema nodes.  Tests that replay a whole plan through the policy pack many times -- the
hostile-mutation fuzz, and the comparison with the stock policy SDK, whose pure-Python property
conversion is what ``gpu_batch_policy.runtime.sdk_speedups`` replaces -- would spend nearly all their time
converting those schemas, and the fuzz would put almost every mutation into them.  They run on
these records instead; the full schemas are still checked by the preview and manifest tests.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from preview.records import RecordedResource

CRD_TYPE = "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition"
STAND_IN_SCHEMA: dict[str, Any] = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}


def _compact(inputs: dict[str, Any]) -> dict[str, Any]:
    spec = inputs.get("spec")
    if not isinstance(spec, dict) or not isinstance(spec.get("versions"), list):
        return inputs
    versions = [
        {**v, "schema": {"openAPIV3Schema": dict(STAND_IN_SCHEMA)}}
        if isinstance(v, dict) and "schema" in v
        else v
        for v in spec["versions"]
    ]
    return {**inputs, "spec": {**spec, "versions": versions}}


def with_compact_crd_schemas(records: Iterable[RecordedResource]) -> list[RecordedResource]:
    """``records`` with every CRD's ``openAPIV3Schema`` replaced by :data:`STAND_IN_SCHEMA`."""
    return [replace(r, inputs=_compact(r.inputs)) if r.type == CRD_TYPE else r for r in records]
