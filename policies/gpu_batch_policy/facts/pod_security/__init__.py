"""Pod Security admission as the API server runs it: a namespace's labels -> level and version,
and what that level forbids in a pod (:mod:`.checks`).

kubernetes/pod-security-admission v0.36.2 ``api/helpers.go``: ``PolicyToEvaluate`` reads
``pod-security.kubernetes.io/enforce`` (``ParseLevel``: privileged, baseline or restricted; any
other value is an error and evaluates as **restricted**) and ``.../enforce-version``
(``ParseVersion``: ``latest`` or ``v1.<minor>``; an invalid one evaluates as latest).  A
namespace with no enforce label gets the cluster's default, which GKE Standard leaves at
privileged (no AdmissionConfiguration defaults): nothing is refused.  ``latest`` means the API
server's own minor, i.e. the cluster's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from .checks import Minor, evaluate

LABEL_PREFIX: Final = "pod-security.kubernetes.io/"
ENFORCE_LABEL: Final = LABEL_PREFIX + "enforce"
ENFORCE_VERSION_LABEL: Final = LABEL_PREFIX + "enforce-version"
WARN_LABEL: Final = LABEL_PREFIX + "warn"
AUDIT_LABEL: Final = LABEL_PREFIX + "audit"
LEVELS: Final = ("privileged", "baseline", "restricted")
_VERSION = re.compile(r"^v1\.([0-9]|[1-9][0-9]*)$")  # api/helpers.go versionRegexp

GKE_NEWEST_MINOR: Final[Minor] = (1, 37)
"""The newest minor GKE serves (Rapid channel "Available minor versions 1.34 to 1.37",
https://cloud.google.com/kubernetes-engine/docs/release-notes): the cluster's minor when the
stack pins no ``minMasterVersion``.  The preview's schema validation uses the same fact."""

_MINOR = re.compile(r"^v?(\d+)\.(\d+)")


def cluster_minor(min_master_version: object) -> Minor:
    """The minor of a GKE ``minMasterVersion`` (``1.33``, ``1.33.2-gke.100``), else the newest."""
    match = _MINOR.match(min_master_version.strip()) if isinstance(min_master_version, str) else None
    return (int(match.group(1)), int(match.group(2))) if match else GKE_NEWEST_MINOR


@dataclass(frozen=True)
class EnforcePolicy:
    """What PodSecurity enforces in one namespace."""

    level: str
    minor: Minor
    label: str | None  # the enforce label's value as written; None: not labelled

    def forbidden(self, meta: Mapping[str, Any], spec: Mapping[str, Any]) -> list[str]:
        return evaluate(self.level, self.minor, meta, spec)


def enforce_policy(labels: Mapping[str, Any], cluster: Minor) -> EnforcePolicy:
    """api/helpers.go ``PolicyToEvaluate`` for the enforce mode, defaults privileged:latest."""
    raw = labels.get(ENFORCE_LABEL)
    level = "privileged" if raw is None else (raw if raw in LEVELS else "restricted")
    version = labels.get(ENFORCE_VERSION_LABEL)
    match = _VERSION.match(version) if isinstance(version, str) else None
    minor = (1, int(match.group(1))) if match else cluster
    # A version newer than the API server evaluates at the server's own checks.
    return EnforcePolicy(level, min(minor, cluster), raw if isinstance(raw, str) else None)
