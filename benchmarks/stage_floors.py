"""Honest floors for the preview's two big stages, each run in its own process.

* ``record <project> <stack> <records.json>``: run the stack's program under the preview harness
  and keep every registration (type, name, wire inputs and outputs) for the floors below.
* ``flat <project-dir> [--as-preview]`` (a project made by :func:`flat_project`): the *program floor* -- a
  program that registers the same recorded resources (same types, names and wire inputs) flat, with no components, parents or
  providers, under the same mocks and harness; prints ``program_s``.
* ``pack <records.json> <pack-dir> <project> <stack>``: the *pack stage* -- the recorded resources
  sent over the analyzer protocol (start, configure, Remediate + Analyze each, AnalyzeStack) to
  the pack in ``pack-dir``, batch, as ``PolicyPackProcess.run`` does; prints ``pack_s``, the
  pack process's own peak memory and CPU seconds.  Pointed at :func:`noop_pack` it is the *pack floor*: as many
  policies of each kind as the real pack, each doing nothing, under the same SDK patch.
* ``protocol <records.json> <pack-dir>`` (a pack made by :func:`bare_pack`): the *protocol
  floor* -- the engine's serial chain alone: ``Remediate`` then ``Analyze`` for each recorded
  resource, one call at a time, through the preview's own client, to a gRPC server set up as
  pulumi-policy sets up a pack's (``pulumi_policy/policy.py`` ``PolicyPack.__init__``) whose
  servicer answers every call at once with an empty response.  No policy SDK, no rules;
  prints ``protocol_s``, the chain's wall seconds (start and configuration not included).  Run
  it in the analysis host's environment (``preview.engine_grpc.host_environment``) to time the
  host's client.
"""

from __future__ import annotations

import json
import os
import sys
import textwrap
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import yaml

from preview.analyzer import PolicyPackProcess, ProviderResolver
from preview.harness import run_program
from preview.records import RecordedResource
from preview.stack_files import load_stack_files

ROOT = Path(__file__).resolve().parent.parent
FLAT_PROGRAM = textwrap.dedent(
    """
    import json

    import pulumi

    seen = set()
    for index, record in enumerate(json.load(open(pulumi.Config().require("records")))):
        if record["type"] == "pulumi:pulumi:Stack":
            continue  # the harness registers the root stack itself
        name = record["name"] if (record["type"], record["name"]) not in seen else f"{record['name']}-{index}"
        seen.add((record["type"], name))
        kind = pulumi.CustomResource if record["custom"] else pulumi.ComponentResource
        kind(record["type"], name, record["inputs"])
    """
)


def load_records(path: Path) -> list[RecordedResource]:
    return [RecordedResource(**entry) for entry in json.loads(path.read_text())]


def record(project: Path, stack: str, out: Path) -> None:
    result = run_program(project, load_stack_files(project, stack))
    wire = ("wire_inputs", "wire_outputs")  # bytes; the floors convert inputs as hand-built records do
    out.write_text(
        json.dumps([{k: v for k, v in asdict(r).items() if k not in wire} for r in result.resources])
    )
    print(f"resources={len(result.resources)}")


def flat_project(records: Path, project: Path) -> Path:
    """A project whose program registers ``records`` flat (the program floor)."""
    project.mkdir()
    (project / "Pulumi.yaml").write_text("name: flat\nruntime: python\n")
    (project / "Pulumi.flat.yaml").write_text(yaml.safe_dump({"config": {"flat:records": str(records)}}))
    (project / "__main__.py").write_text(FLAT_PROGRAM)
    return project


def flat(project: Path, as_preview: bool = False) -> None:
    """The program floor.  Plain, as issue 13 defined it when it set the target: the harness's
    defaults, so the floor also pays the one deferred collection when GC is turned back on.
    ``as_preview``: run exactly as the preview runs its program stage (heap frozen before GC is
    re-enabled, ``os._exit`` once printed), which never pays that collection (1.0-1.8 s at 1,000
    teams): the stricter ``program_ratio_matched``."""
    files = load_stack_files(project, "flat")
    start = time.perf_counter()
    result = run_program(project, files, freeze_heap=as_preview)
    print(f"program_s={time.perf_counter() - start:.4f} resources={len(result.resources)}", flush=True)
    if as_preview:
        os._exit(0)  # like python -m preview: no heap teardown


