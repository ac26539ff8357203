"""The preview's entry points to the pack's custom-resource validator (one code path).

The validator itself -- the strict structural-schema walk, CEL through cel-python, the CRD
catalog -- lives in the policy pack (``gpu_batch_policy.facts.schema.crd``), so ``pulumi preview
--policy-pack`` and this preview judge custom resources with the same code.  What is here is
only how the preview picks a catalog: the pinned charts' CRDs by default
(``gpu_batch_policy.facts.schema.pinned``), or a directory of CRD YAML files (``$GPU_BATCH_CRD_DIR``, or
an explicit argument), which tests and benchmarks use to compare.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from gpu_batch_policy.facts.schema.crd import (
    SCHEMA_DIR_ENV,
    Crd,
    CrdCatalog,
    CrdVersion,
    Outcome,
    SchemaDirError,
    ValidationResult,
    Violation,
    format_path,
)
from gpu_batch_policy.facts.schema.markers import MARKERS

__all__ = [
    "MARKERS",
    "SCHEMA_DIR_ENV",
    "Crd",
    "CrdCatalog",
    "CrdVersion",
    "Outcome",
    "SchemaDirError",
    "ValidationResult",
    "Violation",
    "default_schema_dir",
    "format_path",
    "get_catalog",
    "validate_object",
    "validate_objects",
]


def default_schema_dir() -> Path:
    """``$GPU_BATCH_CRD_DIR`` if set, else ``<repo>/../shared/schemas`` (read at call time).

    Only for comparisons and explicit overrides: by default (:func:`get_catalog` with no
    directory and no override) CRDs come from the pinned charts, never from ``../shared``."""
    override = os.environ.get(SCHEMA_DIR_ENV)
    if override:
        return Path(override)
    return Path(__file__).resolve().parents[1].parent / "shared" / "schemas"


_CATALOGS: dict[Path, CrdCatalog] = {}


def get_catalog(schema_dir: str | os.PathLike[str] | None = None) -> CrdCatalog:
    """The cached catalog for a directory; with none (and no ``$GPU_BATCH_CRD_DIR``), the CRDs
    the pinned charts of ``charts.lock.yaml`` ship (:func:`preview.charts.locked_crd_catalog`).

    Cached per resolved path so a whole preview parses each CRD file once.
    """
    if schema_dir is None and not os.environ.get(SCHEMA_DIR_ENV):
        from preview.charts import locked_crd_catalog  # the charts import this module

        return locked_crd_catalog()
    directory = Path(schema_dir) if schema_dir is not None else default_schema_dir()
    key = directory.resolve()
    catalog = _CATALOGS.get(key)
    if catalog is None:
        catalog = CrdCatalog(directory)
        _CATALOGS[key] = catalog
    return catalog


def validate_object(
    obj: Mapping[str, Any], schema_dir: str | os.PathLike[str] | None = None
) -> ValidationResult:
    """Validate one Kubernetes object against its CRD; see :class:`ValidationResult`."""
    return get_catalog(schema_dir).validate(obj)


def validate_objects(
    objs: Iterable[Mapping[str, Any]], schema_dir: str | os.PathLike[str] | None = None
) -> list[ValidationResult]:
    """Validate many objects with one catalog, in order."""
    catalog = get_catalog(schema_dir)
    return [catalog.validate(obj) for obj in objs]
