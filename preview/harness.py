"""Run a Pulumi program under the SDK mocks and record every registration in wire form.

This is Pulumi's own unit-testing machinery (``pulumi.runtime.set_mocks``) with one addition:
a monitor that keeps what the engine would have received -- type, name, parent, provider,
dependencies and the serialised property map -- instead of only the mock's view.  The
program runs for real: ``__main__.py``, the config loader and every component.
"""

from __future__ import annotations

import gc
import runpy
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pulumi
from google.protobuf import json_format
from pulumi.runtime import mocks, rpc, settings
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _sync_await

from preview.mocks import PreviewMocks
from preview.records import RecordedResource
from preview.stack_files import StackFiles


class RecordingMonitor(mocks.MockMonitor):
    """A mock monitor that also keeps each registration as the engine would see it."""

    def __init__(self, mock: pulumi.runtime.Mocks) -> None:
        super().__init__(mock)
        self.recorded: list[RecordedResource] = []

    def RegisterResource(self, request: Any) -> Any:  # noqa: N802 - gRPC method name
        response = super().RegisterResource(request)  # type: ignore[no-untyped-call]
        registration = self.resources.get(response.urn)
        outputs = json_format.MessageToDict(response.object) if registration is not None else {}
        self.recorded.append(
            RecordedResource(
                urn=response.urn,
                type=request.type,
                name=request.name,
                parent=request.parent,
                provider=request.provider,
                custom=bool(request.custom),
                inputs=json_format.MessageToDict(request.object),
                outputs=outputs,
                dependencies=list(request.dependencies),
                property_dependencies={
                    key: list(deps.urns) for key, deps in request.propertyDependencies.items()
                },
                protect=bool(request.protect),
            )
        )
        return response


@dataclass(frozen=True)
class RunResult:
    resources: list[RecordedResource]
    # Stack outputs in wire form (secrets still wrapped).
    outputs: dict[str, Any]


def run_program(project_dir: Path, files: StackFiles) -> RunResult:
    """Run ``project_dir/__main__.py`` for one stack, as ``pulumi preview`` would.

    Exceptions the program raises (a ``ConfigError`` for a bad stack file) propagate; the
    runtime is reset before each run so runs in one process are independent.
    """
    settings.reset_options()
    pulumi.runtime.set_all_config(files.config, files.secret_keys)
    mock = PreviewMocks()
    monitor = RecordingMonitor(mock)
    pulumi.runtime.set_mocks(mock, project=files.project, stack=files.stack, preview=True, monitor=monitor)
    # The program imports its own packages (stacks, components) relative to its directory.
    sys.path.insert(0, str(project_dir))

    def program() -> None:
        runpy.run_path(str(project_dir / "__main__.py"), run_name="__main__")

    # The SDK allocates many short-lived objects per registration; generational GC passes over
    # the growing heap made the run ~30% slower at a thousand teams.  Nothing in a run needs
    # cycle collection before it ends, so collect once afterwards instead.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        _sync_await(run_pulumi_func(program))
    finally:
        sys.path.remove(str(project_dir))
        if gc_was_enabled:
            gc.enable()
    return RunResult(resources=list(monitor.recorded), outputs=_stack_outputs())


def _stack_outputs() -> dict[str, Any]:
    """The program's ``pulumi.export``s in wire form (secrets wrapped, unknowns as sentinels).

    Under the mocks the root stack registers its outputs before the program runs, so they are
    read from the stack resource and serialised the way the engine would receive them.
    """
    root = settings.get_root_resource()
    outputs = getattr(root, "outputs", None) or {}
    struct = _sync_await(rpc.serialize_properties(outputs, {}))
    return json_format.MessageToDict(struct)
