"""Text dumps of unchanged documents read back from the render cache, not re-serialised.

Why (issue 44, item 2): a one-team stack registers its operators' CRDs as resources (Kueue's and
KubeRay's, ~2 MB of OpenAPI schema), so ``plan.json`` is ~9 MB and ``manifests.yaml`` ~6 MB.
``json.dumps(indent=2)`` is the standard library's pure-Python encoder (its C encoder serves only
``indent=None``: CPython ``Lib/json/encoder.py``, ``JSONEncoder.iterencode``) and PyYAML's
representer is pure Python even with libyaml's emitter, so writing them took ~1.5 s of a second
preview whose stack had not changed.

An entry is the dumped text, keyed by (:func:`dump_key`):

- the document's **content** (:func:`content_digest`): the SHA-256 of its pickle, C-speed, and
  unlike compact JSON it tells a tuple from a list, ``1`` from ``1.0`` or ``True``, and an ``int``
  key from a ``str`` one, each of which a dumper may write differently; map order is kept, as the
  dumpers keep it.  The pickler runs in fast mode (no memo), so two equal documents give the same
  bytes whichever of their strings happen to be one object;
- the **recipe**: the source of the dump function and the versions of what it calls (CPython for
  ``json``, PyYAML and whether libyaml is used), so a changed dumper is a miss.

Stored with the render cache's own code (``gpu_batch_policy.facts.charts.render_cache``: its
folder outside the checkout, atomic writes, LRU bounds, an unreadable entry is a miss), so
there is one bounded on-disk cache, not two.  A document that does not pickle is dumped, not
cached.  Only display-form documents come here (``preview.records.for_display``: secrets read
``[secret]``), so no secret reaches the disk, as text or as a hash.
"""

from __future__ import annotations

import hashlib
import inspect
import io
import pickle
import sys
from collections.abc import Callable
from typing import Any, Final, TypeVar

import yaml
from gpu_batch_policy.facts.charts import render_cache

# Bump when what an entry's key covers changes.
FORMAT: Final = 1

D = TypeVar("D")


def _recipe(dump: Callable[[Any], str]) -> str:
    """What decides how ``dump`` turns a document into text, besides the document."""
    try:
        source = inspect.getsource(dump)
    except (OSError, TypeError):
        source = f"{getattr(dump, '__module__', '?')}.{getattr(dump, '__qualname__', '?')}"
    return "\0".join(
        (source, sys.version, str(yaml.__version__), str(getattr(yaml, "__with_libyaml__", False)))
    )


def content_bytes(document: Any) -> bytes | None:
    """``document`` pickled without a memo (equal content, equal bytes); None when it does not
    pickle (or refers to itself, which fast mode refuses)."""
    out = io.BytesIO()
    pickler = pickle.Pickler(out, protocol=5)
    pickler.fast = True  # no memo: shared and copied equal values pickle alike
    try:
        pickler.dump(document)
    except (pickle.PicklingError, TypeError, AttributeError, RecursionError, ValueError):
        return None
    return out.getvalue()


def dump_key(kind: str, document: Any, dump: Callable[[Any], str]) -> str | None:
    """The SHA-256 naming ``dump(document)``, or None when the document does not pickle."""
    data = content_bytes(document)
    if data is None:
        return None
    content = hashlib.sha256(data).hexdigest()
    recipe = hashlib.sha256(_recipe(dump).encode()).hexdigest()
    parts = {"format": FORMAT, "kind": kind, "recipe": recipe, "content": content}
    return hashlib.sha256(render_cache.canonical_json(parts).encode()).hexdigest()


def cached_dump(kind: str, document: D, dump: Callable[[D], str]) -> str:
    """``dump(document)``, read back from the cache when this content was dumped this way before."""
    key = dump_key(kind, document, dump)
    if key is None:
        return dump(document)
    stored = render_cache.read(key)
    if isinstance(stored, str):
        return stored
    text = dump(document)
    render_cache.write(key, text)
    return text
