"""``python -m preview --stack dev``: the offline ``pulumi preview --policy-pack policies``.

Exit codes: 0 clean, 1 a mandatory policy violation, an invalid object or a chart that refuses
its release's values, 2 a stack config or stack file error, a pinned chart that can be
resolved from nowhere, or a policy pack that cannot be started, configured or called (printed
as one line each, never a traceback).
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from components.chart_crds import ChartCrdsError
from preview.analyzer import (
    AnalysisResult,
    AnalyzerError,
    format_diagnostic,
    in_display_order,
    load_policy_config_file,
)
from preview.base_plan import BasePlanError, check_ref, plan_at
from preview.charts import (
    ChartUnavailableError,
    ReleaseManifests,
    crd_catalog_for,
    render_recorded_releases,
    resolve_locked,
)
from preview.clusters import ClusterGroup, cluster_groups
from preview.cost.budget import POLICY as BUDGET
from preview.cost.budget import blocks, budget_findings
from preview.cost.estimate import plan_cost
from preview.cost.prices import price_table
from preview.cost.section import cost_changes, cost_section
from preview.findings.document import (
    Finding,
    Locator,
    config_findings,
    findings_document,
    policy_findings,
    write_findings,
)
from preview.findings.levels import preview_level
from preview.findings.sarif import sarif_log, write_sarif
from preview.findings.summary import findings_by_line
from preview.harness import RunResult, run_program
from preview.hosted_session import HostedSession, start_session
from preview.manifests import (
    manifests_text,
    object_identity,
    patch_identities,
    render_manifests,
    rendered_objects,
    stack_kubernetes_minor,
    unvalidated_pinned,
    validate_manifests,
    write_manifests,
)
from preview.plan import plan_document, write_plan
from preview.plan_diff import diff_plans, render_changes
from preview.process_figures import own_cpu_s
from preview.project import PROJECT_DIR
from preview.records import RecordedResource
from preview.report import capacity_sections, markdown_table, policy_section
from preview.ssa_patches import applied, is_patch
from preview.stack_files import StackFileError, StackFiles, load_stack_files
from preview.tree import render_tree
from preview.upgrades.plans import blocked_upgrades, cluster_minor_sections, upgrade_sections
from stacks.errors import ConfigError


def main(argv: list[str] | None = None, *, exits_after: bool = False) -> int:
    """Run the preview; ``exits_after`` says the process ends with it (``python -m preview``), so
    the program's heap may be frozen instead of collected (see ``run_program``)."""
    parser = argparse.ArgumentParser(prog="python -m preview", description=__doc__)
    parser.add_argument("--stack", default="dev", help="stack name (Pulumi.<stack>.yaml); default dev")
    parser.add_argument("--out", type=Path, default=PROJECT_DIR / "build", help="output folder")
    parser.add_argument("--project-dir", type=Path, default=PROJECT_DIR, help=argparse.SUPPRESS)
    parser.add_argument("--quiet", action="store_true", help="do not print the resource tree")
    parser.add_argument("--no-policy", action="store_true", help="skip the policy pack")
    parser.add_argument(
        "--policy-pack", type=Path, default=PROJECT_DIR / "policies", help="policy pack folder"
    )
    parser.add_argument(
        "--policy-config",
        type=Path,
        default=None,
        help="--policy-pack-config file; default policies/config.<stack>.json when it exists",
    )
    parser.add_argument("--timings", action="store_true", help="print seconds per stage as JSON")
    parser.add_argument(
        "--base",
        metavar="REF",
        default=None,
        help="also preview the stack at git REF and list what `pulumi up` would create, update, "
        "replace or delete (in the report, and exit 1 if a protected resource would be replaced)",
    )
    parser.set_defaults(freeze_heap=exits_after)
    args = parser.parse_args(argv)
    clock = StageClock()

    try:
        with clock.stage("resolve"):
            resolve_locked()
    except ChartUnavailableError as error:
        print(str(error), file=sys.stderr)
        return 2
    try:
        files = load_stack_files(args.project_dir, args.stack)
    except StackFileError as error:
        print(f"stack file error: {error}", file=sys.stderr)
        return 2
    if args.base is not None:
        try:
            check_ref(args.base, args.project_dir)
        except BasePlanError as error:
            print(str(error), file=sys.stderr)
            return 2
    try:
        session = None if args.no_policy else _start_policies(args, files.project, files.stack, files.config)
    except AnalyzerError as error:
        print(f"policy pack error: {error}", file=sys.stderr)
        return 2
    try:
        return _preview(args, files, session, clock)
    except ConfigError as error:  # also a finding at the line of each key it names
        print(str(error), file=sys.stderr)
        locator = Locator(args.project_dir, files.project, files.stack)
        _write_findings(args, files, config_findings(error.issues, locator), None)
        return 2
    except ChartCrdsError as error:  # a chart whose CRDs the config declares
        print(str(error), file=sys.stderr)
        return 2
    except StackFileError as error:
        print(f"stack file error: {error}", file=sys.stderr)
        return 2
    except AnalyzerError as error:
        print(f"policy pack error: {error}", file=sys.stderr)
        return 2
    finally:
        if session is not None:
            session.close()


