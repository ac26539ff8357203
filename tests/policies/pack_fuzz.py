"""Drive the real pack process over gRPC with hostile mutations of real plans (issue 12).

Seeds are the seed-scenario manifests (``tests/fixtures/seeds``) and the plans of every stack in
the project (the program run under the preview's mocks).  Each mutation copies one seed and
changes one resource in one of these ways:

* ``quantity``: a quantity leaf (container requests/limits, ClusterQueue quotas) becomes one of
  :data:`HOSTILE_QUANTITIES` (``NaN``, ``1E+999999999``, ``"12 "``, full-width digits, 0.5 ...);
* ``fraction``: a KAI ``gpu-fraction`` annotation becomes one of :data:`HOSTILE_FRACTIONS`;
* ``values-yaml``: the Kueue manager config or SkyPilot's ``apiService.config`` becomes an alias
  bomb, a self-referencing alias, 5,000 nested brackets, a string past the size limit, or broken
  YAML;
* ``deep``: any leaf becomes a structure nested 150 to 3,000 levels deep (sent as is, past the
  preview client's own depth check, as the engine would send it);
* ``resource-groups``: a ClusterQueue gets 3,000 resource groups;
* ``secret``: a string leaf becomes a Pulumi secret holding a marker that must never appear in
  any finding message;
* ``leaf``: any leaf becomes a value of another type (``None``, a huge int, a long string, a list);
* ``chart-version``: a Helm release's ``version`` becomes one of :data:`HOSTILE_CHART_VERSIONS`
  (a 400-digit version, a path, NUL): each must get a finding, never an ``OSError`` from the chart
  cache (issue 18 item 8).

Any finding that reads "internal error" (a rule's, or the pack's own) counts as an internal error.

For each mutation the driver makes the engine's calls for the changed resource (``Remediate``,
``Analyze``) and one ``AnalyzeStack`` over the whole plan, each with a 10 s deadline, and records:
a *crash* (any gRPC error, or the process gone), a *hang* (a deadline exceeded), the slowest call,
and whether an invalid quantity / fraction / values YAML got a new finding on its resource
(compared with the unmutated seed).  ``python -m tests.policies.pack_fuzz --mutations 5000`` is
``make fuzz`` (the kinds in turn, :func:`round_robin`).

Each kind's hostile values are sent in turn (:attr:`Mutator.VALUES`), not drawn at random, so a
kind's first ``len(values)`` mutations send every one of them; the resource each goes to is drawn
from the seeded generator.  The test suite runs :func:`covering_sample`: every kind, each of its
hostile values once (at least :data:`COVERING_MINIMUM` mutations of a kind), ~60 mutations where
``make fuzz`` runs thousands of the same kinds and values on more resources.
"""

from __future__ import annotations

import argparse
import copy
import random
import re
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import grpc
import yaml
from google.protobuf import json_format, struct_pb2
from pulumi.runtime.proto import analyzer_pb2

ROOT = Path(__file__).resolve().parents[2]
for _path in (ROOT, ROOT / "policies"):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from preview.analyzer import PolicyPackProcess, _rpc_status  # noqa: E402
from preview.manifest_resources import records_from_manifests  # noqa: E402
from preview.manifest_resources import stack_record as seed_stack_record  # noqa: E402
from preview.records import RecordedResource  # noqa: E402

SEEDS = ROOT / "tests" / "fixtures" / "seeds"
SEED_BASES = {"kueue-priority.yaml": ["kueue-provisioning.yaml"]}
# A hang detector, not a speed limit (speed is benchmarks/): a hang never answers, while one
# AnalyzeStack on the largest seed took 12.6 s on a 2-core runner shared by several test workers.
CALL_DEADLINE_S = 60.0
SECRET_SIG_KEY = "4dabf18193072939515e22adb298388d"
SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270"

