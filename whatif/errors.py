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
