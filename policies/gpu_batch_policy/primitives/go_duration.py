"""Go duration strings, parsed as Go's ``time.ParseDuration`` does: one parser for the project.

Kueue's Configuration (``waitForPodsReady.timeout``, ``admissionFairSharing.usageHalfLifeTime``),
KubeRay's ``ray.io/initializing-timeout`` annotation and the what-if's settings are all read by Go
code with ``time.ParseDuration`` (golang/go ``src/time/format.go``): an optional sign, then either
``0`` or one or more decimal numbers, each with an optional fraction and a unit among ``ns``,
``us`` (or ``µs``, U+00B5, or ``μs``, U+03BC), ``ms``, ``s``, ``m``, ``h``.  ``5.s`` and ``.5s``
parse; ``1d``, ``3`` (no unit) and ``.s`` do not.  The stack config, the pack and the what-if all
call :func:`parse_go_duration`, so none of them accepts what Kueue or KubeRay would refuse.
"""

from __future__ import annotations

import re
from typing import Final

UNIT_SECONDS: Final = {
    "ns": 1e-9,
    "us": 1e-6,
    "\u00b5s": 1e-6,
    "\u03bcs": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "m": 60.0,
    "h": 3600.0,
}
_NUMBER = r"(?:\d+\.?\d*|\.\d+)"
_UNIT = r"(?:ns|us|\u00b5s|\u03bcs|ms|s|m|h)"
_DURATION = re.compile(rf"([-+]?)((?:{_NUMBER}{_UNIT})+|0)")
_PART = re.compile(rf"({_NUMBER})({_UNIT})")


def parse_go_duration(text: object) -> float | None:
    """Seconds (negative for a ``-`` sign), or None when ``time.ParseDuration`` would fail."""
    if not isinstance(text, str):
        return None
    match = _DURATION.fullmatch(text)
    if match is None:
        return None
    seconds = sum(float(number) * UNIT_SECONDS[unit] for number, unit in _PART.findall(match.group(2)))
    return -seconds if match.group(1) == "-" else seconds