# Invalid for the API server (each must get a finding) and valid-but-extreme ones (clamped).
INVALID_QUANTITIES: list[Any] = [
    "NaN", "sNaN", "Infinity", "12 ", " 12", "1_000", "１２", "1e3m", "1e+3Gi", "", "0x10", "64GB", 0.5, True,
]  # fmt: skip
VALID_EXTREME_QUANTITIES: list[Any] = ["1e308", "1E+999999999", "1e-300", "99999999999999999999999", 1e308]
HOSTILE_QUANTITIES = INVALID_QUANTITIES + VALID_EXTREME_QUANTITIES
INVALID_FRACTIONS = ["NaN", "sNaN", "1e308", "1E+999999999", "0", "1.5", "abc", "", "500m", "-0.5"]
HOSTILE_FRACTIONS = [*INVALID_FRACTIONS, "1e-300"]


def _billion_laughs() -> str:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(8):
        this, prev = chr(ord("b") + i), chr(ord("a") + i)
        lines.append(f"{this}: &{this} [{','.join(['*' + prev] * 9)}]")
    return "\n".join(lines) + "\n"


INVALID_VALUES_YAML = [
    _billion_laughs(),
    "a: &a [*a]\n",
    "[" * 5_000 + "]" * 5_000,
    "a: " + "x" * 300_000,
    "integrations: [unclosed",
    "{{{{",
]
HOSTILE_CHART_VERSIONS = ["1." + "9" * 400, "9" * 300, "../../../etc", "1.0.0\x00", "1.0.0/evil", ".."]
DEEP_LEVELS = [150, 250, 1_000, 3_000]
RESOURCE_GROUP_COUNTS = [3_000]
LEAF_VALUES: list[Any] = [None, 2**70, -(2**70), "x" * 10_000, [], {}, [1, "a", None], 1e308, -0.0, "ÿ\u0000"]
# The suite's mutations of a kind with fewer hostile values than this (deep, resource-groups,
# secret): still several resources each.
COVERING_MINIMUM = 4
QUANTITY_KEYS = frozenset({"nominalQuota", "borrowingLimit", "lendingLimit"})
VALUES_YAML_PATHS = (
    ("values", "managerConfig", "controllerManagerConfigYaml"),
    ("values", "apiService", "config"),
)

Path_ = tuple[str | int, ...]


@dataclass
class Seed:
    name: str
    records: list[RecordedResource]
    baseline: set[tuple[str, str]] = field(default_factory=set)  # (urn, message) of the unmutated run
    resources: list[Any] = field(default_factory=list)  # AnalyzerResource per record, built once


@dataclass
class Mutation:
    kind: str
    seed: Seed
    index: int  # the changed record
    inputs: dict[str, Any]
    must_find: bool = False  # an invalid quantity / fraction / values YAML
    marker: str | None = None  # a secret that must never be quoted
    value_index: int = 0  # which of Mutator.VALUES[kind] was sent


# Python's names for types and errors, which a finding must never use (issue 31): the user reads
# YAML and JSON, so a type is null, boolean, number, string, mapping or list, and an error is
# described, not named by its class.
# A word, not part of a hyphenated Kubernetes name (``x-kubernetes-int-or-string``).
PYTHON_WORDS = re.compile(
    r"(?<![-\w])(NoneType|dict|str|int|float|bool|tuple|Decimal|Traceback|Exception|"
    r"[A-Z][A-Za-z]*(?:Error|Exception)|DivisionByZero|InvalidOperation|StopIteration)(?![-\w])"
)