def _preview(
    args: argparse.Namespace, files: StackFiles, session: HostedSession | None, clock: StageClock
) -> int:
    """The program with the pack streaming alongside, then the outputs while ``AnalyzeStack`` runs."""
    with clock.stage("program"):
        result = run_program(
            args.project_dir,
            files,
            on_record=session.analyze if session is not None else None,
            freeze_heap=args.freeze_heap,
        )
    if session is not None:
        session.analyze_stack(result.resources)
    code = _write_outputs(args, files, result, clock)
    # Everything that needs no pack answer -- the capacity sections, the cost and its budget
    # findings, the locator of findings -- while the pack still runs AnalyzeStack: at 1,000 teams
    # the pack ends the run, so what waits for it adds to the wall time (~1.5 s of cost and locator).
    with clock.stage("report"):
        capacity = capacity_sections(files.stack, result.resources, _policy_config(args, files.stack))
        prices = price_table(files.config)
        head_plan = json.loads((args.out / args.stack / "plan.json").read_text())
        cost = plan_cost(head_plan, prices)
        (args.out / args.stack / "cost.json").write_text(json.dumps(cost, indent=2) + "\n")
        costs = cost_section(cost, markdown_table)
        locator = Locator(args.project_dir, files.project, files.stack, result.resources)
        budgets = budget_findings(
            files.config, cost, locator, preview_level(_policy_config(args, files.stack), BUDGET)
        )
    analysis: AnalysisResult | None = None
    if session is not None:
        with clock.stage("policy"):  # only the wait left once the outputs are written
            analysis = session.result()
        _print_policy_results(analysis, result)
        code = code or (0 if analysis.passed else 1)
    found = policy_findings(analysis, result.resources, locator) if analysis is not None else []
    found += budgets
    for finding in budgets:  # the preview's own findings, said where the pack's are
        print(f"{finding.level}: [{finding.policy}] {finding.message}")
    code = code or (1 if blocks(budgets) else 0)
    by_line = findings_by_line(_write_findings(args, files, found, analysis), markdown_table)
    changes: list[str] = []
    if args.base is not None:
        changes, status, base_plan = _changes_against(
            args.base, args.stack, args.project_dir, args.out, head_plan
        )
        code = code or status
        if base_plan is not None:
            changes += cost_changes(plan_cost(base_plan, prices), cost, args.base, markdown_table)
    report_path = args.out / args.stack / "report.md"
    report_path.write_text(
        "\n".join([*capacity, *costs, *changes, *policy_section(analysis), *by_line]) + "\n"
    )
    print(f"capacity report: {_rel(report_path)}")
    if args.timings:
        print(f"timings: {json.dumps({**clock.seconds, **_process_figures(session)})}")
    return code


def _write_outputs(args: argparse.Namespace, files: StackFiles, result: RunResult, clock: StageClock) -> int:
    """plan.json, the tree, the chart renders, manifests.yaml and their validation: the work that
    overlaps ``AnalyzeStack``.

    Returns 1 when an object is invalid or a chart refuses its release's values, else 0."""
    out_dir = args.out / args.stack
    plan_path = out_dir / "plan.json"
    with clock.stage("plan"):
        write_plan(plan_path, plan_document(files.project, files.stack, result.resources, result.outputs))
    if not args.quiet:
        for line in render_tree(result.resources):
            print(line)
    print(f"\n{len(result.resources)} resources planned for stack {args.stack}; wrote {_rel(plan_path)}")
    manifests = out_dir / "manifests.yaml"
    return 1 if _charts_and_manifests(result, manifests, clock, args.project_dir) else 0


