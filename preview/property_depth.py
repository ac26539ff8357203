"""How deep a resource's properties nest, and the deepest the preview sends to the pack.

Why: the offline preview encodes each resource with ``json_format.ParseDict``, which recurses
once per level and raises ``RecursionError`` a few hundred levels down, taking the whole preview
with it; and the pack's SDK cannot decode much past 120 levels either (it then answers with an
advisory "cannot check" finding naming the depth and the limit, see
``policies/gpu_batch_policy/runtime/servicer_guard.py``).  So the preview's analyzer client measures each
resource first, without recursion, and a resource deeper than :data:`MAX_SEND_DEPTH` is not sent:
the client reports it itself as one advisory finding that names the resource and its depth, and
every other resource is analysed as usual.
"""

from __future__ import annotations

from gpu_batch_policy.facts.schema.depth import nesting_depth as depth

__all__ = ["MAX_SEND_DEPTH", "TOO_DEEP_POLICY", "depth", "too_deep_message"]

# The pack decodes 120 levels at the default recursion limit (servicer_guard.MAX_DECODABLE_DEPTH).
MAX_SEND_DEPTH = 120
TOO_DEEP_POLICY = "gpu-batch-pack"


def too_deep_message(resource: str, levels: int) -> str:
    return (
        f"cannot check resource {resource}: its properties are nested "
        f"{levels} levels deep and the pack reads at most {MAX_SEND_DEPTH}; the preview did not send "
        "it, so no rule checked it. Fix: flatten the property, or pass deep data as a string"
    )
