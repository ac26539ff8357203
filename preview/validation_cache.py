"""Strict validation verdicts on large built-in objects, read back from the render cache.

Why (issue 44): a one-team stack declares its operators' CRDs (Kueue's ``workloads`` alone is
~0.7 MB of OpenAPI schema), and ``manifests.yaml``'s strict check walks each against the
``apiextensions.k8s.io/v1`` schema with ``jsonschema``: most of the ~0.6 s validation takes in a
preview whose objects have not changed.  The pack's own memo
(``gpu_batch_policy.facts.schema.core._memo``) only lives as long as its process.

Only objects whose pickle is at least :data:`MIN_BYTES` come here: a handful per stack, so
they cannot crowd chart renders out of the shared, bounded folder (a thousand teams' small
Roles and LocalQueues are left to the pack's in-memory memo, which already checks each shape
once).  An entry is the :class:`~gpu_batch_policy.facts.schema.crd.ValidationResult`'s fields,
keyed by (:func:`verdict_key`):

- the object's **content** (the SHA-256 of :func:`preview.dump_cache.content_bytes`: its pickle,
  which keeps types and map order) and
  whether it is judged as a **patch**;
- the **schema**: the Kubernetes minor and the ``kubernetes-validate`` release that ships its
  strict OpenAPI document;
- the **validator**: the source of the modules that decide a verdict (``core``, ``crd`` for the
  result types, ``markers``) and the ``jsonschema`` and CPython versions.

Stored with the render cache's code (``gpu_batch_policy.facts.charts.render_cache``: outside the
checkout, atomic, LRU-bounded, an unreadable entry a miss).  An entry that does not rebuild a
result (another layout, a damaged field) is a miss, and the object is validated.  Objects here
are in display form (secrets read ``[secret]``), so no secret reaches the disk.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import inspect
import sys
from collections.abc import Mapping
from importlib import metadata
from typing import Any, Final

from gpu_batch_policy.facts.charts import render_cache
from gpu_batch_policy.facts.schema import core, crd, markers
from gpu_batch_policy.facts.schema.core import CoreValidator
from gpu_batch_policy.facts.schema.crd import Outcome, ValidationResult, Violation

from preview.dump_cache import content_bytes

# Bump when what an entry holds or its key covers changes.
FORMAT: Final = 1
# Objects smaller than this are validated as they come (the pack's memo serves repeated shapes).
MIN_BYTES: Final = 64 * 1024


@functools.cache
def validator_identity() -> str:
    """What decides a verdict besides the object and the minor (module docstring)."""
    parts = [inspect.getsource(module) for module in (core, crd, markers)]
    for package in ("kubernetes-validate", "jsonschema"):
        try:
            parts.append(f"{package} {metadata.version(package)}")
        except metadata.PackageNotFoundError:
            parts.append(f"{package} ?")
    parts.append(sys.version)
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


def verdict_key(content: bytes, patch: bool, minor: str) -> str:
    parts = {
        "format": FORMAT,
        "kind": "core-verdict",
        "content": hashlib.sha256(content).hexdigest(),
        "patch": patch,
        "minor": minor,
        "validator": validator_identity(),
    }
    return hashlib.sha256(render_cache.canonical_json(parts).encode()).hexdigest()


def _stored(result: ValidationResult) -> dict[str, Any]:
    """The result's fields as JSON holds them (an entry is read back as JSON)."""
    fields = dataclasses.asdict(result)
    fields["outcome"] = result.outcome.value
    fields["violations"] = [{"path": v.path, "message": v.message} for v in result.violations]
    fields["cel_unchecked_reasons"] = list(result.cel_unchecked_reasons)
    return fields


def _rebuilt(stored: Any) -> ValidationResult | None:
    """The result an entry holds, or None when it does not make one."""
    if not isinstance(stored, Mapping):
        return None
    try:
        fields = dict(stored)
        fields["outcome"] = Outcome(fields["outcome"])
        fields["violations"] = tuple(
            Violation(str(v["path"]), str(v["message"])) for v in fields["violations"]
        )
        fields["cel_unchecked_reasons"] = tuple(str(r) for r in fields["cel_unchecked_reasons"])
        result = ValidationResult(**fields)
    except (KeyError, TypeError, ValueError):
        return None
    return result if _stored(result) == dict(stored) else None


def validate(validator: CoreValidator, obj: Mapping[str, Any], patch: bool = False) -> ValidationResult:
    """``validator.validate(obj, patch=patch)``, read back when this large object was judged before."""
    content = content_bytes(obj)
    if content is None or len(content) < MIN_BYTES:
        return validator.validate(obj, patch=patch)
    key = verdict_key(content, patch, validator.minor.minor)
    known = _rebuilt(render_cache.read(key))
    if known is not None:
        return known
    result = validator.validate(obj, patch=patch)
    render_cache.write(key, _stored(result))
    return result
