"""Run a Pulumi program under the SDK mocks and record every registration in wire form.

This is Pulumi's own unit-testing machinery (``pulumi.runtime.set_mocks``) with one addition:
a monitor that keeps what the engine would have received -- type, name, parent, provider,
dependencies and the serialised property map -- instead of only the mock's view.  The
program runs for real: ``__main__.py``, the config loader and every component.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import gc
import runpy
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pulumi
from google.protobuf import struct_pb2
from gpu_batch_policy.primitives.struct_dict import struct_to_dict
from pulumi.runtime import mocks, rpc, settings
from pulumi.runtime import resource as sdk_resource
from pulumi.runtime.proto import resource_pb2, source_pb2
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _ensure_event_loop, _sync_await

from preview.mocks import UNECHOED_TYPES, PreviewMocks, echoes
from preview.records import RecordedResource
from preview.stack_files import StackFiles

# Where pulumi's own MockMonitor methods run when the SDK calls them on the event loop's thread
# (RecordingMonitor._as_the_sdk_runs_it): one thread for the process, started on first use, since
# the program waits for each answer and a process runs one program at a time.
_SDK_THREAD = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="mock-monitor")


class RecordingMonitor(mocks.MockMonitor):
    """A mock monitor that also keeps each registration as the engine would see it."""

    def __init__(
        self, mock: pulumi.runtime.Mocks, on_record: Callable[[RecordedResource], None] | None = None
    ) -> None:
        super().__init__(mock)
        self.recorded: list[RecordedResource] = []
        # Called with each registration as it is recorded (the streaming policy session).
        self.on_record = on_record
        # One lock keeps the recorded list and what on_record sees in the same order, whichever
        # thread the SDK calls RegisterResource from.
        self._lock = threading.Lock()

    def _as_the_sdk_runs_it(self, method: Callable[[Any, Any], Any], request: Any) -> Any:
        """``method`` (a pulumi ``MockMonitor`` method) run off the event loop's thread, as the SDK
        always ran it.

        pulumi 3.272.0 ``runtime/mocks.py`` ``MockMonitor.RegisterResource``, ``Invoke`` and
        ``ReadResource`` encode their answers with ``_sync_await``, which expects a thread of the
        SDK's executor: there it runs a loop of that thread's own (``_ensure_event_loop``).  On the
        thread of the running program loop, where :func:`_monitor_calls_inline` answers calls, it
        would instead pump the program's loop from inside a registration.  So these run on a
        thread of their own, in the caller's context (the SDK's ``wrap_with_context`` does the
        same for its executor), while the program waits for the answer as it did before.
        """
        if asyncio._get_running_loop() is None:  # already off the loop (an SDK executor thread)
            return method(self, request)
        context = contextvars.copy_context()
        return _SDK_THREAD.submit(context.run, method, self, request).result()

    def Invoke(self, request: Any) -> Any:  # noqa: N802 - gRPC method name
        return self._as_the_sdk_runs_it(mocks.MockMonitor.Invoke, request)

    def ReadResource(self, request: Any) -> Any:  # noqa: N802 - gRPC method name
        return self._as_the_sdk_runs_it(mocks.MockMonitor.ReadResource, request)

    def RegisterResource(self, request: Any) -> Any:  # noqa: N802 - gRPC method name
        wire_inputs = request.object.SerializeToString()
        inputs = struct_to_dict(request.object)
        if request.type in UNECHOED_TYPES:
            response = self._unechoed(request)
            outputs, wire_outputs = {}, b""
        elif echoes(request.type) and plain_wire(wire_inputs):
            response = self._echo(request, inputs)
            outputs, wire_outputs = inputs, wire_inputs
        else:
            response = self._as_the_sdk_runs_it(mocks.MockMonitor.RegisterResource, request)
            registered = response.urn in self.resources
            outputs = struct_to_dict(response.object) if registered else {}
            wire_outputs = response.object.SerializeToString() if registered else b""
        record = RecordedResource(
            urn=response.urn,
            type=request.type,
            name=request.name,
            parent=request.parent,
            provider=request.provider,
            custom=bool(request.custom),
            inputs=inputs,
            outputs=outputs,
            dependencies=list(request.dependencies),
            property_dependencies={
                key: list(deps.urns) for key, deps in request.propertyDependencies.items()
            },
            protect=bool(request.protect),
            retain_on_delete=bool(request.retainOnDelete),
            ignore_changes=list(request.ignoreChanges),
            replace_on_changes=list(request.replaceOnChanges),
            delete_before_replace=bool(request.deleteBeforeReplace),
            wire_inputs=wire_inputs,
            wire_outputs=wire_outputs,
        )
        with self._lock:
            self.recorded.append(record)
            if self.on_record is not None:
                self.on_record(record)
        return response

    def _echo(self, request: Any, inputs: dict[str, Any]) -> Any:
        """The mock monitor's answer for a resource :class:`PreviewMocks` echoes, without its round trip.

        pulumi 3.272.0 ``runtime/mocks.py`` ``MockMonitor.RegisterResource`` decodes the request's
        properties (``rpc.deserialize_properties``), hands them to ``Mocks.new_resource`` and
        encodes what that returns (``rpc.serialize_properties``).  For a mock that echoes its
        inputs, and properties that are plain data (:func:`plain_wire`), that round trip gives back
        the request's own properties: two passes over every node of every resource's inputs, about
        a fifth of a 1,000-team program's CPU, for the same answer.  The answer and the
        registration the monitor keeps are the same as the SDK path's (no id during a preview),
        but for one difference of form: ``inputs`` here is the request's ``MessageToDict`` form
        (:func:`gpu_batch_policy.primitives.struct_dict.struct_to_dict`),
        where the SDK path keeps its decoded form, so a whole number arrives as ``3`` here and
        ``3.0`` there.  The two compare equal, and nothing in the preview reads the type; the test
        compares them by equality.  ``tests/test_harness_echo.py`` compares both paths on every
        stack file and on hand-built properties with each kind of special value.
        """
        urn = self.make_urn(request.parent, request.type, request.name)
        self.resources[urn] = mocks.MockMonitor.ResourceRegistration(urn, "", inputs)
        return resource_pb2.RegisterResourceResponse(urn=urn, object=request.object)

    def _unechoed(self, request: Any) -> Any:
        """The mock monitor's answer for a kind :class:`PreviewMocks` leaves unknown, without its round trip.

        ``MockMonitor.RegisterResource`` would decode the request's properties (a whole CRD schema,
        up to 700 KB for Kueue's Workload: about 0.35 s for the 15 CRDs of a stack), hand them to
        ``Mocks.new_resource``, which answers ``{}`` for these kinds whatever they hold, and encode
        that empty map.  The answer and the registration are that same empty map, computed here
        directly; ``tests/test_harness_echo.py`` compares both paths on every stack file.
        """
        urn = self.make_urn(request.parent, request.type, request.name)
        self.resources[urn] = mocks.MockMonitor.ResourceRegistration(urn, "", {})
        return resource_pb2.RegisterResourceResponse(urn=urn, object=struct_pb2.Struct())


# What marks a property map as more than plain data on the wire (pulumi 3.272.0 ``runtime/rpc.py``):
# the special-signature key every secret, resource reference, asset, archive and output value
# carries (``_special_sig_key``), and the unknown-value sentinel (``UNKNOWN``).  The third is a map
# entry whose value is null (``google/protobuf/struct.proto``: ``Struct.fields`` entry, field 2, a
# ``Value`` holding ``null_value``, field 1, 0): ``deserialize_properties`` drops such keys, so the
# SDK's round trip would not give the request back.  A false match only costs the slower path.
# The third marker relies on how protobuf encodes that entry (a value of 2 bytes: tag 08, 0).
# Another encoder that wrote it otherwise (a packed or reordered form) would let a null map value
# through as plain, and the echo would then keep the key the SDK drops: the stack-file comparison
# and the hand-built null cases in ``tests/test_harness_echo.py`` would fail, so that change
# cannot pass unseen.  Markers inside a string value only send a resource the slower way.
_NOT_PLAIN_MARKERS = (
    rpc._special_sig_key.encode(),
    rpc.UNKNOWN.encode(),
    b"\x12\x02\x08\x00",
)


def plain_wire(wire: bytes) -> bool:
    """True when a serialised property map holds only plain data with no null map values."""
    return not any(marker in wire for marker in _NOT_PLAIN_MARKERS)


@contextmanager
def _without_stack_traces() -> Iterator[None]:
    """Skip the SDK's per-registration stack trace while the program runs under the harness.

    For every registration pulumi's ``resource.py`` (``_get_stack_trace``, 3.272.0) walks the
    whole Python stack with ``traceback.extract_stack`` to fill ``RegisterResourceRequest``'s
    ``stackTrace``/``sourcePosition``, which only the engine's display and state use.  The mock
    monitor ignores both and no output here shows them, yet they cost a fifth of the program's
    CPU (300 generated teams: 4.2-4.4 s with them, 3.0-3.4 s without; the asyncio stack is deep).
    Under the harness they are left empty; an SDK without that function is left alone.
    """
    original = getattr(sdk_resource, "_get_stack_trace", None)
    if original is None:
        yield
        return
    sdk_resource._get_stack_trace = source_pb2.StackTrace
    try:
        yield
    finally:
        sdk_resource._get_stack_trace = original


class _InlineExecutor(concurrent.futures.ThreadPoolExecutor):
    """An executor that runs each call at once, on the thread that submits it.

    A ``ThreadPoolExecutor`` only in type (``BaseEventLoop.set_default_executor`` refuses any
    other kind since Python 3.11); it starts no thread.  An exception the call raises is the
    future's, as a pool thread would have left it.
    """

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> concurrent.futures.Future[Any]:
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as error:  # the future carries it, as a pool thread's would
            future.set_exception(error)
        return future


@contextmanager
def _monitor_calls_inline(loop: asyncio.AbstractEventLoop) -> Iterator[None]:
    """Answer the SDK's monitor calls on the event loop's own thread while the program runs.

    pulumi 3.272.0 ``runtime/resource.py`` (``register_resource``'s ``do_register``, and likewise
    ``invoke.py``, ``settings.py`` ``monitor_supports_feature`` and ``stack.py``
    ``_wait_for_shutdown``) sends every monitor call through ``loop.run_in_executor(None, ...)``,
    so that a blocking gRPC call to the engine does not stall the loop.  Under the harness the
    monitor is the in-process :class:`RecordingMonitor`, whose answers never wait on anything, so
    the hop to a pool thread and back only costs thread hand-offs: at 1,000 teams, three
    alternating in-process runs took 18.2-22.2 s with the pool and 16.5-17.7 s inline, with the
    same registrations.  Inline also makes the order of registrations the order the SDK sends them in.  The
    loop's own executor is put back afterwards; a loop without one is left alone.
    """
    if not isinstance(loop, asyncio.BaseEventLoop):
        yield
        return
    previous = loop._default_executor  # type: ignore[attr-defined]
    loop.set_default_executor(_InlineExecutor())
    try:
        yield
    finally:
        loop._default_executor = previous  # type: ignore[attr-defined]


@dataclass(frozen=True)
class RunResult:
    resources: list[RecordedResource]
    # Stack outputs in wire form (secrets still wrapped).
    outputs: dict[str, Any]


def run_program(
    project_dir: Path,
    files: StackFiles,
    *,
    on_record: Callable[[RecordedResource], None] | None = None,
    freeze_heap: bool = False,
) -> RunResult:
    """Run ``project_dir/__main__.py`` for one stack, as ``pulumi preview`` would.

    Exceptions the program raises (a ``ConfigError`` for a bad stack file) propagate; the
    runtime is reset before each run so runs in one process are independent.  ``on_record``
    sees each registration as the engine would receive it, in order.  ``freeze_heap`` moves
    everything the run allocated out of the collector's reach (``gc.freeze``) before GC is
    re-enabled: for a process that exits after its outputs, the one full collection over a
    heap of a thousand teams' objects cost ~1.9 s and freed nothing that mattered.  Left off
    where many runs share a process (tests): frozen cyclic garbage is never collected.
    """
    settings.reset_options()
    pulumi.runtime.set_all_config(files.config, files.secret_keys)
    mock = PreviewMocks()
    monitor = RecordingMonitor(mock, on_record)
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
        with _without_stack_traces(), _monitor_calls_inline(_ensure_event_loop()):  # type: ignore[no-untyped-call]
            _sync_await(run_pulumi_func(program))
    finally:
        sys.path.remove(str(project_dir))
        if freeze_heap:
            gc.freeze()
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
    return struct_to_dict(struct)
