"""KubeRay token auth that KubeRay accepts (issue 27 item 3).

**ray-token-auth-valid** (mandatory: KubeRay refuses the cluster, so it never starts).  KubeRay
v1.7.0 ``ray-operator/controllers/ray/utils/validation.go`` ``ValidateRayClusterSpec`` (run for a
RayCluster, and for the ``rayClusterSpec`` of a RayJob and ``rayClusterConfig`` of a
RayService) refuses, when ``authOptions.mode`` is ``token`` (``utils.IsAuthEnabled``):

* no ``rayVersion``, one that does not parse, or one below 2.52.0;
* ``enableK8sTokenAuth: true`` below Ray 2.55.0, or together with ``secretName``;

and ``enableK8sTokenAuth: true`` without ``mode: token``.  (Its doc comment says mode
"defaults to token", but the CRD sets no default and ``IsAuthEnabled`` reads an empty mode as
off: a cluster that sets only ``secretName`` runs unauthenticated; the message says so.)
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pulumi_policy import Policy

from ...facts.model import StackModel
from ...primitives.values import Unknown, dig
from ..kit.builders import stack_policy
from ..kit.report import Reporter

TOKEN_MIN = (2, 52, 0)
K8S_TOKEN_MIN = (2, 55, 0)
# k8s.io/apimachinery util/version ParseGeneric: "major.minor.patch" with an optional "v" and
# anything after the third number (pre-release / build) ignored for this comparison.
_GENERIC = re.compile(r"^v?(\d+)\.(\d+)(?:\.(\d+))?")


def _version(text: object) -> tuple[int, int, int] | None:
    match = _GENERIC.match(text) if isinstance(text, str) else None
    if match is None:
        return None
    return int(match.group(1)), int(match.group(2)), int(match.group(3) or 0)


def supports_token_auth(ray_version: object) -> bool:
    """Whether KubeRay accepts ``authOptions.mode: token`` for a cluster of this ``rayVersion``."""
    version = _version(ray_version)
    return version is not None and version >= TOKEN_MIN


def problems(spec: Mapping[str, Any]) -> list[str]:
    """What ValidateRayClusterSpec refuses about the auth options of one cluster spec."""
    auth = dig(spec, "authOptions")
    if not isinstance(auth, Mapping):
        return []
    token = auth.get("mode") == "token"
    k8s_auth = auth.get("enableK8sTokenAuth") is True
    if not token:
        return ["enableK8sTokenAuth is on but authOptions.mode is not 'token'"] if k8s_auth else []
    version = _version(dig(spec, "rayVersion"))
    if version is None:
        return ["authOptions.mode is 'token' but rayVersion is missing or not a version (Ray 2.52.0+ needed)"]
    out = []
    if version < TOKEN_MIN:
        out.append(f"authOptions.mode is 'token' but Ray {'.'.join(map(str, version))} is below 2.52.0")
    if k8s_auth and version < K8S_TOKEN_MIN:
        out.append("enableK8sTokenAuth needs Ray 2.55.0 or later")
    if k8s_auth and auth.get("secretName"):
        out.append("enableK8sTokenAuth and secretName are both set")
    return out


def check(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    for workload in model.ray_workloads():
        spec = workload.cluster_spec
        if isinstance(spec, Unknown):
            reporter.cannot_check(workload, "the Ray cluster spec is unknown until apply")
            continue
        if not isinstance(spec, Mapping):
            continue
        found = problems(spec)
        if found:
            reporter.violation(
                workload,
                f"KubeRay v1.7.0 refuses this Ray cluster ({'; '.join(found)}), so it never starts",
                "set rayVersion to the image's Ray (2.52.0 or later for token auth) or drop authOptions",
            )


POLICIES: list[Policy] = [
    stack_policy(
        "ray-token-auth-valid",
        "KubeRay token auth (authOptions) is set the way KubeRay v1.7.0 accepts it.",
        check,
    ),
]