@dataclass
class Figures:
    mutations: int = 0
    crashes: list[str] = field(default_factory=list)
    hangs: list[str] = field(default_factory=list)
    max_call_s: float = 0.0
    invalid: int = 0
    invalid_found: int = 0
    missed: list[str] = field(default_factory=list)
    leaked: list[str] = field(default_factory=list)
    internal_errors: list[str] = field(default_factory=list)
    python_words: list[str] = field(default_factory=list)
    by_kind: dict[str, int] = field(default_factory=dict)
    values_by_kind: dict[str, set[int]] = field(default_factory=dict)  # indexes into Mutator.VALUES[kind]

    def summary(self) -> str:
        kinds = ", ".join(f"{k} {n}" for k, n in sorted(self.by_kind.items()))
        return (
            f"mutations {self.mutations} ({kinds}); crashes {len(self.crashes)}; hangs (> {CALL_DEADLINE_S:.0f} s) "
            f"{len(self.hangs)}; max call {self.max_call_s:.2f} s; invalid quantity/fraction/values-YAML "
            f"mutations {self.invalid}, with a finding {self.invalid_found}; secrets quoted {len(self.leaked)}; "
            f"internal rule errors {len(self.internal_errors)}; findings in Python's words {len(self.python_words)}"
        )


# --- seeds ------------------------------------------------------------------------------------
def manifest_seeds() -> list[Seed]:
    seeds = []
    for path in sorted(SEEDS.glob("*.yaml")):
        docs: list[Any] = []
        for name in [*SEED_BASES.get(path.name, []), path.name]:
            docs.extend(yaml.safe_load_all((SEEDS / name).read_text()))
        records = [
            seed_stack_record(stack="dev", project="gpu-batch"),
            *records_from_manifests(docs, stack="dev", project="gpu-batch"),
        ]
        seeds.append(Seed(f"seed:{path.stem}", records))
    return seeds


def plan_seeds() -> list[Seed]:
    from preview.stack_files import stack_names
    from tests.compact_crds import with_compact_crd_schemas
    from tests.stack_runner import unedited_run

    return [
        Seed(f"plan:{stack}", with_compact_crd_schemas(unedited_run(stack).resources))
        for stack in stack_names(ROOT)
    ]


# --- mutations --------------------------------------------------------------------------------
def _leaves(value: Any, path: Path_ = ()) -> Iterator[tuple[Path_, Any]]:
    stack: list[tuple[Path_, Any]] = [(path, value)]
    while stack:
        where, item = stack.pop()
        if isinstance(item, dict):
            stack.extend(((*where, k), v) for k, v in item.items())
        elif isinstance(item, list):
            stack.extend(((*where, i), v) for i, v in enumerate(item))
        else:
            yield where, item


def _set(document: dict[str, Any], path: Path_, value: Any) -> dict[str, Any]:
    out = copy.deepcopy(document)
    node: Any = out
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return out


def _get(document: Any, path: Path_) -> Any:
    node = document
    for key in path:
        if isinstance(node, dict) and isinstance(key, str):
            node = node.get(key)
        elif isinstance(node, list) and isinstance(key, int) and key < len(node):
            node = node[key]
        else:
            return None
    return node


def _quantity_leaf(path: Path_) -> bool:
    if len(path) >= 3 and path[-2] in ("requests", "limits") and path[-3] == "resources":
        return True
    return bool(path) and path[-1] in QUANTITY_KEYS


def _nested(levels: int, leaf: Any) -> Any:
    value = leaf
    for i in range(levels):
        value = {"n": value} if i % 2 else [value]
    return value


def _targets(seeds: list[Seed], pick: Callable[[Path_, Any], bool]) -> list[tuple[Seed, int, Path_]]:
    return [
        (seed, index, path)
        for seed in seeds
        for index, record in enumerate(seed.records)
        if record.custom
        for path, leaf in _leaves(record.inputs)
        if pick(path, leaf)
    ]


