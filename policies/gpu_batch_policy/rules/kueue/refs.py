"""Kueue references resolve, so no queue sits inactive (anchors.md §4 failure mode 4).

A ClusterQueue that names a missing ResourceFlavor or AdmissionCheck is accepted by the API and
stays inactive (``FlavorNotFound`` / ``AdmissionCheckNotFound``, kueue.md §2); a
provisioning-request AdmissionCheck whose parameters do not point at a ProvisioningRequestConfig
is inactive (``BadParametersRef``, kueue.md §3); a LocalQueue pointing at a missing ClusterQueue
admits nothing.  Workloads then reserve nothing and wait forever.

Cohorts (kueue.md §2-3): a ClusterQueue's ``cohortName`` may be a bare name — Kueue creates the
cohort implicitly, no Cohort object needed — so it is not checked.  A Cohort object's explicit
``parentName``, however, must name a declared Cohort: Kueue silently substitutes an empty default
cohort for a missing parent, so a typo detaches the subtree (its borrowing/lending plan is void)
with no error anywhere; declaring the parent is a one-line fix.  Cycles deactivate every member.

``kueue-clusterqueue-reachable`` (mandatory): a ClusterQueue with GPU quota (what the capacity
report counts) that no namespace can submit to -- an omitted ``namespaceSelector`` (Kueue's
``labels.Nothing()``), or no LocalQueue in a namespace it selects -- admits nothing, ever
(:mod:`...facts.kueue_reach`, shared with the report) -- unless it lends that quota to a reachable
peer of its cohort, which borrows it (a "slack" queue, :func:`...facts.kueue_reach.lent_to`).
When the stack holds no LocalQueue at all and the world is open, its LocalQueues may live in
another stack: cannot check.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import Policy

from ...facts.kueue_capacity import gpu_flavors
from ...facts.kueue_install import INSTALL_PROPERTIES, feature_gate
from ...facts.kueue_reach import lent_to, reach
from ...facts.model import ClusterQueue, LocalQueue, Lookup, StackModel
from ...facts.model.kueue import MULTIKUEUE_CONTROLLER, PROVISIONING_REQUEST_CONTROLLER, ResourceFlavor
from ...facts.open_world import World, world_schema
from ...facts.selectors import NAME_LABEL, selector_matches
from ...primitives.tokens import KUEUE_GROUP
from ...primitives.values import Unknown
from ..kit.builders import stack_policy
from ..kit.references import unresolved
from ..kit.report import Reporter

GPU = "nvidia.com/gpu"


def _declared_names(model: StackModel, kind: str) -> list[str]:
    """The names of a Kueue kind the stack holds (built once per stack, not per reference)."""
    return model.memo(
        f"rules.kueue_refs.name_list:{kind}", lambda: [o.name for o in model.kube_objects(KUEUE_GROUP, kind)]
    )


def _resolve(
    model: StackModel,
    reporter: Reporter,
    subject: Any,
    found: Lookup,
    ref: tuple[str, str],
    *,
    world: World,
    problem: str,
    fix: str,
    unknown: str | None = None,
    exclude: str | None = None,
) -> None:
    """One reference's verdict: "cannot check yet" when an object of its kind has a name unknown
    until apply, the open world's finding (``open_world.unresolved``) when none has its name
    (``exclude``: a name the reference may not use, its own)."""
    kind, name = ref
    if found.status == "unknown":
        reporter.cannot_check(subject, unknown or f"{kind} '{name}' may be one whose name is unknown")
    elif found.status == "missing":
        unresolved(
            world,
            reporter,
            subject,
            (kind, name, None),
            declared=[n for n in _declared_names(model, kind) if n != exclude],
            problem=problem,
            fix=fix,
        )


def check_localqueue_targets(model: StackModel, reporter: Reporter, config: Mapping[str, Any]) -> None:
    world = World.from_config(config)
    for lq in model.local_queues():
        target = lq.cluster_queue
        if isinstance(target, Unknown):
            reporter.cannot_check(lq, "spec.clusterQueue is unknown until apply")
            continue
        if not target:
            reporter.violation(
                lq,
                "spec.clusterQueue is empty, so the queue admits nothing",
                "set `spec.clusterQueue` to the ClusterQueue this namespace submits to (it is immutable)",
            )
            continue
        found, _ = model.find_cluster_queue(target, near=lq)
        _resolve(
            model,
            reporter,
            lq,
            found,
            ("ClusterQueue", target),
            world=world,
            problem=f"spec.clusterQueue names ClusterQueue '{target}', which the stack does not declare",
            fix=f"declare ClusterQueue '{target}' or point the LocalQueue at one of: "
            f"{_declared(model, 'ClusterQueue')}",
        )


def _names(items: list[Any]) -> str:
    names = sorted({i.name for i in items})
    return ", ".join(names) if names else "(none declared)"


def _declared(model: StackModel, kind: str) -> str:
    """The declared names of a Kueue kind, for fixes; listed once per stack, not per finding."""
    return model.memo(f"rules.kueue_refs.names:{kind}", lambda: _names(model.kube_objects(KUEUE_GROUP, kind)))


def check_clusterqueue_references(model: StackModel, reporter: Reporter, config: Mapping[str, Any]) -> None:
    world = World.from_config(config)
    tas = feature_gate(model, config, "TopologyAwareScheduling")
    for cq in model.cluster_queues():
        _check_flavors(model, cq, reporter, world, tas is not False)
        _check_admission_checks(model, cq, reporter, world)


def _check_flavors(model: StackModel, cq: ClusterQueue, reporter: Reporter, world: World, tas: bool) -> None:
    topologies_checked: set[str] = set()  # a flavor named in many resource groups is judged once
    for flavor in cq.flavors():
        if isinstance(flavor.name, Unknown):
            reporter.cannot_check(cq, f"{flavor.path}.name is unknown until apply")
            continue
        found, _ = model.find_resource_flavor(flavor.name, near=cq)
        _resolve(
            model,
            reporter,
            cq,
            found,
            ("ResourceFlavor", flavor.name),
            world=world,
            problem=f"{flavor.path} names ResourceFlavor '{flavor.name}', which the stack does not declare "
            "(the ClusterQueue stays inactive: FlavorNotFound)",
            fix=f"declare ResourceFlavor '{flavor.name}' or use one of: {_declared(model, 'ResourceFlavor')}",
        )
        if found.status == "found" and tas and flavor.name not in topologies_checked:
            topologies_checked.add(flavor.name)
            for obj in found.found:
                _check_topology(model, cq, model.view(obj), reporter, world)


def _check_topology(
    model: StackModel, cq: ClusterQueue, flavor: ResourceFlavor, reporter: Reporter, world: World
) -> None:
    """A TAS flavor (``spec.topologyName``) needs that Topology: without it the ClusterQueue is
    inactive, ``TopologyNotFound`` ("there is no Topology %q for TAS flavor %q";
    kubernetes-sigs/kueue v0.19.2 ``pkg/cache/scheduler/clusterqueue.go`` ``inactiveReason``, with
    the TopologyAwareScheduling gate, on by default)."""
    name = flavor.topology_name
    if isinstance(name, Unknown):
        reporter.cannot_check(
            cq, f"ResourceFlavor '{flavor.obj.name}' spec.topologyName is unknown until apply"
        )
        return
    if not name:
        return
    _resolve(
        model,
        reporter,
        cq,
        model.lookup(KUEUE_GROUP, "Topology", name, near=flavor),
        ("Topology", name),
        world=world,
        problem=f"uses TAS flavor '{flavor.obj.name}', whose topologyName '{name}' names no Topology the stack "
        "declares (the ClusterQueue stays inactive: TopologyNotFound)",
        fix=f"declare Topology '{name}' (kueue.x-k8s.io) or fix the flavor's topologyName "
        f"(declared: {_declared(model, 'Topology')})",
    )


def _check_admission_checks(model: StackModel, cq: ClusterQueue, reporter: Reporter, world: World) -> None:
    flavor_names = set(cq.flavor_names())
    flavors_known = not any(isinstance(f.name, Unknown) for f in cq.flavors())
    controllers: set[str] = set()
    for ref in cq.admission_checks:
        if isinstance(ref.name, Unknown):
            reporter.cannot_check(cq, f"{ref.path}.name is unknown until apply")
        else:
            found = model.lookup(KUEUE_GROUP, "AdmissionCheck", ref.name, near=cq)
            _resolve(
                model,
                reporter,
                cq,
                found,
                ("AdmissionCheck", ref.name),
                world=world,
                problem=f"{ref.path} names AdmissionCheck '{ref.name}', which the stack does not declare "
                "(the ClusterQueue stays inactive: AdmissionCheckNotFound)",
                fix=f"declare AdmissionCheck '{ref.name}' or use one of: {_declared(model, 'AdmissionCheck')}",
            )
            if found.status == "found":
                for obj in found.found:
                    controller = model.view(obj).controller_name
                    if isinstance(controller, str):
                        controllers.add(controller)
        for flavor in ref.on_flavors:
            if isinstance(flavor, Unknown):
                reporter.cannot_check(cq, f"{ref.path}.onFlavors is unknown until apply")
            elif flavor not in flavor_names and flavors_known:
                reporter.violation(
                    cq,
                    f"{ref.path}.onFlavors names flavor '{flavor}', which is not in this ClusterQueue's "
                    "resourceGroups (the API rejects it)",
                    f"use one of the queue's flavors: {', '.join(sorted(flavor_names)) or '(none)'}",
                )
    if MULTIKUEUE_CONTROLLER in controllers and PROVISIONING_REQUEST_CONTROLLER in controllers:
        reporter.violation(
            cq,
            "uses a MultiKueue and a ProvisioningRequest admission check together "
            "(the ClusterQueue goes inactive: MultiKueueWithProvisioningRequest)",
            "keep the ProvisioningRequest check on the worker clusters' queues, not the manager's",
        )


def check_admissioncheck_parameters(model: StackModel, reporter: Reporter, config: Mapping[str, Any]) -> None:
    world = World.from_config(config)
    for ac in model.admission_checks():
        if isinstance(ac.controller_name, Unknown):
            reporter.cannot_check(ac, "spec.controllerName is unknown until apply")
            continue
        if not ac.is_provisioning_request:
            continue
        params = ac.parameters
        if isinstance(params, Unknown):
            reporter.cannot_check(ac, "spec.parameters is unknown until apply")
            continue
        fix = (
            "set `spec.parameters: {apiGroup: kueue.x-k8s.io, kind: ProvisioningRequestConfig, "
            "name: <config>}` and declare that ProvisioningRequestConfig"
        )
        if params is None:
            reporter.violation(
                ac,
                "the provisioning-request check has no spec.parameters ('missing parameters "
                "reference': the check goes inactive, BadParametersRef)",
                fix,
            )
            continue
        wrong = []
        if isinstance(params.api_group, Unknown) or isinstance(params.kind, Unknown):
            reporter.cannot_check(ac, "spec.parameters.apiGroup/kind is unknown until apply")
        else:
            if params.api_group != KUEUE_GROUP:
                wrong.append(f"apiGroup is {params.api_group!r}, not 'kueue.x-k8s.io'")
            if params.kind != "ProvisioningRequestConfig":
                wrong.append(f"kind is {params.kind!r}, not 'ProvisioningRequestConfig'")
        if wrong:
            reporter.violation(
                ac,
                "spec.parameters " + " and ".join(wrong) + " (the check goes inactive: BadParametersRef)",
                fix,
            )
            continue
        if params.name is None or params.name == "":
            reporter.violation(
                ac, "spec.parameters.name is empty (the check goes inactive: BadParametersRef)", fix
            )
            continue
        found = model.lookup(KUEUE_GROUP, "ProvisioningRequestConfig", params.name, near=ac)
        if found.status == "missing" and not isinstance(params.name, str):
            continue
        _resolve(
            model,
            reporter,
            ac,
            found,
            ("ProvisioningRequestConfig", str(params.name)),
            world=world,
            problem=f"spec.parameters names ProvisioningRequestConfig '{params.name}', which the stack does "
            "not declare (the check goes inactive: BadParametersRef)",
            fix=f"declare ProvisioningRequestConfig '{params.name}' or use one of: "
            f"{_declared(model, 'ProvisioningRequestConfig')}",
            unknown="the ProvisioningRequestConfig name is unknown until apply",
        )


def check_cohort_hierarchy(model: StackModel, reporter: Reporter, config: Mapping[str, Any]) -> None:
    """Open world (``open_world``): a parent when the stack declares no other Cohort is "not in
    this stack" (a tenants stack hangs its cohorts under the cluster stack's root)."""
    world = World.from_config(config)
    cohorts = model.cohorts()
    parents: dict[str, str] = {}
    for cohort in cohorts:
        parent = cohort.parent
        if isinstance(parent, Unknown):
            reporter.cannot_check(cohort, "spec.parentName is unknown until apply")
            continue
        if not parent:
            continue
        parents[cohort.name] = parent
        _resolve(
            model,
            reporter,
            cohort,
            model.lookup(KUEUE_GROUP, "Cohort", parent, near=cohort),
            ("Cohort", parent),
            world=world,
            problem=f"spec.parentName names Cohort '{parent}', which the stack does not declare; Kueue "
            "would silently use an empty default cohort, detaching this subtree",
            fix=f"declare Cohort '{parent}' or fix the name (declared: {_declared(model, 'Cohort')})",
            unknown=f"parent Cohort '{parent}' may be one whose name is unknown",
            exclude=cohort.name,
        )
    reported: set[str] = set()
    for cohort in cohorts:
        path = [cohort.name]
        seen = {cohort.name}
        current = cohort.name
        while current in parents:
            current = parents[current]
            if current in seen:
                cycle = [*path[path.index(current) :], current]
                key = ",".join(sorted(set(cycle)))
                if key not in reported:
                    reported.add(key)
                    member = next(c for c in cohorts if c.name == current)
                    reporter.violation(
                        member,
                        f"Cohort parents form a cycle ({' -> '.join(cycle)}); Kueue deactivates every member",
                        "make one cohort of the cycle a root (remove its `spec.parentName`)",
                    )
                break
            seen.add(current)
            path.append(current)


