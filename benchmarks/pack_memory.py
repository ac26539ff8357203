"""The pack's resident memory over many analysed stacks in ONE pack process (issue 31).

A ``pulumi preview`` of a large program, or a CI runner reusing one pack, sends the pack stack
after stack; every cache the pack keeps must stay bounded (``gpu_batch_policy.primitives.bounded``), so the
process must not grow with the number of stacks.  This drives ``--stacks`` distinct stacks through
one pack process over the analyzer gRPC protocol (``preview.analyzer.PolicyPackProcess``, as the
engine does) and prints the pack's resident set every tenth of the way and its peak (``VmHWM``).

Every stack is different, so nothing is served from a cache keyed by content: its own names,
quotas and labels; a Kueue Helm release whose values differ per stack (``--distinct-releases``
variants in turn, each rendered by the real Helm engine: more than the pack's in-memory render
cache holds); a CRD of its own (a schema pattern and a CEL rule no other stack has) and an
object of it; AppWrappers, Jobs, JobSets, Deployments and a Service.

``--reference-teams N`` also records the repository's ``make bench`` stack of N teams
(``benchmarks.scale.stack_document``) and prints the pack's peak on that single stack, the figure
the many-stacks peak must stay under.  Run from the repository root::

    python -m benchmarks.pack_memory                      # 50 stacks: the default, for a shared machine
    python -m benchmarks.pack_memory --stacks 1000 --reference-teams 1000

Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from preview.analyzer import PolicyPackProcess
from preview.records import RecordedResource

ROOT = Path(__file__).resolve().parent.parent
POLICIES = ROOT / "policies"
STACK_URN = "urn:pulumi:bench::gpu-batch::pulumi:pulumi:Stack::gpu-batch-bench"
KUEUE_CHART = "oci://registry.k8s.io/kueue/charts/kueue"


def _record(kind_token: str, name: str, props: dict[str, Any]) -> RecordedResource:
    urn = f"urn:pulumi:bench::gpu-batch::{kind_token}::{name}"
    return RecordedResource(urn, kind_token, name, STACK_URN, "", True, props, props)


def _k8s(api_version: str, kind: str, name: str, namespace: str | None, **body: Any) -> RecordedResource:
    group, _, version = api_version.rpartition("/")
    metadata: dict[str, Any] = {"name": name}
    if namespace is not None:
        metadata["namespace"] = namespace
    props = {"apiVersion": api_version, "kind": kind, "metadata": metadata, **body}
    return _record(
        f"kubernetes:{group or 'core'}/{version}:{kind}", f"{namespace or 'cluster'}-{name}", props
    )


def _pod(i: int, gpus: int) -> dict[str, Any]:
    requests = {"cpu": f"{1 + i % 7}", "memory": f"{2 + i % 5}Gi", "nvidia.com/gpu": str(gpus)}
    container = {"name": f"c{i}", "image": f"busybox:1.{i % 37}", "resources": {"requests": requests}}
    return {
        "metadata": {"labels": {"team": f"t{i}"}},
        "spec": {"containers": [container], "restartPolicy": "Never"},
    }


def stack(i: int, distinct_releases: int) -> list[RecordedResource]:
    """Stack number ``i``: distinct from every other in names, quantities and schemas."""
    ns, queue, flavor = f"team-{i}", f"lq-{i}", f"flavor-{i}"
    labels = {"kueue.x-k8s.io/queue-name": queue}
    quota = [
        {"name": "cpu", "nominalQuota": 100 + i},
        {"name": "memory", "nominalQuota": f"{400 + i}Gi"},
        {"name": "nvidia.com/gpu", "nominalQuota": 8 + i % 9},
    ]
    group = "bench.example.com"
    plural = f"trainers{i}"
    crd_schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {
                    "size": {"type": "integer"},
                    "tag": {"type": "string", "pattern": f"^t{i}-[a-z]+$"},
                },
                "x-kubernetes-validations": [{"rule": f"self.size <= {100 + i}", "message": "too big"}],
            }
        },
    }
    crd = {
        "group": group,
        "names": {
            "kind": f"Trainer{i}",
            "plural": plural,
            "singular": f"trainer{i}",
            "listKind": f"Trainer{i}List",
        },
        "scope": "Namespaced",
        "versions": [
            {"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": crd_schema}}
        ],
    }
    release_values = {
        "controllerManager": {
            "manager": {"resources": {"requests": {"cpu": f"{100 + i % distinct_releases}m"}}}
        }
    }
    job = {"parallelism": 1 + i % 4, "template": _pod(i, 1)}
    wrapped = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": f"w{i}"}, "spec": job}
    replicated = [
        {"name": "workers", "replicas": 2, "template": {"spec": {"parallelism": 2, "template": _pod(i, 1)}}}
    ]
    return [
        RecordedResource(STACK_URN, "pulumi:pulumi:Stack", "gpu-batch-bench", "", "", False, {}, {}),
        _record(
            "kubernetes:helm.sh/v3:Release",
            f"kueue-{i}",
            {
                "name": "kueue",
                "chart": KUEUE_CHART,
                "version": "0.19.2",
                "namespace": "kueue-system",
                "values": release_values,
            },
        ),
        _k8s("v1", "Namespace", ns, None),
        _k8s(
            "kueue.x-k8s.io/v1beta2", "ResourceFlavor", flavor, None, spec={"nodeLabels": {"pool": f"p{i}"}}
        ),
        _k8s(
            "kueue.x-k8s.io/v1beta2",
            "ClusterQueue",
            f"cq-{i}",
            None,
            spec={
                "namespaceSelector": {},
                "resourceGroups": [
                    {
                        "coveredResources": ["cpu", "memory", "nvidia.com/gpu"],
                        "flavors": [{"name": flavor, "resources": quota}],
                    }
                ],
            },
        ),
        _k8s("kueue.x-k8s.io/v1beta2", "LocalQueue", queue, ns, spec={"clusterQueue": f"cq-{i}"}),
        _k8s("apiextensions.k8s.io/v1", "CustomResourceDefinition", f"{plural}.{group}", None, spec=crd),
        _k8s(f"{group}/v1", f"Trainer{i}", f"tr-{i}", ns, spec={"size": i % 50, "tag": f"t{i}-abc"}),
        _k8s(
            "batch/v1",
            "Job",
            f"job-{i}",
            ns,
            spec=job,
            **{"metadata": {"name": f"job-{i}", "namespace": ns, "labels": labels}},
        ),
        _k8s(
            "workload.codeflare.dev/v1beta2",
            "AppWrapper",
            f"aw-{i}",
            ns,
            spec={"components": [{"template": wrapped}]},
            **{"metadata": {"name": f"aw-{i}", "namespace": ns, "labels": labels}},
        ),
        _k8s("jobset.x-k8s.io/v1alpha2", "JobSet", f"js-{i}", ns, spec={"replicatedJobs": replicated}),
        _k8s(
            "apps/v1",
            "Deployment",
            f"serve-{i}",
            ns,
            spec={
                "replicas": 1 + i % 3,
                "selector": {"matchLabels": {"app": f"s{i}"}},
                "template": _pod(i, 0),
            },
        ),
        _k8s(
            "v1",
            "Service",
            f"svc-{i}",
            ns,
            spec={"ports": [{"port": 8000 + i % 1000}], "selector": {"app": f"s{i}"}},
        ),
    ]


def many_stacks(count: int, distinct_releases: int) -> tuple[int, list[tuple[int, int]]]:
    """Analyse ``count`` stacks in one pack process: (peak KiB, [(stacks done, RSS KiB)])."""
    samples: list[tuple[int, int]] = []
    step = max(1, count // 10)
    with PolicyPackProcess(POLICIES, stack="bench") as process:
        process.configure()
        for i in range(count):
            process.analyze(stack(i, distinct_releases))
            if (i + 1) % step == 0 or i + 1 == count:
                samples.append((i + 1, process.resident_kib() or 0))
                print(f"  stacks={i + 1} rss_mib={samples[-1][1] / 1024:.1f}", flush=True)
        return process.peak_kib() or 0, samples


def reference_peak(teams: int) -> str:
    """The pack's peak on the ``make bench`` stack of ``teams`` teams (recorded, then analysed)."""
    from benchmarks.scale import bench_project, stack_document

    with tempfile.TemporaryDirectory(prefix="gpu-batch-packmem-") as tmp:
        root = Path(tmp)
        project = bench_project(root)
        name = f"bench-{teams}"
        (project / f"Pulumi.{name}.yaml").write_text(yaml.safe_dump(stack_document(teams)))
        records = root / "records.json"
        run = [sys.executable, "-m", "benchmarks.stage_floors"]
        subprocess.run([*run, "record", str(project), name, str(records)], cwd=ROOT, check=True)
        done = subprocess.run(
            [*run, "pack", str(records), str(POLICIES), str(project), name],
            cwd=ROOT,
            check=True,
            capture_output=True,
            text=True,
        )
        return done.stdout.strip()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--stacks", type=int, default=50, help="stacks analysed in one pack process (default 50)"
    )
    parser.add_argument(
        "--distinct-releases", type=int, default=40, help="distinct Kueue release values (default 40)"
    )
    parser.add_argument("--reference-teams", type=int, default=0, help="also the peak on one N-team stack")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    print(f"stacks={args.stacks} resources_per_stack={len(stack(0, 1)) - 1} in one pack process", flush=True)
    peak, samples = many_stacks(args.stacks, max(1, args.distinct_releases))
    first = samples[0][1] if samples else 0
    print(
        f"pack_peak_mib={peak / 1024:.1f} rss_first_tenth_mib={first / 1024:.1f} "
        f"rss_last_mib={samples[-1][1] / 1024 if samples else 0:.1f} wall_s={time.perf_counter() - start:.1f}",
        flush=True,
    )
    if args.reference_teams:
        print(
            f"reference: one {args.reference_teams}-team stack: {reference_peak(args.reference_teams)}",
            flush=True,
        )


if __name__ == "__main__":
    main()
