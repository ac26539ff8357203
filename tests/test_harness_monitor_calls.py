"""Where the harness answers the SDK's monitor calls (``preview/harness.py``).

``_monitor_calls_inline`` answers them on the program loop's own thread instead of the SDK's
executor threads, and ``RecordingMonitor._as_the_sdk_runs_it`` still runs pulumi's own
``MockMonitor`` methods off that thread, where their ``_sync_await`` expects to be (pulumi 3.272.0
``runtime/mocks.py``).  These tests hold the change to the registrations it must not change, to
the thread each answer is computed on, and to putting the loop's executor back.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import threading
from pathlib import Path
from typing import Any

import pytest
from pulumi.runtime import mocks
from pulumi.runtime.sync_await import _ensure_event_loop

import preview.harness
from preview.harness import RecordingMonitor, run_program
from preview.records import RecordedResource
from preview.stack_files import load_stack_files
from tests.stack_runner import ROOT

STACKS = sorted(p.name.removeprefix("Pulumi.").removesuffix(".yaml") for p in ROOT.glob("Pulumi.*.yaml"))


def _view(records: list[RecordedResource]) -> dict[str, tuple[Any, ...]]:
    return {
        r.urn: (
            r.type,
            r.parent,
            r.provider,
            r.inputs,
            r.outputs,
            r.wire_inputs,
            r.wire_outputs,
            sorted(r.dependencies),
            {key: sorted(urns) for key, urns in r.property_dependencies.items()},
        )
        for r in records
    }


@pytest.mark.parametrize("stack", STACKS)
def test_every_stack_registers_the_same_inline_as_through_the_sdk_executor(
    stack: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    inline = run_program(ROOT, load_stack_files(ROOT, stack)).resources
    monkeypatch.setattr(preview.harness, "_monitor_calls_inline", lambda loop: contextlib.nullcontext())
    pooled = run_program(ROOT, load_stack_files(ROOT, stack)).resources
    assert _view(inline) == _view(pooled)
    assert len(inline) == len(pooled)


def _project(tmp_path: Path, body: str) -> Path:
    (tmp_path / "Pulumi.yaml").write_text("name: calls\nruntime: python\n")
    (tmp_path / "Pulumi.calls.yaml").write_text("config: {}\n")
    (tmp_path / "__main__.py").write_text("import pulumi\nfrom pulumi.runtime import invoke\n" + body)
    return tmp_path


class _Threads:
    """Which thread, and whether under a running loop, each kind of answer was computed."""

    def __init__(self) -> None:
        self.seen: dict[str, list[tuple[bool, bool]]] = {}

    def note(self, what: str) -> None:
        on_main = threading.current_thread() is threading.main_thread()
        self.seen.setdefault(what, []).append((on_main, asyncio._get_running_loop() is not None))


def test_the_harness_answers_on_the_loop_thread_and_the_sdk_answers_off_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    threads = _Threads()
    for name in ("_echo", "_unechoed"):
        original = getattr(RecordingMonitor, name)

        def spy(self: RecordingMonitor, *args: Any, _name: str = name, _original: Any = original) -> Any:
            threads.note(_name)
            return _original(self, *args)

        monkeypatch.setattr(RecordingMonitor, name, spy)
    for name in ("RegisterResource", "Invoke"):
        sdk_original = getattr(mocks.MockMonitor, name)

        def sdk_spy(self: Any, request: Any, _name: str = name, _original: Any = sdk_original) -> Any:
            threads.note(f"sdk {_name}")
            return _original(self, request)

        monkeypatch.setattr(mocks.MockMonitor, name, sdk_spy)
    project = _project(
        tmp_path,
        "pulumi.CustomResource('t:index:Plain', 'plain', {'a': 1})\n"
        "pulumi.CustomResource('kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition', 'crd', {'b': 2})\n"
        "pulumi.CustomResource('t:index:Secret', 'secret', {'s': pulumi.Output.secret('x')})\n"
        "invoke('gcp:organizations/getProject:getProject', {'projectId': 'p'})\n",
    )
    run_program(project, load_stack_files(project, "calls"))
    # The harness's own answers: on the program's thread, inside its running loop.
    assert threads.seen["_echo"] == [(True, True)]
    assert threads.seen["_unechoed"] == [(True, True)]
    # pulumi's MockMonitor (a secret input, an invoke): off that thread, with no running loop,
    # as on the SDK's executor threads.
    assert threads.seen["sdk RegisterResource"] and all(
        seen == (False, False) for seen in threads.seen["sdk RegisterResource"]
    )
    assert threads.seen["sdk Invoke"] == [(False, False)]


def test_an_error_in_a_monitor_call_reaches_the_program(tmp_path: Path) -> None:
    project = _project(
        tmp_path,
        "invoke('pulumi:pulumi:getResource', {'urn': 'urn:pulumi:calls::calls::t:index:Missing::nope'})\n",
    )
    with pytest.raises(Exception, match="unknown resource urn:pulumi:calls::calls::t:index:Missing::nope"):
        run_program(project, load_stack_files(project, "calls"))


@pytest.mark.parametrize(
    "body", ["pulumi.CustomResource('t:index:R', 'r', {'a': 1})\n", "raise ValueError('boom')\n"]
)
def test_the_loops_own_executor_is_put_back(tmp_path: Path, body: str) -> None:
    loop = _ensure_event_loop()  # type: ignore[no-untyped-call]
    before = loop._default_executor
    project = _project(tmp_path, body)
    with contextlib.suppress(ValueError):
        run_program(project, load_stack_files(project, "calls"))
    assert loop._default_executor is before
    # And the loop still runs a call on a real thread afterwards.
    assert loop.run_until_complete(loop.run_in_executor(None, threading.get_ident)) != threading.get_ident()


def test_every_mock_monitor_method_that_awaits_is_run_off_the_loop() -> None:
    """Derived from pulumi's own list: each ``MockMonitor`` method whose body calls
    ``_sync_await`` or ``_ensure_event_loop`` (they expect an executor thread) is one
    :class:`RecordingMonitor` defines, so none reaches the SDK's body on the loop's thread unseen;
    a new such method in a later pulumi fails here."""
    awaiting = {
        name
        for name, method in vars(mocks.MockMonitor).items()
        if callable(method)
        and name[:1].isupper()
        and any(call in inspect.getsource(method) for call in ("_sync_await(", "_ensure_event_loop("))
    }
    assert awaiting >= {"RegisterResource", "Invoke", "ReadResource"}
    assert awaiting <= set(vars(RecordingMonitor))
