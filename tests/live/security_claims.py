"""Which live test enforces each claim of ``docs/security.md``, or why this control plane cannot.

The live tier runs a real kube-apiserver v1.37.2 with the RBAC authorizer, ValidatingAdmissionPolicy
and Pod Security admission, and Kueue's manager: whatever those decide is tested as the user it
concerns (``tests/live/test_security_claims.py``).  What they do not decide -- packets between pods
(a CNI dataplane), Google IAM, processes that answer requests themselves (a SkyPilot server, a Ray
head) -- gets a one-line reason instead.  ``test_security_claims.py`` parses the document and fails
when a row of "Guaranteed", or a sentence of "MultiKueue workers", has neither (so a claim added to
the document without a live test or a reason breaks the suite), when a named test does not exist,
and when a row's "Checked by" cell does not name its live tests.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "security.md"
TEST_MODULE = "tests/live/test_security_claims.py"
GUARANTEED_HEADING = "## Guaranteed"
MULTIKUEUE_HEADING = "## MultiKueue workers (the multiregion stack)"

# the reasons shared by several claims
CNI = "packets between pods are dropped by the CNI dataplane (GKE Dataplane V2): no kubelet or CNI runs here"
GCP_IAM = "Google IAM decides it, outside the Kubernetes API: no GCP project here"
PACK = "a judgement of the program by the policy pack (offline), not a request the API server answers"


@dataclass(frozen=True)
class Claim:
    """``quote``: a Guaranteed row's first cell, or a fragment of a MultiKueue sentence.
    ``live``: the functions of ``tests/live/test_security_claims.py`` that enforce it.
    ``not_live``: why it (or the rest of it) cannot be enforced by this control plane."""

    quote: str
    live: tuple[str, ...] = ()
    not_live: str = ""


GUARANTEED: tuple[Claim, ...] = (
    Claim(
        "A team's people act only in their own namespace",
        live=("test_member_is_refused_outside_their_namespace", "test_member_works_in_their_namespace"),
        not_live="that members hold only roles/container.clusterViewer in the project: " + GCP_IAM,
    ),
    Claim(
        "A team spends only its own quota",
        live=(
            "test_workload_outside_the_team_queues_is_refused",
            "test_unlabelled_job_goes_to_the_team_default_queue",
            "test_member_cannot_make_a_local_queue",
        ),
    ),
    Claim(
        "... also in a namespace that existed before the stack (`createNamespace: false`)",
        live=("test_existing_namespace_is_labelled_and_managed",),
    ),
    Claim(
        "No tenant pod is privileged, shares the node's network/PID/IPC, mounts a host path, uses host "
        "ports or adds capabilities",
        live=("test_pod_security_refuses_what_baseline_forbids",),
    ),
    Claim(
        "A pod of one team cannot open a connection to a pod of another team (Ray job API 8265, GCS 6379, "
        "a SkyPilot server, a notebook)",
        not_live=CNI,
    ),
    Claim(
        "A SkyPilot server answers only its own team's authenticated users, whoever reaches it",
        not_live="skypilot's BasicAuthMiddleware answers in the server process (`sky api start`), which does "
        "not run here; the Gateway is GKE's load balancer",
    ),
    Claim(
        "A SkyPilot task cannot read its team's Secrets, exec into pods, or create pods, Services or "
        "Deployments with its token",
        live=("test_skypilot_task_token_only_tears_its_cluster_down",),
    ),
    Claim(
        "A Ray cluster from the templates (all of them, the text classifier included) answers only callers "
        "with its token, even inside its namespace",
        not_live="KubeRay's operator creates the token Secret and the Ray head checks it: neither the operator "
        "nor a Ray head runs here",
    ),
    Claim(
        "No tenant exposes a port outside the cluster",
        live=("test_services_are_cluster_ip_only",),
    ),
    Claim(
        "A team uses only the priority classes it was given (when `teams[].priorityClasses` is set)",
        live=("test_priority_classes_are_the_team_own",),
    ),
    Claim(
        "A team's jobs read (or write) only the buckets declared for that team",
        not_live="Workload Identity and the bucket grants are " + GCP_IAM,
    ),
    Claim(
        "Unreviewed pull-request code cannot change a cluster or read a Secret",
        not_live="the PR account's roles/container.clusterViewer and the CI tokens are "
        + GCP_IAM
        + " and GitHub",
    ),
    Claim(
        "The deploy identity has exactly the roles the program needs",
        not_live="the deploy identity's project roles are " + GCP_IAM,
    ),
    Claim(
        "Tenant pods without GPUs (Ray heads, launchers) do not run next to the operators (prod, gpudirect)",
        live=("test_no_team_pod_tolerates_the_system_pool",),
        not_live="where pods land (the tainted pool, the tenant flavor's node selector) is the scheduler's "
        "and GKE's: no kube-scheduler or node runs here",
    ),
)

MULTIKUEUE: tuple[Claim, ...] = (
    Claim(
        "A MultiKueue worker runs the tenants' pods",
        not_live="how MultiKueue works (Kueue's documentation), not a guarantee; the worker's own rules are "
        "the next sentence",
    ),
    Claim(
        'each row of "Guaranteed" above holds on each worker as on the manager',
        live=("test_worker_holds_the_team_rules",),
        not_live="its Dataplane V2 and NetworkPolicies: " + CNI,
    ),
    Claim("The pack judges each cluster on its own", not_live=PACK),
    Claim(
        "What a worker cluster's admin (not a team) can still see and do",
        not_live="what an admin may do is what the guarantee leaves out; cluster-admin and container.admin "
        "pass every check by design",
    ),
    Claim(
        "The manager's Kueue holds, in the manager's kueue-system Secret",
        live=("test_worker_multikueue_token_reaches_jobs_not_secrets", "test_no_team_right_in_kueue_system"),
    ),
    Claim(
        "With `credentials: clusterProfile` the Kueue principal's project roles reach every cluster",
        not_live="the Kueue principal's project roles and Connect Gateway are " + GCP_IAM,
    ),
    Claim(
        "Teams of different workers share one Cloud Monitoring project",
        not_live="Cloud Monitoring is a GCP service: " + GCP_IAM,
    ),
    Claim(
        "Checked live by `tests/live/test_security_claims.py`",
        not_live="a pointer to the tests of the claims above, not a claim",
    ),
)


@dataclass(frozen=True)
class Row:
    """One row of the "Guaranteed" table."""

    between_tenants: str
    mechanism: str
    checked_by: str


def section(text: str, heading: str) -> str:
    """The text under ``heading`` up to the next level-2 heading."""
    start = text.index(heading + "\n") + len(heading) + 1
    end = text.find("\n## ", start)
    return text[start : end if end >= 0 else len(text)]


def guaranteed_rows(text: str) -> list[Row]:
    """The rows of the "Guaranteed" table (its header and separator left out)."""
    lines = [line for line in section(text, GUARANTEED_HEADING).splitlines() if line.startswith("|")]
    rows = []
    for line in lines[2:]:
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        if len(cells) != 3:
            raise ValueError(f"a Guaranteed row without three cells: {line[:80]}")
        rows.append(Row(*cells))
    return rows


def sentences(text: str) -> list[str]:
    """A prose section's sentences: one line, split after a full stop before a capital or a code span."""
    flat = " ".join(text.split())
    return [s for s in re.split(r"(?<=[.])\s+(?=[A-Z`])", flat) if s]
