"""``run_together``, the harness's one-call run of several policies, answers per policy exactly as
``run`` (a call per policy) does, and shares the stack model and resource views within the call as
the pack does (``gpu_batch_policy/rules/kit/builders.py`` ``_CallCache``).

The resources are small GPUDirect fixtures on which stack and resource policies report, and one
cannot check yet, so an answer moved to the wrong policy, lost or duplicated shows."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gpu_batch_policy.rules.kit.builders import RESOURCE_CACHE, STACK_CACHE, _CallCache
from pulumi_policy import ResourceValidationPolicy, StackValidationPolicy

from tests.policies.pack_harness import UNKNOWN, Res, run, run_together
from tests.policies.pack_harness import policy as get_policy
from tests.policies.pack_objects import gke_cluster

# three stack policies and a resource policy of the GPUDirect rules
RULES = (
    "gke-gpudirect-version",
    "gke-gpudirect-nic-count",
    "gke-multi-networking-cluster",
    "gke-roce-network-zone",
)
POOL = "gcp:container/nodePool:NodePool"


@dataclass(eq=False)
class Resource:
    """What ``_CallCache`` reads of a ``PolicyResource``."""

    urn: str
    resource_type: str
    name: str


def _pool(name: str, networks: Any) -> Res:
    props = {
        "name": name,
        "cluster": "gpu-cluster",
        "nodeConfig": {"machineType": "a3-megagpu-8g"},
        "networkConfig": {"additionalNodeNetworkConfigs": networks},
    }
    return Res(POOL, name, props)


def _resources() -> list[Res]:
    return [
        gke_cluster(minMasterVersion="1.27.16-gke.9999999"),
        _pool("four-nics", [{"network": "n", "subnetwork": "s"}] * 4),
        _pool("unknown-nics", UNKNOWN),
    ]


def test_each_policy_gets_what_a_call_of_its_own_gives_it() -> None:
    policies = [get_policy(name) for name in RULES]
    kinds = {type(p) for p in policies}
    assert any(issubclass(k, StackValidationPolicy) for k in kinds)
    assert any(issubclass(k, ResourceValidationPolicy) for k in kinds)
    alone = {p.name: run(p, _resources(), {"closedWorld": True}) for p in policies}
    together = run_together(policies, _resources(), {"closedWorld": True})
    assert list(together) == list(RULES)
    assert together == alone
    # the fixtures make both a stack and a resource policy report, and one cannot check
    assert not alone["gke-gpudirect-version"].clean and not alone["gke-gpudirect-nic-count"].clean
    assert any(r.cannot_check for r in alone.values())


def test_the_stack_model_and_each_resource_view_are_built_once_per_call() -> None:
    stack_policies = [p for p in map(get_policy, RULES) if isinstance(p, StackValidationPolicy)]
    resource_policies = [p for p in map(get_policy, RULES) if isinstance(p, ResourceValidationPolicy)]
    assert len(stack_policies) > 1 and resource_policies
    before = STACK_CACHE.builds
    run_together(stack_policies, _resources())
    assert STACK_CACHE.builds - before == 1
    before = STACK_CACHE.builds
    for pol in stack_policies:
        run(pol, _resources())
    assert STACK_CACHE.builds - before == len(stack_policies)  # a call each: each builds its own
    before = RESOURCE_CACHE.builds
    run_together([*resource_policies, *resource_policies], _resources())
    once = RESOURCE_CACHE.builds - before
    before = RESOURCE_CACHE.builds
    run_together(resource_policies, _resources())
    assert once == RESOURCE_CACHE.builds - before > 0  # a second policy in the call builds nothing more


def test_a_call_reuses_its_model_for_the_same_resources_and_reads_identities_only_for_new_objects() -> None:
    cache = _CallCache()
    call, other_call = object(), object()
    first = [Resource("urn:a", "t", "a"), Resource("urn:b", "t", "b")]
    builds: list[int] = []

    def build() -> int:
        builds.append(1)
        return len(builds)

    def get(c: object, members: list[Resource]) -> object:
        return cache.get(c, members, lambda: [(m.urn, m.resource_type, m.name) for m in members], build)

    assert get(call, first) == 1 and cache.identity_reads == 1  # built, its identities kept
    assert get(call, list(first)) == 1 and cache.identity_reads == 1  # same objects: nothing read
    copies = [Resource(r.urn, r.resource_type, r.name) for r in first]
    assert get(call, copies) == 1 and cache.identity_reads == 2  # new objects, same identities
    assert get(call, copies[:1]) == 2  # other resources: built again
    assert get(other_call, copies[:1]) == 3  # another call: built again
