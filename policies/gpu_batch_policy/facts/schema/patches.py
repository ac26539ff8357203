"""Which Pulumi resources are pulumi-kubernetes ``<Kind>Patch`` resources (server-side apply patches).

pulumi/pulumi-kubernetes ``provider/pkg/kinds/util.go`` ``IsPatchResource`` (v4.32.0): a resource
is a patch when its type token's name is its ``kind`` followed by ``Patch``
(``kubernetes:core/v1:NamespacePatch`` with ``kind: Namespace``); the SDK's ``<Kind>Patch``
classes set ``kind`` to the patched kind.  The pack (``rules.builtin_objects``) and the offline
preview (``preview.manifests``) both ask here, then validate the object as a partial one
(:meth:`.core.CoreValidator.validate` ``patch``).
"""

from __future__ import annotations

from typing import Any, Final

PATCH_SUFFIX: Final = "Patch"


def patched_kind(type_name: str, kind: Any) -> str | None:
    """The kind a ``<Kind>Patch`` type patches; None for a whole object.

    ``kind`` is the object's ``kind`` field; when it is not a string (absent, or unknown until
    apply) the type's name stands for it, as the SDK would have set it.  The caller compares the
    result with ``type_name`` (:func:`is_patch`) before trusting it."""
    if not type_name.endswith(PATCH_SUFFIX):
        return None
    return kind if isinstance(kind, str) else type_name.removesuffix(PATCH_SUFFIX)


def is_patch(type_name: str, kind: Any) -> bool:
    """``IsPatchResource``: the type's name is ``kind`` + ``Patch``."""
    patched = patched_kind(type_name, kind)
    return patched is not None and f"{patched}{PATCH_SUFFIX}" == type_name
