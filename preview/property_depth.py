"""How deep a resource's properties nest, and the deepest the preview sends to the pack.

Why: the offline preview encodes each resource with ``json_format.ParseDict``, which recurses
once per level and raises ``RecursionError`` a few hundred levels down, taking the whole preview
with it; and the pack's SDK cannot decode much past 120 levels either (it then answers with an
advisory "internal error in the policy pack" finding, see
``policies/gpu_batch_policy/servicer_guard.py``).  So the preview's analyzer client measures each
resource first, without recursion, and a resource deeper than :data:`MAX_SEND_DEPTH` is not sent:
the client reports it itself as one advisory finding that names the resource and its depth, and
every other resource is analysed as usual.
"""

from __future__ import annotations

from typing import Any

# The pack decodes 120 levels at the default recursion limit (servicer_guard.MAX_DECODABLE_DEPTH).
MAX_SEND_DEPTH = 120
TOO_DEEP_POLICY = "gpu-batch-pack"


def depth(value: Any) -> int:
    """Nesting depth of dicts/lists in ``value`` (a scalar is 0, ``{"a": 1}`` is 1)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            deepest = max(deepest, level)
            continue
        deepest = max(deepest, level + 1)
        stack.extend((child, level + 1) for child in children)
    return deepest


def too_deep_message(resource: str, levels: int) -> str:
    return (
        f"internal error in the policy pack on resource {resource}: its properties are nested "
        f"{levels} levels deep and the pack reads at most {MAX_SEND_DEPTH}; the preview did not send "
        "it, so no rule checked it. Fix: flatten the property, or pass deep data as a string"
    )