def _changes_against(
    ref: str, stack: str, project_dir: Path, out: Path, head: dict[str, Any]
) -> tuple[list[str], int, dict[str, Any] | None]:
    """The change list against the stack at ``ref`` (printed, and returned for the report), an
    exit status (1 when the engine would refuse it: a protected resource replaced or deleted; 2
    when the base cannot be previewed) and the base plan (None when it cannot be made)."""
    try:
        base = plan_at(ref, stack, project_dir)
    except BasePlanError as error:
        print(str(error), file=sys.stderr)
        return [f"### Changes against `{ref}`", "", f"Not compared: {error}", ""], 2, None
    changes = diff_plans(base, head)
    lines = [
        *render_changes(changes, ref),
        *upgrade_sections(base, head),
        *cluster_minor_sections(base, head),
    ]
    print("\n".join(lines))
    (out / stack / "changes.md").write_text("\n".join(lines) + "\n")
    refused = any(c.blocking for c in changes) or bool(blocked_upgrades(base, head))
    return lines, 1 if refused else 0, base


def _write_findings(
    args: argparse.Namespace, files: StackFiles, found: list[Finding], analysis: AnalysisResult | None
) -> dict[str, Any]:
    """``findings.json`` (the single source) and ``findings.sarif`` (one run, this stack's category)."""
    out_dir = args.out / args.stack
    document = findings_document(files.project, files.stack, found, analysis)
    write_findings(out_dir / "findings.json", document)
    write_sarif(out_dir / "findings.sarif", sarif_log([document]))
    print(f"findings: {_rel(out_dir / 'findings.json')}, {_rel(out_dir / 'findings.sarif')}")
    return document


