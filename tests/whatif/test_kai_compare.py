"""``python -m whatif --stack kai --base REF``: the change per KAI queue (``whatif/kai/compare.py``).

Two versions of one KAI queue tree under one trace: at the base, queue ``b`` deserves 2 of the 4
GPUs and reclaims them from ``a`` (``reclaim.go``: within its fair share); in the working tree
``b`` deserves nothing and has no over-quota weight, so its fair share is 0 and it waits for
``a``'s PodGroups to finish (``proportion.go`` ``CanReclaimResources`` fails).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from whatif import cli
from whatif.kai import model as kai_model
from whatif.kai.cluster import Node
from whatif.kai.compare import kai_compare_lines
from whatif.pack import StackModel
from whatif.sources import manifests_items
from whatif.trace import parse_trace


def _queue(name: str, gpu: str, parent: str | None = None, extra: str = "") -> str:
    parent_line = f"  parentQueue: {parent}\n" if parent else ""
    return f"""
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {{name: {name}}}
spec:
{parent_line}{extra}  resources:
    gpu: {gpu}
    cpu: {{quota: -1, limit: -1, overQuotaWeight: 1}}
    memory: {{quota: -1, limit: -1, overQuotaWeight: 1}}
"""


def _records(b_gpu: str, extra: str = "", more: str = "") -> list[Any]:
    docs = [
        _queue("dept", "{quota: 4, limit: -1, overQuotaWeight: 1}"),
        _queue("a", "{quota: 2, limit: -1, overQuotaWeight: 1}", "dept"),
        _queue("b", b_gpu, "dept", extra),
    ]
    return list(manifests_items("---".join(docs) + more, "test"))


def _model(b_gpu: str, extra: str = "", more: str = "") -> StackModel:
    return StackModel.from_plain(_records(b_gpu, extra, more))


BASE_B = "{quota: 2, limit: -1, overQuotaWeight: 1}"
HEAD_B = "{quota: 0, limit: -1, overQuotaWeight: 0}"


def _wl(name: str, queue: str, submit: float, gpus: int) -> dict[str, Any]:
    return {
        "name": name,
        "namespace": "ns",
        "queue": queue,
        "priorityClass": "train",
        "submit": submit,
        "duration": 3600,
        "podSets": [{"name": "w", "count": gpus, "requests": {"nvidia.com/gpu": "1"}}],
    }


TRACE = {"workloads": [_wl(f"a{i}", "a", 0, 1) for i in range(4)] + [_wl("b0", "b", 60, 2)]}


@pytest.fixture(autouse=True)
def four_gpus(monkeypatch: pytest.MonkeyPatch) -> None:
    """Manifests carry no node pools: four one-GPU nodes stand for the stack's GPU pools."""
    monkeypatch.setattr(
        kai_model, "gpu_nodes", lambda model, notes: [Node(f"n{i}", 8000.0, 32e9, 1) for i in range(4)]
    )


def _row(lines: list[str], queue: str) -> list[str]:
    line = next(line for line in lines if line.startswith(f"| `{queue}` |"))
    return [c.strip() for c in line.strip("|").split("|")]


def test_the_diff_shows_what_the_quota_change_does_per_kai_queue() -> None:
    lines = kai_compare_lines("kai", "main", _model(BASE_B), _model(HEAD_B), parse_trace(TRACE))
    assert lines[0] == "### What-if `kai` KAI queues: `main` → working tree"
    a, b = _row(lines, "a"), _row(lines, "b")
    # columns: queue, parent, admitted, reclaimed, preempted, p50, p95, max, GPU quota, use, never
    assert a[3] == "2 → 0", a  # b no longer reclaims a's PodGroups
    assert b[5] == "0 s → 59 min" and b[8] == "2 → 0", b  # b now waits for a's to finish
    assert _row(lines, "dept")[1] == "-"
    assert "3 of 3 KAI queues changed." in lines


def test_an_unchanged_tree_reports_no_change() -> None:
    lines = kai_compare_lines("kai", "main", _model(BASE_B), _model(BASE_B), parse_trace(TRACE))
    assert "0 of 3 KAI queues changed." in lines
    assert not any("→" in line for line in lines[1:])


def test_a_new_queue_and_a_side_without_kai_queues() -> None:
    more = "---" + _queue("c", "{quota: 1, limit: -1, overQuotaWeight: 1}", "dept")
    lines = kai_compare_lines("kai", "main", _model(BASE_B), _model(BASE_B, more=more), parse_trace(TRACE))
    assert all(cell.startswith("(new)") for cell in _row(lines, "c")[1:])
    empty = StackModel.from_plain([])
    lines = kai_compare_lines("kai", "main", empty, _model(BASE_B), parse_trace(TRACE))
    assert all(cell.startswith("(new)") for cell in _row(lines, "a")[1:])
    assert "3 of 3 KAI queues changed." in lines


def test_a_refused_side_says_why_in_every_row() -> None:
    refused = _model(BASE_B, extra="  reclaimMinRuntime: 10m\n")
    lines = kai_compare_lines("kai", "main", refused, _model(HEAD_B), parse_trace(TRACE))
    b = _row(lines, "b")
    assert b[1].startswith("not simulated:") and "reclaimMinRuntime" in b[1]
    assert b[2].startswith("p50 ") and "never admitted 0" in b[2]


def test_the_cli_prints_the_kai_diff_for_base(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``python -m whatif --stack kai --base REF`` (``make whatif STACK=kai BASE=...``) once went
    through the Kueue comparison only and failed on the KAI priority classes."""
    monkeypatch.setattr(cli, "stack_records", lambda stack, build_dir, fresh: _records(HEAD_B))
    monkeypatch.setattr(cli, "model_at", lambda ref, stack: _model(BASE_B))
    monkeypatch.setattr(cli, "check_base", lambda ref: None)  # "main" need not be a ref of this clone
    trace = tmp_path / "trace.yaml"
    trace.write_text(yaml.safe_dump(TRACE))
    assert cli.main(["--stack", "kai", "--base", "main", "--trace", str(trace)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "### What-if `kai` KAI queues: `main` → working tree" in out
    assert "ClusterQueue" not in "\n".join(out)  # no Kueue queues at either side: no Kueue table
    assert _row(out, "a")[3] == "2 → 0"


def test_the_cli_says_when_neither_side_has_queues(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(cli, "stack_records", lambda stack, build_dir, fresh: [])
    monkeypatch.setattr(cli, "model_at", lambda ref, stack: StackModel.from_plain([]))
    monkeypatch.setattr(cli, "check_base", lambda ref: None)
    assert cli.main(["--stack", "kai", "--base", "main"]) == 0
    assert "nothing to compare" in capsys.readouterr().out


def test_an_unknown_base_is_said_before_the_heads_program_runs(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def head(stack: str, build_dir: Path, fresh: bool) -> list[object]:
        raise AssertionError("the head's program ran before the base was checked")

    monkeypatch.setattr(cli, "stack_records", head)
    assert cli.main(["--stack", "kai", "--base", "no-such-ref"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--base no-such-ref: git cannot export it" in err[0], err