class Mutator:
    """Seeded mutations over ``seeds`` (the same seed and count give the same mutations)."""

    KINDS = (
        "quantity",
        "fraction",
        "values-yaml",
        "deep",
        "resource-groups",
        "secret",
        "leaf",
        "chart-version",
    )
    # The hostile values of each kind, sent in turn (the secret's value is its marker, one shape).
    VALUES: ClassVar[dict[str, list[Any]]] = {
        "quantity": HOSTILE_QUANTITIES,
        "fraction": HOSTILE_FRACTIONS,
        "values-yaml": INVALID_VALUES_YAML,
        "deep": DEEP_LEVELS,
        "resource-groups": RESOURCE_GROUP_COUNTS,
        "secret": ["marker"],
        "leaf": LEAF_VALUES,
        "chart-version": HOSTILE_CHART_VERSIONS,
    }

    def __init__(self, seeds: list[Seed], rng: random.Random) -> None:
        self.rng = rng
        self.quantities = _targets(seeds, lambda p, _: _quantity_leaf(p))
        self.fractions = _targets(seeds, lambda p, _: bool(p) and p[-1] == "gpu-fraction")
        self.strings = _targets(seeds, lambda p, v: isinstance(v, str) and len(v) >= 4)
        self.leaves = _targets(seeds, lambda p, _: bool(p))
        self.yaml_targets = [
            (seed, index, path)
            for seed in seeds
            for index, record in enumerate(seed.records)
            for path in VALUES_YAML_PATHS
            if record.type == "kubernetes:helm.sh/v3:Release" and isinstance(_get(record.inputs, path), str)
        ]
        self.releases = [
            (seed, index, ("version",))
            for seed in seeds
            for index, record in enumerate(seed.records)
            if record.type == "kubernetes:helm.sh/v3:Release"
            and isinstance(record.inputs.get("version"), str)
        ]
        self.queues = [
            (seed, index, ("spec", "resourceGroups"))
            for seed in seeds
            for index, record in enumerate(seed.records)
            if record.type.endswith(":ClusterQueue")
            and isinstance(_get(record.inputs, ("spec", "resourceGroups")), list)
        ]

    def next(self, kind: str, turn: int, count: int) -> Mutation:
        """The ``turn``-th mutation of ``kind`` (its value ``VALUES[kind][turn]``, cycling), the
        ``count``-th of the run.  A kind with no target in the seeds falls back to ``leaf``."""
        rng = self.rng

        def value(of: str) -> tuple[int, Any]:
            values = self.VALUES[of]
            return turn % len(values), values[turn % len(values)]

        if kind == "quantity":
            seed, index, path = rng.choice(self.quantities)
            at, hostile = value(kind)
            invalid = any(
                hostile is v or (hostile == v and type(hostile) is type(v)) for v in INVALID_QUANTITIES
            )
            return self._make(kind, seed, index, path, hostile, at, must_find=invalid)
        if kind == "fraction" and self.fractions:
            seed, index, path = rng.choice(self.fractions)
            at, hostile = value(kind)
            return self._make(kind, seed, index, path, hostile, at, must_find=hostile in INVALID_FRACTIONS)
        if kind == "values-yaml" and self.yaml_targets:
            seed, index, path = rng.choice(self.yaml_targets)
            at, hostile = value(kind)
            return self._make(kind, seed, index, path, hostile, at, must_find=True)
        if kind == "deep":
            seed, index, path = rng.choice(self.leaves)
            at, levels = value(kind)
            return self._make(kind, seed, index, path, _nested(levels, "x"), at)
        if kind == "resource-groups" and self.queues:
            seed, index, path = rng.choice(self.queues)
            at, groups = value(kind)
            group = copy.deepcopy(_get(seed.records[index].inputs, path)[0])
            return self._make(kind, seed, index, path, [copy.deepcopy(group) for _ in range(groups)], at)
        if kind == "chart-version" and self.releases:
            seed, index, path = rng.choice(self.releases)
            at, hostile = value(kind)
            return self._make(kind, seed, index, path, hostile, at, must_find=True)
        if kind == "secret":
            seed, index, path = rng.choice(self.strings)
            marker = f"S3CRET{count:06d}x"
            mutation = self._make(
                kind, seed, index, path, {SECRET_SIG_KEY: SECRET_SIG, "value": marker}, value(kind)[0]
            )
            mutation.marker = marker
            return mutation
        seed, index, path = rng.choice(self.leaves)
        at, hostile = value("leaf")
        return self._make("leaf", seed, index, path, hostile, at)

    @staticmethod
    def _make(
        kind: str,
        seed: Seed,
        index: int,
        path: Path_,
        value: Any,
        value_index: int,
        *,
        must_find: bool = False,
    ) -> Mutation:
        inputs = _set(seed.records[index].inputs, path, value)
        return Mutation(kind, seed, index, inputs, must_find, value_index=value_index)


