"""Fields a pinned CRD freezes are replaced by `pulumi up`, not sent as a refused update.

pulumi-kubernetes replaces only on its table of built-in kinds (``provider/pkg/provider/diff.go``
``forceNewProperties``), so a change of a CRD-frozen field (a transition rule ``self == oldSelf``)
goes to the API server as an update, which refuses it (``tests/live/test_day_two.py`` shows the
refusal on a real kube-apiserver).  ``components/k8s_object.py`` registers such fields with
``replaceOnChanges`` and ``deleteBeforeReplace``, or names the kind as held by Kueue's
``resource-in-use`` finalizer (a same-name replacement would wait forever).

Complete, not sampled: every frozen field of every custom kind any repo stack declares, read from
the pinned CRDs, is one or the other.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from components.k8s_object import HELD_BY_FINALIZER, REPLACED_ON_CHANGE
from preview.crd_validation import get_catalog
from preview.plan import plan_document
from preview.records import RecordedResource
from preview.stack_files import stack_names
from tests.stack_runner import ROOT, unedited_run

FROZEN = "self == oldSelf"


def _frozen_paths(schema: Mapping[str, Any], path: str = "") -> Iterator[str]:
    """Every path whose own validations include the plain immutability rule."""
    rules = schema.get("x-kubernetes-validations") or []
    if path and any(isinstance(r, Mapping) and str(r.get("rule", "")).strip() == FROZEN for r in rules):
        yield path
    for name, sub in (schema.get("properties") or {}).items():
        if isinstance(sub, Mapping):
            yield from _frozen_paths(sub, f"{path}.{name}" if path else name)


@functools.cache
def _records(stack: str) -> tuple[RecordedResource, ...]:
    return tuple(unedited_run(stack).resources)


def _custom_kinds() -> set[tuple[str, str, str]]:
    """(group, version, kind) of every custom object the repo stacks declare."""
    kinds = set()
    for stack in stack_names(ROOT):
        for r in _records(stack):
            api_version, kind = r.inputs.get("apiVersion"), r.inputs.get("kind")
            if isinstance(api_version, str) and "/" in api_version and isinstance(kind, str):
                group, version = api_version.split("/", 1)
                if get_catalog().crd(group, kind) is not None:
                    kinds.add((group, version, kind))
    return kinds


def test_every_frozen_field_of_a_declared_kind_is_replaced_or_held_by_a_finalizer() -> None:
    kinds = _custom_kinds()
    assert ("kueue.x-k8s.io", "v1beta2", "LocalQueue") in kinds
    seen: set[tuple[str, str]] = set()
    for group, version, kind in sorted(kinds):
        crd = get_catalog().crd(group, kind)
        assert crd is not None
        entry = crd.versions.get(version)
        if entry is None:
            continue
        frozen = {p for p in _frozen_paths(entry.schema) if p.startswith("spec.")}
        if not frozen:
            continue
        seen.add((group, kind))
        replaced = set(REPLACED_ON_CHANGE.get((group, kind), ()))
        assert frozen <= replaced or (group, kind) in HELD_BY_FINALIZER, (
            group,
            version,
            kind,
            sorted(frozen),
        )
    # Nothing listed that no declared kind freezes (a stale entry reads as protection).
    assert set(REPLACED_ON_CHANGE) <= seen, sorted(set(REPLACED_ON_CHANGE) - seen)


@pytest.mark.parametrize("stack", stack_names(ROOT))
def test_every_object_of_a_listed_kind_is_registered_for_replacement(stack: str) -> None:
    """What the engine receives: the listed paths as ``replaceOnChanges`` with
    ``deleteBeforeReplace``, on those kinds only."""
    for r in _records(stack):
        api_version, kind = r.inputs.get("apiVersion"), r.inputs.get("kind")
        group = api_version.split("/", 1)[0] if isinstance(api_version, str) else ""
        paths = REPLACED_ON_CHANGE.get((group, str(kind)))
        if paths is None:
            assert not r.replace_on_changes and not r.delete_before_replace, r.urn
        else:
            assert r.replace_on_changes == list(paths) and r.delete_before_replace, r.urn


def test_the_plan_carries_the_options() -> None:
    """``plan.json`` shows them, so a reviewer reading a plan sees why a change replaces."""
    plan = plan_document("gpu-batch", "prod", list(_records("prod")), {})
    queues = [r for r in plan["resources"] if r["type"].endswith(":LocalQueue")]
    assert queues and all(
        r["replaceOnChanges"] == ["spec.clusterQueue"] and r["deleteBeforeReplace"] for r in queues
    )