def noop_pack(pack_dir: Path) -> Path:
    """A pack with as many resource and stack policies as the real one, each doing nothing, with the
    real pack's process settings and SDK patch: what the protocol and the SDK cost alone."""
    from gpu_batch_policy.runtime.registry import ALL_POLICIES
    from pulumi_policy import StackValidationPolicy

    stack_policies = sum(isinstance(p, StackValidationPolicy) for p in ALL_POLICIES)
    resource_policies = len(ALL_POLICIES) - stack_policies
    pack_dir.mkdir()
    (pack_dir / "PulumiPolicy.yaml").write_text("runtime: python\ndescription: no-op floor\n")
    (pack_dir / "__main__.py").write_text(
        textwrap.dedent(
            f"""
            import gc
            import sys

            sys.path.insert(0, {str(ROOT / "policies")!r})
            from gpu_batch_policy.runtime import sdk_speedups
            from pulumi_policy import EnforcementLevel, PolicyPack, ResourceValidationPolicy, StackValidationPolicy

            gc.collect()
            gc.freeze()
            gc.set_threshold(100_000, 50, 100)
            sdk_speedups.install()

            def nothing(args, report_violation):
                return None

            PolicyPack(
                name="noop",
                enforcement_level=EnforcementLevel.MANDATORY,
                policies=[
                    *(ResourceValidationPolicy(name=f"r{{i}}", description="no-op", validate=nothing)
                      for i in range({resource_policies})),
                    *(StackValidationPolicy(name=f"s{{i}}", description="no-op", validate=nothing)
                      for i in range({stack_policies})),
                ],
            )
            """
        )
    )
    return pack_dir


def bare_pack(pack_dir: Path) -> Path:
    """A "pack" that is only pulumi-policy's gRPC server with a servicer answering every call at
    once: the protocol's own cost, with nothing of the policy SDK or of any rule."""
    pack_dir.mkdir()
    (pack_dir / "PulumiPolicy.yaml").write_text("runtime: python\ndescription: protocol floor\n")
    (pack_dir / "__main__.py").write_text(
        textwrap.dedent(
            """
            import sys
            import time
            from concurrent import futures

            import grpc
            from pulumi.runtime.proto import analyzer_pb2, analyzer_pb2_grpc
            from pulumi_policy.policy import _GRPC_CHANNEL_OPTIONS


            class Bare(analyzer_pb2_grpc.AnalyzerServicer):
                def GetAnalyzerInfo(self, request, context):
                    return analyzer_pb2.AnalyzerInfo(name="bare")

                def Remediate(self, request, context):
                    return analyzer_pb2.RemediateResponse()

                def Analyze(self, request, context):
                    return analyzer_pb2.AnalyzeResponse()

                def AnalyzeStack(self, request, context):
                    return analyzer_pb2.AnalyzeResponse()


            # As pulumi_policy/policy.py PolicyPack.__init__ serves a pack.
            server = grpc.server(futures.ThreadPoolExecutor(max_workers=4), options=_GRPC_CHANNEL_OPTIONS)
            analyzer_pb2_grpc.add_AnalyzerServicer_to_server(Bare(), server)
            port = server.add_insecure_port(address="127.0.0.1:0")
            server.start()
            sys.stdout.buffer.write(f"{port}\\n".encode())
            sys.stdout.flush()
            while True:
                time.sleep(86400)
            """
        )
    )
    return pack_dir


class _CountingProcess(PolicyPackProcess):
    """The preview's client, counting the RPCs it sends."""

    calls = 0

    def call(self, method: str, request: Any, *, resources: int = 1) -> Any:
        self.calls += 1
        return super().call(method, request, resources=resources)


def protocol(records: Path, pack_dir: Path) -> None:
    resources = load_records(records)
    resolver = ProviderResolver({r.urn: r for r in resources})
    with _CountingProcess(pack_dir) as process:
        start = time.perf_counter()
        for resource in resources:
            process.analyze_resource(resource, resolver)
        print(f"protocol_s={time.perf_counter() - start:.4f} calls={process.calls}")


def pack(records: Path, pack_dir: Path, project: Path, stack: str) -> None:
    resources = load_records(records)
    files = load_stack_files(project, stack)
    start = time.perf_counter()
    with PolicyPackProcess(
        pack_dir, stack=stack, project=files.project, stack_config=files.config
    ) as process:
        result = process.run(resources)
        peak_kib = process.peak_kib() or 0
        cpu_s = process.cpu_s() or 0.0
    print(
        f"pack_s={time.perf_counter() - start:.4f} pack_peak_mib={peak_kib / 1024:.1f} "
        f"pack_cpu_s={cpu_s:.2f} findings={len(result.diagnostics)}"
    )


def main(argv: list[str]) -> None:
    command, *args = argv
    if command == "record":
        record(Path(args[0]), args[1], Path(args[2]))
    elif command == "flat":
        flat(Path(args[0]), as_preview="--as-preview" in args[1:])
    elif command == "pack":
        pack(Path(args[0]), Path(args[1]), Path(args[2]), args[3])
    elif command == "protocol":
        protocol(Path(args[0]), Path(args[1]))
    else:
        raise SystemExit(f"unknown command {command!r}: record, flat, pack or protocol")


if __name__ == "__main__":
    main(sys.argv[1:])
