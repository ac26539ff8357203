"""How a value not known before deploy, or a secret, reads in display form.

The preview writes plans and manifests in this form (``preview.records.for_display``) and the pack
turns its :class:`~..values.Unknown` markers into it before validating, so the validator has one
notion of "cannot check this value yet": a string equal to a marker is accepted for any schema
type and counted, never failed and never passed silently.
"""

from __future__ import annotations

from typing import Final

UNKNOWN_DISPLAY: Final = "(unknown)"
SECRET_DISPLAY: Final = "[secret]"
MARKERS: Final = frozenset({UNKNOWN_DISPLAY, SECRET_DISPLAY})
