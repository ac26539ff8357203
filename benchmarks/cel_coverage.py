"""How many of the CRDs' CEL rules the preview can run, and why the others are not checked.

Reads every CRD in a directory (default: the preview's CRD schema directory, ``../shared/schemas``
beside the repository, or ``$GPU_BATCH_CRD_DIR``), compiles each ``x-kubernetes-validations``
rule with ``preview.cel_rules`` and prints, per CRD version and in total, how many rules cel-python
can run and how many are "not checked", grouped by reason.  A figure, not an assertion: it
shows what "valid" in the preview covers.

Run from the repository root:  python -m benchmarks.cel_coverage [--dir PATH] [--per-crd]
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from preview.cel_rules import compiled_rule
from preview.crd_validation import get_catalog


def rules_in(schema: Any) -> Iterator[Mapping[str, Any]]:
    """Every ``x-kubernetes-validations`` entry anywhere under one schema node."""
    if not isinstance(schema, Mapping):
        return
    yield from (rule for rule in schema.get("x-kubernetes-validations") or () if isinstance(rule, Mapping))
    for child in (schema.get("properties") or {}).values():
        yield from rules_in(child)
    for key in ("items", "additionalProperties", "not"):
        yield from rules_in(schema.get(key))
    for key in ("allOf", "anyOf", "oneOf"):
        for child in schema.get(key) or ():
            yield from rules_in(child)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--dir", type=Path, default=None, help="CRD directory (default: the preview's)")
    parser.add_argument("--per-crd", action="store_true", help="one line per CRD version")
    args = parser.parse_args()

    start = time.perf_counter()
    catalog = get_catalog(args.dir)
    crds = catalog.crds()
    loaded = time.perf_counter()
    total = runnable = 0
    reasons: Counter[str] = Counter()
    for crd in crds:
        for version in crd.versions.values():
            compiled = [compiled_rule(rule) for rule in rules_in(version.schema)]
            ok = sum(1 for rule in compiled if rule.program is not None)
            total += len(compiled)
            runnable += ok
            reasons.update(rule.unchecked_reason for rule in compiled if rule.program is None)
            if args.per_crd and compiled:
                print(f"  {crd.group}/{version.name} {crd.kind}: {ok}/{len(compiled)} run")
    compiled_at = time.perf_counter()
    print(f"CRDs in {catalog.schema_dir}: {len(crds)} (parsed in {loaded - start:.2f} s)")
    print(f"CEL rules: {total}; run by cel-python: {runnable}; not checked: {total - runnable}")
    for reason, count in reasons.most_common():
        print(f"  not checked, {count:3d} x {reason}")
    print(f"compiling every rule: {compiled_at - loaded:.2f} s (each distinct rule text once)")


if __name__ == "__main__":
    main()
