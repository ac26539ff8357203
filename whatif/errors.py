"""The two ways the simulator says no: bad input, and a Kueue feature it does not model."""

from __future__ import annotations


class WhatIfError(Exception):
    """Bad input (trace, manifests, stack): one line saying where, what was given, what is expected."""


class NotModelledError(WhatIfError):
    """The stack uses a Kueue behaviour the simulator does not model; simulating it would pretend."""
