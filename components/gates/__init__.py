"""Readiness gates' run-time code, carried into the stack's state as source (see :mod:`.runtime`)."""