class StageClock:
    """Wall seconds per stage, so a slow preview says where its time goes."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[name] = round(self.seconds.get(name, 0.0) + time.perf_counter() - start, 4)


def _process_figures(session: HostedSession | None) -> dict[str, float]:
    """Peak resident MiB and own CPU seconds of this process, of the analysis host and of the pack.

    The pack's figures are its own (``VmHWM``, ``/proc/<pid>/stat``), read by the host before the
    pack is stopped: ``RUSAGE_CHILDREN`` would report the largest child, and a child forked from
    this process starts with a copy of its heap (that read ~360 MiB for a pack that peaked at
    ~198 MiB).  The CPU seconds are what compares on a machine shared with other work.
    """
    to_mib = 1 / 1024  # ru_maxrss and VmHWM are in KiB on Linux
    figures = session.figures() if session is not None else None
    pack_kib = figures.pack_peak_kib if figures is not None else None
    return {
        "peak_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * to_mib, 1),
        "pack_peak_mib": round(pack_kib * to_mib, 1) if pack_kib is not None else 0.0,
        "cpu_s": round(own_cpu_s(), 2),
        "host_cpu_s": round(figures.host_cpu_s, 2) if figures is not None else 0.0,
        "pack_cpu_s": round(figures.pack_cpu_s or 0.0, 2) if figures is not None else 0.0,
        # The run's end: the Analyze calls still queued when the program finished, then AnalyzeStack.
        "analyze_backlog_s": round(figures.analyze_backlog_s or 0.0, 2) if figures is not None else 0.0,
        "analyze_stack_s": round(figures.analyze_stack_s or 0.0, 2) if figures is not None else 0.0,
    }


def _policy_config_file(args: argparse.Namespace, stack: str) -> Path | None:
    """``--policy-config``, else ``policies/config.<stack>.json`` when it exists."""
    path: Path = args.policy_config or args.policy_pack / f"config.{stack}.json"
    return path if path.exists() else None


def _policy_config(args: argparse.Namespace, stack: str) -> dict[str, Any] | None:
    """The policy config object the pack runs with (the report reads the reservation sizes)."""
    path = _policy_config_file(args, stack)
    return load_policy_config_file(path) if path is not None else None


def _start_policies(
    args: argparse.Namespace, project: str, stack: str, config: dict[str, str]
) -> HostedSession:
    """The pack as ``pulumi preview --policy-pack policies --policy-pack-config <file>`` runs it,
    started before the program (as the engine loads its analyzers first)."""
    return start_session(
        pack_dir=args.policy_pack,
        config_file=_policy_config_file(args, stack),
        stack=stack,
        project=project,
        stack_config=config,
    )


def _print_policy_results(analysis: AnalysisResult, result: RunResult) -> None:
    for diagnostic in in_display_order(analysis.diagnostics):
        print(format_diagnostic(diagnostic, result.resources))
    mandatory = len(analysis.mandatory)
    others = len(analysis.diagnostics) - mandatory
    verdict = "FAILED" if mandatory else "passed"
    internal = sum("internal error in " in d.message for d in analysis.diagnostics)
    print(
        f"policy pack {analysis.pack_name}: {verdict} "
        f"({len(analysis.policies)} policies, {mandatory} mandatory, {others} advisory findings"
        f"{f', {internal} internal errors' if internal else ''})"
    )


def _charts_and_manifests(
    result: RunResult, manifests_path: Path, clock: StageClock, project_dir: Path
) -> int:
    """Render every release, write ``manifests.yaml`` and validate every object in it.

    Returns the failures: objects their schema rejects plus releases whose chart refuses them."""
    with clock.stage("render"):
        releases = render_recorded_releases(result.resources, project_dir)
    refused = _print_renders(releases)
    with clock.stage("manifests"):
        groups = cluster_groups(result.resources, releases)
        if len(groups) > 1:
            return refused + _per_cluster_manifests(groups, manifests_path)
        declared = render_manifests(result.resources)
        objects = [*declared, *rendered_objects(releases)]
        write_manifests(manifests_path, declared, releases)
        kubernetes = stack_kubernetes_minor(result.resources)
        catalog = crd_catalog_for(releases, declared)
        invalid = validate_manifests(
            _patches_applied(result.resources, releases),
            catalog=catalog,
            kubernetes=kubernetes,
            patches=_standalone_patches(result.resources, releases),
        )
        unvalidated = unvalidated_pinned(objects)
    for line in invalid:
        print(f"[invalid] {line}")
    for line in unvalidated:
        print(f"[not validated] {line}")
    print(
        f"{len(objects)} Kubernetes objects ({len(declared)} declared, "
        f"{len(objects) - len(declared)} from {len(releases)} Helm releases): wrote {_rel(manifests_path)}; "
        + (
            f"{len(invalid)} rejected by their schema"
            if invalid
            else ("every checked object" if unvalidated else "every object")
            + " valid against its CRD or the Kubernetes schema"
        )
        + (f", {len(unvalidated)} not validated (pinned CRDs not available here)" if unvalidated else "")
        + f" ({kubernetes})"
    )
    return len(invalid) + refused


def _patches_applied(
    resources: Sequence[RecordedResource], releases: list[ReleaseManifests]
) -> list[Mapping[str, Any]]:
    """What the API server validates: every object, each ``<Kind>Patch`` merged into its target
    (:mod:`preview.ssa_patches`)."""
    whole = [*render_manifests([r for r in resources if not is_patch(r)]), *rendered_objects(releases)]
    return applied(whole, render_manifests([r for r in resources if is_patch(r)]))


def _standalone_patches(
    resources: Sequence[RecordedResource], releases: list[ReleaseManifests]
) -> frozenset[tuple[str, str, str, str]]:
    """The patches :func:`_patches_applied` leaves as they stand (nothing here declares their
    target): judged as partial objects (``gpu_batch_policy.facts.schema.patches``), as the pack does."""
    whole = [*render_manifests([r for r in resources if not is_patch(r)]), *rendered_objects(releases)]
    return patch_identities(resources) - {object_identity(o) for o in whole}


def _per_cluster_manifests(groups: list[ClusterGroup], manifests_path: Path) -> int:
    """``manifests.yaml`` with one section per cluster, each validated as its API server would."""
    sections: list[str] = []
    failures = 0
    for group in groups:
        declared = render_manifests(group.resources)
        objects = [*declared, *rendered_objects(list(group.releases))]
        catalog = crd_catalog_for(list(group.releases), declared)
        invalid = validate_manifests(
            _patches_applied(group.resources, list(group.releases)),
            catalog=catalog,
            kubernetes=group.kubernetes,
            patches=_standalone_patches(group.resources, list(group.releases)),
        )
        for line in invalid:
            print(f"[invalid] {group.title}: {line}")
        for line in unvalidated_pinned(objects):
            print(f"[not validated] {group.title}: {line}")
        failures += len(invalid)
        sections.append(f"# === {group.title} ===\n" + manifests_text(declared, list(group.releases)))
        print(
            f"{group.title}: {len(objects)} Kubernetes objects ({len(declared)} declared, "
            f"{len(objects) - len(declared)} from {len(group.releases)} Helm releases); "
            + (f"{len(invalid)} rejected by their schema" if invalid else "every object valid")
        )
    manifests_path.parent.mkdir(parents=True, exist_ok=True)
    manifests_path.write_text("---\n".join(sections))
    print(f"wrote {_rel(manifests_path)}: {len(groups)} clusters, one section each")
    return failures


def _print_renders(releases: list[ReleaseManifests]) -> int:
    """One line per release that did not render; returns how many the chart refused (failures)."""
    refused = 0
    for release in releases:
        render = release.render
        if render.status == "rendered":
            continue
        if render.status == "refused":
            refused += 1
            print(
                f"[chart] {release.title}: the chart refuses the values ({render.error_kind}): {render.message}"
            )
        else:
            print(f"[chart] {release.title}: not rendered ({render.status}): {render.message}")
    return refused


def _rel(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)