def round_robin(count: int) -> list[str]:
    """``make fuzz``'s plan: ``count`` mutations, the kinds in turn."""
    return [Mutator.KINDS[n % len(Mutator.KINDS)] for n in range(count)]


def covering_sample(minimum: int = COVERING_MINIMUM) -> list[str]:
    """The suite's plan: every kind as often as it has hostile values (each sent once, since a
    kind's values are sent in turn), at least ``minimum`` times; the kinds interleaved."""
    left = {kind: max(len(Mutator.VALUES[kind]), minimum) for kind in Mutator.KINDS}
    plan: list[str] = []
    while any(left.values()):
        for kind in Mutator.KINDS:
            if left[kind]:
                plan.append(kind)
                left[kind] -= 1
    return plan


# --- driving the pack ---------------------------------------------------------------------------
def _struct(props: dict[str, Any]) -> struct_pb2.Struct:
    message = struct_pb2.Struct()
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 20_000))  # building 3,000-level messages in this process
    try:
        json_format.ParseDict(props, message)
    finally:
        sys.setrecursionlimit(limit)
    return message


def _resource(record: RecordedResource, props: dict[str, Any]) -> Any:
    return analyzer_pb2.AnalyzerResource(
        type=record.type, urn=record.urn, name=record.name, parent=record.parent, properties=_struct(props)
    )


def _stack_request(seed: Seed, index: int, changed: dict[str, Any]) -> Any:
    """The seed's plan with record ``index`` planned as ``changed`` (the others built once)."""
    if not seed.resources:
        seed.resources = [_resource(r, r.outputs) for r in seed.records]
    resources = list(seed.resources)
    if 0 <= index < len(resources):
        resources[index] = _resource(seed.records[index], changed)
    return analyzer_pb2.AnalyzeStackRequest(resources=resources)


class Driver:
    """One pack process; restarted after a crash or a hang (a hung call may still be running)."""

    def __init__(self, pack_dir: Path = ROOT / "policies") -> None:
        self.pack_dir = pack_dir
        self.pack: PolicyPackProcess | None = None

    def __enter__(self) -> Driver:
        self._start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.pack is not None:
            self.pack.close()

    def _start(self) -> None:
        if self.pack is not None:
            self.pack.close()
        self.pack = PolicyPackProcess(self.pack_dir, stack="dev")
        self.pack.start()
        self.pack.configure()

    def calls(self, mutation: Mutation, figures: Figures) -> list[tuple[str, str]] | None:
        """(urn, message) of every finding, or None after a crash or a hang (recorded)."""
        assert self.pack is not None
        seed, record = mutation.seed, mutation.seed.records[mutation.index]
        props = _struct(mutation.inputs)
        request = analyzer_pb2.AnalyzeRequest(
            type=record.type, urn=record.urn, name=record.name, properties=props
        )
        stack_request = _stack_request(seed, mutation.index, mutation.inputs)
        found: list[tuple[str, str]] = []
        where = f"{mutation.kind} on {seed.name} {record.type} '{record.name}'"
        for method, message in (
            ("Remediate", request),
            ("Analyze", request),
            ("AnalyzeStack", stack_request),
        ):
            started = time.perf_counter()
            try:
                response = getattr(self.pack.stub, method)(message, timeout=CALL_DEADLINE_S)
            except grpc.RpcError as exc:
                code, _ = _rpc_status(exc)
                if code == grpc.StatusCode.DEADLINE_EXCEEDED:
                    figures.hangs.append(f"{where}: {method}")
                else:
                    figures.crashes.append(f"{where}: {method}: {code}")
                self._start()
                return None
            finally:
                figures.max_call_s = max(figures.max_call_s, time.perf_counter() - started)
            if method != "Remediate":
                found.extend(
                    (d.urn or record.urn if method == "Analyze" else d.urn, d.message)
                    for d in response.diagnostics
                )
        return found


