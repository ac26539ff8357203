"""The protocol floor ``make bench`` prints (``benchmarks/stage_floors.py`` ``bare_pack``/``protocol``).

It must time the engine's chain and nothing else: two calls per resource, answered by a server
with no policy SDK behind it, through the preview's own client.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path

from benchmarks.stage_floors import ROOT, bare_pack
from preview.analyzer import PolicyPackProcess, ProviderResolver
from tests.test_analyzer_hang_guard import records


def test_the_bare_pack_answers_every_call_empty(tmp_path: Path) -> None:
    sent = records(3)
    resolver = ProviderResolver({r.urn: r for r in sent})
    with PolicyPackProcess(bare_pack(tmp_path / "bare")) as process:
        assert process.info is not None and process.info.name == "bare"
        assert not process.info.policies  # no policy SDK: nothing to run
        for record in sent:
            assert not process.analyze_resource(record, resolver).diagnostics


def test_the_protocol_floor_sends_two_calls_per_resource(tmp_path: Path) -> None:
    path = tmp_path / "records.json"
    wire = ("wire_inputs", "wire_outputs")  # as ``stage_floors record`` writes them
    path.write_text(json.dumps([{k: v for k, v in asdict(r).items() if k not in wire} for r in records(5)]))
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmarks.stage_floors",
            "protocol",
            str(path),
            str(bare_pack(tmp_path / "bare")),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    assert "calls=10" in done.stdout
    assert float(done.stdout.split("protocol_s=")[1].split()[0]) > 0
