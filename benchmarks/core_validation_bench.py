"""What validating built-in objects against the Kubernetes schema costs (printed, not asserted).

Three figures:

* the prod stack's manifests, as ``python -m preview --stack prod`` validates them (CRDs with
  their CEL rules, built-in kinds against the cluster's minor), cold then warm;
* 1,000 built-in objects of eight kinds (Deployment, Service, Role, ...), cold then warm;
* with ``../shared/vendor`` and helm-python present, 1,000 objects cycled from what the pinned
  charts render with their default values (Deployments, webhook configs, CRDs, ...).

Cold includes loading the minor's 1.4 MB ``_definitions.json`` and compiling each kind's
validator once; warm validates the same batch again, so it also reuses the verdicts memoised
per object shape (objects that differ only in name, namespace or label values share one).  Timings depend on the machine, hence a script, not a test.

Run from the repository root:  python -m benchmarks.core_validation_bench [--count 1000]
"""

from __future__ import annotations

import argparse
import copy
import time
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import yaml
from gpu_batch_policy.facts.schema import core as core_validation

from preview.harness import run_program
from preview.manifests import render_manifests, stack_kubernetes_minor, validation_results
from preview.stack_files import load_stack_files

ROOT = Path(__file__).resolve().parents[1]
VENDOR = ROOT.parent / "shared" / "vendor"
CHARTS = (
    ("kueue-0.19.2", "kueue-system"),
    ("kai-scheduler-v0.17.0", "kai-scheduler"),
    ("kuberay-operator-1.7.0", "kuberay-system"),
    ("skypilot-0.13.0", "skypilot"),
)


def _timed(label: str, objects: Sequence[Mapping[str, Any]], run: Callable[[], list[Any]]) -> None:
    start = time.perf_counter()
    results = run()
    seconds = time.perf_counter() - start
    invalid = sum(1 for r in results if not r.ok)
    print(
        f"  {label}: {len(objects)} objects in {seconds:.3f} s "
        f"({seconds / max(len(objects), 1) * 1e3:.2f} ms/object; {invalid} invalid)"
    )


def _reset_caches() -> None:
    """Forget compiled validators so the next run is cold again."""
    for cached in (core_validation._validator, core_validation._registry, core_validation._memo):
        cached.cache_clear()


def _numbered(
    base: Sequence[Mapping[str, Any]], count: int, *, distinct: bool = False
) -> list[dict[str, Any]]:
    """``count`` copies with distinct names cycling through ``base``.

    Copies that differ only in identity share one memoised verdict; ``distinct`` also gives each
    a label key of its own, so every object is checked in full (the worst case).
    """
    batch = []
    for i in range(count):
        obj = copy.deepcopy(dict(base[i % len(base)]))
        meta = obj.setdefault("metadata", {})
        meta["name"] = f"{meta.get('name', 'obj')}-{i}"
        if distinct:
            meta["labels"] = {**(meta.get("labels") or {}), f"bench.example.com/n{i}": "x"}
        batch.append(obj)
    return batch


def built_in_objects() -> list[dict[str, Any]]:
    """One each of eight built-in kinds, shaped like what charts and components declare."""
    ns, labels = "team-a", {"app": "api"}
    container = {
        "name": "api",
        "image": "registry.k8s.io/pause:3.10",
        "ports": [{"containerPort": 8080, "name": "http"}],
        "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"memory": "1Gi"}},
        "env": [{"name": "MODE", "value": "batch"}],
    }
    pod = {"metadata": {"labels": labels}, "spec": {"containers": [container], "serviceAccountName": "api"}}
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}},
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "api", "namespace": ns}},
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "cfg", "namespace": ns},
            "data": {"a": "b"},
        },
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "auth", "namespace": ns},
            "stringData": {"x": "[secret]"},
        },
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "api", "namespace": ns},
            "spec": {"selector": labels, "ports": [{"port": 80, "targetPort": "http"}]},
        },
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "api", "namespace": ns},
            "spec": {"replicas": 2, "selector": {"matchLabels": labels}, "template": pod},
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": {"name": "submitter", "namespace": ns},
            "rules": [
                {"apiGroups": ["ray.io"], "resources": ["rayjobs"], "verbs": ["create", "get", "list"]}
            ],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {"name": "submitter", "namespace": ns},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "submitter"},
            "subjects": [
                {"kind": "Group", "name": "team-a@example.com", "apiGroup": "rbac.authorization.k8s.io"}
            ],
        },
    ]


def chart_objects() -> list[dict[str, Any]]:
    """Every object the pinned charts render with default values ([] without vendor/helm)."""
    try:
        import helm_python  # optional: only for the chart figure
    except ImportError:
        return []
    objects: list[dict[str, Any]] = []
    for chart, namespace in CHARTS:
        if not (VENDOR / chart).is_dir():
            return []
        rendered = helm_python.Chart.load(str(VENDOR / chart)).render({}, name="release", namespace=namespace)
        for path, text in rendered.items():
            if path.endswith((".yaml", ".yml")):
                objects.extend(doc for doc in yaml.safe_load_all(text) if isinstance(doc, dict))
    return objects


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--count", type=int, default=1000, help="objects per synthetic batch")
    args = parser.parse_args()

    result = run_program(ROOT, load_stack_files(ROOT, "prod"))
    prod = render_manifests(result.resources)
    kubernetes = stack_kubernetes_minor(result.resources)
    print(f"prod stack ({kubernetes}):")
    _timed("cold", prod, lambda: validation_results(prod, kubernetes=kubernetes))
    _timed("warm", prod, lambda: validation_results(prod, kubernetes=kubernetes))

    for distinct in (False, True):
        batch = _numbered(built_in_objects(), args.count, distinct=distinct)
        shape = "every one a distinct shape" if distinct else "differing in identity only"
        print(f"built-in objects, 8 kinds, {shape} ({kubernetes}):")
        _reset_caches()
        _timed("cold", batch, partial(validation_results, batch, kubernetes=kubernetes))
        _timed("warm", batch, partial(validation_results, batch, kubernetes=kubernetes))

    rendered = chart_objects()
    if not rendered:
        print("chart-rendered objects: skipped (needs ../shared/vendor and helm-python)")
        return
    charts = _numbered(rendered, args.count, distinct=True)
    kinds = len({(o.get("apiVersion"), o.get("kind")) for o in rendered})
    print(f"chart-rendered objects, {len(rendered)} of {kinds} kinds, cycled, each distinct ({kubernetes}):")
    _reset_caches()
    _timed("cold", charts, lambda: validation_results(charts, kubernetes=kubernetes))
    _timed("warm", charts, lambda: validation_results(charts, kubernetes=kubernetes))


if __name__ == "__main__":
    main()
