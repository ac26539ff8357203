"""Mocks that answer like a preview: resources echo their inputs; cloud-computed values stay unknown.

During a real ``pulumi preview`` of a new stack the engine knows every input but none of the
values the cloud computes (a cluster's endpoint, a pool's instance groups).  Answering with
the inputs alone, under ``preview=True``, reproduces exactly that: anything not in the inputs
is unknown downstream, and plan.json says "(unknown)" rather than inventing a value.
"""

from __future__ import annotations

from typing import Any

import pulumi

from preview.manifest_resources import STACK_TYPE
from preview.replacements import CRD

# Kinds whose outputs are left unknown instead of echoing their inputs: a CustomResourceDefinition's
# inputs are its whole schema (hundreds of KB for Kueue's Workload and each KubeRay kind), no
# program code reads them back, and echoing them costs the SDK two more passes over every node
# of the schema (about half the program's run time).  Unknown is what a real preview would say
# of any output not yet known; plan.json records the inputs either way.
UNECHOED_TYPES = (CRD,)


def echoes(typ: str) -> bool:
    """Whether :class:`PreviewMocks` answers a resource of this type with its own inputs.

    Not the root stack, which the mock monitor answers with its URN alone (pulumi 3.272.0
    ``runtime/mocks.py`` ``MockMonitor.RegisterResource``), nor the kinds left unknown.
    """
    return typ not in UNECHOED_TYPES and typ != STACK_TYPE


class PreviewMocks(pulumi.runtime.Mocks):
    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str | None, dict[str, Any]]:
        # No id during preview: the resource does not exist yet.
        if not echoes(args.typ):
            return None, {}
        return None, dict(args.inputs)

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict[str, Any], list[tuple[str, str]] | None]:
        # (A bare dict is the SDK mocks' form for "no check failures".)
        if args.token == ENGINE_VERSIONS_TOKEN:
            return dict(OFFLINE_ENGINE_VERSIONS), []
        if args.token == PROJECT_TOKEN:
            # The project number is not knowable offline: a visible stand-in, never a real one.
            return {"projectId": args.args.get("projectId"), "number": OFFLINE_PROJECT_NUMBER}, []
        # Any other invoke: answer empty rather than inventing cloud data.
        return {}, []


# The project's number, for Workload Identity principals (components/multikueue_fleet.py).
PROJECT_TOKEN = "gcp:organizations/getProject:getProject"
OFFLINE_PROJECT_NUMBER = "PROJECT_NUMBER"

# The invoke the program makes on every stack: which version each GKE release channel defaults to
# (stacks/gke_versions.py).  Offline there is no project to ask, so the preview answers with
# this stand-in -- channel defaults as GKE's release notes listed them when it was written -- and
# says so; tests swap it to prove a too-old channel is refused.
ENGINE_VERSIONS_TOKEN = "gcp:container/getEngineVersions:getEngineVersions"
OFFLINE_ENGINE_VERSIONS: dict[str, Any] = {
    "releaseChannelDefaultVersion": {
        "RAPID": "1.34.1-gke.1431000",
        "REGULAR": "1.33.5-gke.1201000",
        "STABLE": "1.33.5-gke.1080000",
        "EXTENDED": "1.33.5-gke.1080000",
    },
}