def baseline(driver: Driver, seed: Seed) -> None:
    """The findings of the unmutated seed (each resource's Analyze and one AnalyzeStack)."""
    assert driver.pack is not None
    for record in seed.records:
        request = analyzer_pb2.AnalyzeRequest(
            type=record.type, urn=record.urn, name=record.name, properties=_struct(record.inputs)
        )
        for d in driver.pack.stub.Analyze(request, timeout=60).diagnostics:
            seed.baseline.add((d.urn or record.urn, d.message))
    stack = _stack_request(seed, -1, {})
    seed.baseline.update(
        (d.urn, d.message) for d in driver.pack.stub.AnalyzeStack(stack, timeout=60).diagnostics
    )


def run(
    plan: list[str], rng_seed: int, seeds: list[Seed], report: Callable[[str], None] | None = None
) -> Figures:
    """One mutation per entry of ``plan`` (a kind: :func:`round_robin` or :func:`covering_sample`)."""
    figures = Figures()
    turns: dict[str, int] = {}
    with Driver() as driver:
        for seed in seeds:
            baseline(driver, seed)
        mutator = Mutator(seeds, random.Random(rng_seed))
        for n, kind in enumerate(plan):
            turn = turns[kind] = turns.get(kind, -1) + 1
            mutation = mutator.next(kind, turn, n)
            figures.mutations += 1
            figures.by_kind[mutation.kind] = figures.by_kind.get(mutation.kind, 0) + 1
            figures.values_by_kind.setdefault(mutation.kind, set()).add(mutation.value_index)
            found = driver.calls(mutation, figures)
            if found is None:
                continue
            record = mutation.seed.records[mutation.index]
            figures.internal_errors.extend(m for _, m in found if "internal error" in m)
            figures.python_words.extend(m for _, m in found if PYTHON_WORDS.search(m))
            if mutation.must_find:
                figures.invalid += 1
                # A release that cannot be resolved is "cannot check" of the stack rules, which the
                # SDK reports without a URN: its finding names the chart instead.
                new = [
                    m
                    for urn, m in found
                    if (urn, m) not in mutation.seed.baseline
                    and (urn == record.urn or (mutation.kind == "chart-version" and "chart" in m))
                ]
                if new:
                    figures.invalid_found += 1
                else:
                    figures.missed.append(
                        f"{mutation.kind} on {mutation.seed.name} {record.type} '{record.name}'"
                    )
            if mutation.marker is not None and any(mutation.marker in m for _, m in found):
                figures.leaked.append(f"{mutation.seed.name} {record.type} '{record.name}'")
            if report is not None and (n + 1) % 500 == 0:
                report(f"{n + 1} mutations: {figures.summary()}")
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mutations", type=int, default=5_000)
    parser.add_argument("--seed", type=int, default=12)
    args = parser.parse_args()
    started = time.perf_counter()
    figures = run(round_robin(args.mutations), args.seed, manifest_seeds() + plan_seeds(), report=print)
    print(f"fuzz (seed {args.seed}): {figures.summary()}; {time.perf_counter() - started:.0f} s in all")
    for title, items in (
        ("crashes", figures.crashes),
        ("hangs", figures.hangs),
        ("invalid without a finding", figures.missed),
        ("secrets quoted", figures.leaked),
        ("internal rule errors", figures.internal_errors),
        ("findings in Python's words", figures.python_words),
    ):
        for item in sorted(set(items))[:20]:
            print(f"  {title}: {item}")
    if (
        figures.crashes
        or figures.hangs
        or figures.missed
        or figures.leaked
        or figures.internal_errors
        or figures.python_words
    ):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