def check_namespace_selectors(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    namespaces = {ns.name: ns for ns in model.namespaces()}
    for lq in model.local_queues():
        if not isinstance(lq.cluster_queue, str) or not lq.cluster_queue:
            continue
        if not lq.obj.identity_known:
            reporter.cannot_check(lq, "metadata.namespace is unknown until apply")
            continue
        _, cq = model.find_cluster_queue(lq.cluster_queue, near=lq)
        if cq is None:
            continue
        _check_selector_admits(cq, lq, namespaces, reporter)


def _check_selector_admits(
    cq: ClusterQueue, lq: LocalQueue, namespaces: Mapping[str, Any], reporter: Reporter
) -> None:
    selector = cq.namespace_selector
    if isinstance(selector, Unknown):
        reporter.cannot_check(cq, "spec.namespaceSelector is unknown until apply")
        return
    if selector is None:
        reporter.violation(
            cq,
            f"spec.namespaceSelector is omitted, which admits no namespace, yet LocalQueue "
            f"'{lq.obj.qualified_name}' submits to it",
            "set `spec.namespaceSelector` to select the team namespaces "
            f"(e.g. matchLabels {{{NAME_LABEL}: {lq.namespace}}}), or `{{}}` for all",
        )
        return
    ns = namespaces.get(lq.namespace)
    labels: dict[str, str | Unknown] = {NAME_LABEL: lq.namespace}
    complete = False
    if ns is not None:
        labels.update(ns.labels)
        complete = ns.obj.labels_known
    verdict = selector_matches(selector, labels, complete=complete)
    if verdict is None:
        reporter.cannot_check(
            cq,
            f"whether spec.namespaceSelector admits namespace '{lq.namespace}' (its labels are not all known)",
        )
    elif not verdict:
        reporter.violation(
            cq,
            f"spec.namespaceSelector does not select namespace '{lq.namespace}', so LocalQueue "
            f"'{lq.obj.qualified_name}' can never get workloads admitted",
            f"add namespace '{lq.namespace}' to the selector or label the namespace to match it",
        )


def check_reachable(model: StackModel, reporter: Reporter, config: Mapping[str, Any]) -> None:
    world = World.from_config(config)
    open_world = not world.closed and (not model.local_queues() or world.has_kind("LocalQueue"))
    for cq in model.cluster_queues():
        if not gpu_flavors(cq, GPU):
            continue
        verdict = reach(model, cq)
        if verdict.reachable is None:
            reporter.cannot_check(cq, verdict.why)
        elif not verdict.reachable:
            if open_world and cq.namespace_selector is not None:
                reporter.cannot_check(cq, f"its LocalQueues ({verdict.why}; they may live in another stack)")
                continue
            lending = lent_to(model, cq, GPU)
            if lending.borrowers:
                continue  # a slack queue: its quota is its cohort peers' to borrow
            if lending.unsure:
                reporter.cannot_check(cq, f"no namespace submits to it ({verdict.why}), and {lending.unsure}")
                continue
            peers = "; no reachable queue of its cohort can borrow its GPU quota" if cq.cohort else ""
            reporter.violation(
                cq,
                f"no namespace can submit to this ClusterQueue: {verdict.why}{peers}; its GPU quota is "
                "capacity no workload can ever use",
                "select the teams' namespaces in `spec.namespaceSelector` and give them a LocalQueue "
                "pointing at it, or remove the ClusterQueue",
            )


POLICIES: list[Policy] = [
    stack_policy(
        "kueue-localqueue-target-exists",
        "Every Kueue LocalQueue must name a ClusterQueue the stack declares (or lists in externalObjects).",
        check_localqueue_targets,
        config_schema=world_schema(),
    ),
    stack_policy(
        "kueue-clusterqueue-references",
        "A ClusterQueue's flavors, their TAS Topologies and its admission checks must exist (else it stays "
        "inactive); onFlavors must name the queue's own flavors.",
        check_clusterqueue_references,
        config_schema=world_schema(INSTALL_PROPERTIES),
    ),
    stack_policy(
        "kueue-admissioncheck-parameters",
        "A provisioning-request AdmissionCheck must reference a declared ProvisioningRequestConfig "
        "(apiGroup kueue.x-k8s.io, kind ProvisioningRequestConfig).",
        check_admissioncheck_parameters,
        config_schema=world_schema(),
    ),
    stack_policy(
        "kueue-cohort-hierarchy",
        "A Cohort's explicit parentName must name a declared Cohort, and cohort parents must not form a cycle.",
        check_cohort_hierarchy,
        config_schema=world_schema(),
    ),
    stack_policy(
        "kueue-namespace-selector-admits",
        "A ClusterQueue must select the namespaces of the LocalQueues that point at it "
        "(an omitted namespaceSelector admits no namespace).",
        check_namespace_selectors,
    ),
    stack_policy(
        "kueue-clusterqueue-reachable",
        "A ClusterQueue with GPU quota is reachable: it selects a namespace holding a LocalQueue that points at it.",
        check_reachable,
        config_schema=world_schema(),
    ),
]
