"""How fast strict CRD validation is, cold and warm (printed, not asserted).

Why a script and not a test: timings depend on the machine, and an asserted threshold would
either be loose enough to mean nothing or flaky.  The claim it backs is the design's: each CRD
file is parsed once, each (group, version, kind) compiled once, so a preview of thousands of
objects costs well under a few seconds.

Run from the repository root:  python -m benchmarks.crd_validation_bench [--count 10000]
"""

from __future__ import annotations

import argparse
import copy
import time
from pathlib import Path
from typing import Any

import yaml

from preview.crd_validation import CrdCatalog, Outcome, default_schema_dir

SEEDS = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "seeds"


def small_objects() -> list[dict[str, Any]]:
    """The seed documents' own custom resources plus a v1beta2 ClusterQueue: "small" objects."""
    objects: list[dict[str, Any]] = []
    for path in sorted(SEEDS.glob("*.yaml")):
        with path.open(encoding="utf-8") as handle:
            objects.extend(d for d in yaml.safe_load_all(handle) if d and d.get("kind") != "Namespace")
    objects.append(
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "ClusterQueue",
            "metadata": {"name": "team-a"},
            "spec": {
                "cohortName": "research",
                "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "team-a"}},
                "resourceGroups": [
                    {
                        "coveredResources": ["cpu", "memory", "nvidia.com/gpu"],
                        "flavors": [
                            {
                                "name": "l4",
                                "resources": [
                                    {"name": "cpu", "nominalQuota": 40},
                                    {"name": "memory", "nominalQuota": "160Gi"},
                                    {"name": "nvidia.com/gpu", "nominalQuota": 4, "borrowingLimit": 2},
                                ],
                            }
                        ],
                    }
                ],
                "admissionChecksStrategy": {"admissionChecks": [{"name": "dws"}]},
            },
        }
    )
    return objects


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--count", type=int, default=10_000, help="objects to validate warm")
    args = parser.parse_args()

    base = small_objects()
    kinds = sorted({o["kind"] for o in base})
    # Distinct objects (distinct names), so nothing is accidentally memoised per object.
    batch = []
    for i in range(args.count):
        obj = copy.deepcopy(base[i % len(base)])
        obj["metadata"]["name"] = f"{obj['metadata']['name']}-{i}"
        batch.append(obj)

    start = time.perf_counter()
    catalog = CrdCatalog(default_schema_dir())
    for obj in base:
        catalog.validate(obj)
    cold = time.perf_counter() - start

    start = time.perf_counter()
    results = [catalog.validate(obj) for obj in batch]
    warm = time.perf_counter() - start

    outcomes: dict[str, int] = {}
    for result in results:
        outcomes[result.outcome.value] = outcomes.get(result.outcome.value, 0) + 1
    invalid = outcomes.get(Outcome.INVALID.value, 0)
    print(f"schema dir: {catalog.schema_dir}")
    print(f"kinds: {', '.join(kinds)}")
    print(f"cold (parse CRD files + compile, {len(base)} objects): {cold:.3f} s")
    print(
        f"warm: {len(batch)} objects in {warm:.3f} s "
        f"({len(batch) / warm:,.0f} objects/s, {warm / len(batch) * 1e6:.0f} us/object)"
    )
    print(f"outcomes: {outcomes} (invalid = the seed's v1alpha1 Cohort copies: {invalid})")


if __name__ == "__main__":
    main()
