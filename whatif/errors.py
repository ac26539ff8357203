"""The ways the simulator says no: bad input, a Kueue feature it does not model, a run that does
not settle."""

from __future__ import annotations


class WhatIfError(Exception):
    """Bad input (trace, manifests, stack): one line saying where, what was given, what is expected."""


class NotModelledError(WhatIfError):
    """The stack uses a Kueue behaviour the simulator does not model; simulating it would pretend."""


class NotSettledError(WhatIfError):
    """Scheduling did not settle at one instant: a livelock (one that Kueue's own scheduler would
    sustain, such as a preemptor that evicts every cycle and is never admitted) or a runaway.
    One line naming the instant, the scheduling cycle and the workloads; the CLI exits 3."""


def trace_error(path: str, value: object, expected: str) -> WhatIfError:
    """One line for a bad trace value: its key path, the value given and what is expected."""
    return WhatIfError(f"trace {path}: got {value!r}, expected {expected}")


def trace_mapping(raw: object, path: str, allowed: set[str], expected: str) -> dict[str, object]:
    """``raw`` as a mapping whose keys are all in ``allowed``, else one line naming the first
    offending key path (or ``path`` itself when ``raw`` is no mapping: ``expected``)."""
    if not isinstance(raw, dict):
        raise trace_error(path, raw, expected)
    extra = sorted(set(raw) - allowed)
    if extra:
        raise trace_error(f"{path}.{extra[0]}", raw[extra[0]], f"one of {sorted(allowed)}")
    return raw
