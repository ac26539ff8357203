"""When a resource group's flavor order can move a job onto another GPU type.

Kueue v0.19.2 tries a resource group's flavors in order and moves on to the next whenever the
workload has no room in one (``pkg/scheduler/flavorassigner/flavorassigner.go``
``shouldTryNextFlavor``), so a later flavor whose nodes carry a GPU type no earlier flavor has
takes jobs sized for the earlier type.  The pack's ``kueue-flavors-mix-accelerator-types`` and
the stack's config check (``stacks/checks/accelerator_mix.py``) both decide it here.
"""

from __future__ import annotations

from collections.abc import Sequence


def mixes_accelerator_types(types_in_order: Sequence[frozenset[str]]) -> bool:
    """True when some flavor reaches a GPU type that an earlier flavor of the group does not
    (``types_in_order``: each GPU flavor's types, in the group's order; CPU flavors left out)."""
    return any(
        later - earlier for i, earlier in enumerate(types_in_order) for later in types_in_order[i + 1 :]
    )
