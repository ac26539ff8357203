"""Mocks that answer like a preview: resources echo their inputs; cloud-computed values stay unknown.

During a real ``pulumi preview`` of a new stack the engine knows every input but none of the
values the cloud computes (a cluster's endpoint, a pool's instance groups).  Answering with
the inputs alone, under ``preview=True``, reproduces exactly that: anything not in the inputs
is unknown downstream, and plan.json says "(unknown)" rather than inventing a value.
"""

from __future__ import annotations

from typing import Any

import pulumi


class PreviewMocks(pulumi.runtime.Mocks):
    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str | None, dict[str, Any]]:
        # No id during preview: the resource does not exist yet.
        return None, dict(args.inputs)

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict[str, Any], list[tuple[str, str]] | None]:
        # The program makes no invokes; answer empty rather than inventing cloud data.
        return {}, None
