"""Helm output kept on disk, keyed by everything that decides it, shared by every process.

Why: every preview, every pack process and every test worker renders the same few charts with the
same values; the Helm engine plus parsing what it prints costs seconds per chart (KubeRay's
``crds/`` are 4 MB of YAML).  An entry is one JSON file named by the SHA-256 of its key:

- the chart's **content** (:func:`chart_digest`: every file of the resolved chart folder, path and
  bytes), not its folder name, so an edited or re-pulled chart is a miss;
- the **values** as canonical JSON (sorted keys), the **release name** and **namespace**;
- the **render options** exactly as they reach ``helm_python.Chart.render`` (``is_install``) and
  the **capabilities**: the SDK takes none, so a render sees Helm's defaults
  (helm/helm ``pkg/chart/common/capabilities.go`` ``makeDefaultCapabilities``, read at commit
  03b535d6 of Helm v4, the engine's Go SDK line: KubeVersion from the compiled-in
  ``k8s.io/client-go`` version, APIVersions from client-go's scheme), so the engine build fixes
  them and :func:`engine_identity` stands for them;
- the **engine** (:func:`engine_identity`: helm-python-sdk and its native library's versions, the
  Helm Go SDK version, the library file's size and modification time);
- :func:`document_key` names entries of other kinds: a post-renderer's output, by its input, command
  and executable content (``preview.postrender``).

Where (:func:`cache_dir`): ``$GPU_BATCH_RENDER_CACHE``; else ``renders/`` beside
``$GPU_BATCH_CHART_CACHE``; else ``renders/`` in the project's cache root (``cache_home()`` of
``primitives/cache_home.py``) -- outside the checkout, so worktrees and CI share it.  Bounded: after
each write the oldest entries (by modification time; a hit touches its entry) go until at most
:data:`MAX_ENTRIES` entries and :data:`MAX_BYTES` bytes remain.  Written atomically (a temporary
file renamed into place), so a concurrent reader sees a whole entry or none; an entry that does
not read back (truncated, corrupt, another format) is a miss, never an error.

Secrets: an entry is written only when the caller vouches for its inputs (:func:`may_store`): a
set of known secret texts, none of which occurs in the values, name or namespace.  A render whose
secrets are unknown, or whose inputs hold one, is never written (the process still memoises it),
so no secret reaches the disk in clear, nor as an unsalted hash of a guessable value.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import tempfile
from collections.abc import Collection, Iterable, Iterator, Mapping
from contextlib import contextmanager, suppress
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Final

from ...primitives.bounded import BoundedCache
from ...primitives.cache_home import cache_home

RENDER_CACHE_ENV: Final = "GPU_BATCH_RENDER_CACHE"
CHART_CACHE_ENV: Final = "GPU_BATCH_CHART_CACHE"
MAX_ENTRIES: Final = 256
MAX_BYTES: Final = 256 * 1024 * 1024
# Bump when what an entry holds changes, so entries of another layout are never read.
FORMAT: Final = 3

# Chart folder -> (stat signature, digest): hashing a chart is milliseconds, the stat walk less.
_DIGESTS: BoundedCache[Path, tuple[tuple[tuple[str, int, int], ...], str]] = BoundedCache(32)


# The secret texts of the analyzer call being served (set by the pack's servicer guard, which reads
# them from the request before the SDK strips their markers); None outside such a call.
_REQUEST_SECRETS: ContextVar[frozenset[str] | None] = ContextVar("gpu_batch_request_secrets", default=None)


def request_secrets() -> frozenset[str] | None:
    """The secret texts of the current analyzer call, None when not inside one."""
    return _REQUEST_SECRETS.get()


@contextmanager
def known_secrets(texts: Iterable[str]) -> Iterator[None]:
    """Within the block, renders know these are every secret text of their inputs."""
    token = _REQUEST_SECRETS.set(frozenset(texts))
    try:
        yield
    finally:
        _REQUEST_SECRETS.reset(token)


def cache_dir() -> Path:
    """Where entries live (module docstring)."""
    configured = os.environ.get(RENDER_CACHE_ENV)
    if configured:
        return Path(configured)
    charts = os.environ.get(CHART_CACHE_ENV)
    if charts:
        return Path(charts).parent / "renders"
    return cache_home() / "renders"


def _files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file())


def chart_digest(chart_dir: Path) -> str:
    """SHA-256 over every file of the chart folder (relative path and bytes)."""
    files = _files(chart_dir)
    signature = tuple(
        (p.relative_to(chart_dir).as_posix(), st.st_size, st.st_mtime_ns) for p in files for st in (p.stat(),)
    )
    known = _DIGESTS.get(chart_dir)
    if known is not None and known[0] == signature:
        return known[1]
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.relative_to(chart_dir).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    _DIGESTS.put(chart_dir, (signature, digest.hexdigest()))
    return digest.hexdigest()


@functools.lru_cache(maxsize=1)
def engine_identity() -> tuple[str, ...]:
    """What identifies the Helm engine, and so Helm's default capabilities."""
    from helm_python import _native

    path = Path(_native.library_path)
    try:
        st = path.stat()
        stamp = f"{st.st_size}:{st.st_mtime_ns}"
    except OSError:
        stamp = "?"
    return (
        str(getattr(__import__("helm_python"), "__version__", "?")),
        _native.helm_c_version(),
        _native.helm_sdk_version(),
        stamp,
    )


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def entry_key(
    chart_dir: Path,
    values: Any,
    *,
    release_name: str,
    namespace: str,
    options: Mapping[str, Any],
) -> str:
    """The SHA-256 naming a render: chart content, values, name, namespace, options, engine."""
    key = canonical_json(
        {
            "format": FORMAT,
            "chart": chart_digest(chart_dir),
            "values": values,
            "name": release_name,
            "namespace": namespace,
            "options": dict(options),
            "engine": list(engine_identity()),
        }
    )
    return hashlib.sha256(key.encode()).hexdigest()


def document_key(parts: Mapping[str, Any]) -> str:
    """The SHA-256 naming an entry of another kind (a post-renderer's output): ``parts``, the
    format and the engine."""
    key = canonical_json({"format": FORMAT, "engine": list(engine_identity()), **parts})
    return hashlib.sha256(key.encode()).hexdigest()


def _texts(value: Any) -> Iterable[str]:
    if isinstance(value, Mapping):
        for k, v in value.items():
            yield str(k)
            yield from _texts(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _texts(v)
    elif value is not None:
        yield str(value)


def may_store(secrets: Collection[str] | None, *inputs: Any) -> bool:
    """Whether a render of ``inputs`` may be written: its secrets are known (``None``: unknown,
    e.g. a pack call whose secret markers the SDK already stripped) and none occurs in them."""
    if secrets is None:
        return False
    needles = [s for s in secrets if s]
    if not needles:
        return True
    return not any(n in text for text in _texts(list(inputs)) for n in needles)


def read(key: str) -> Any | None:
    """The stored JSON document, or None when absent or unreadable (a miss); a hit is touched."""
    path = cache_dir() / f"{key}.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("key") != key:
        return None
    with suppress(OSError):
        os.utime(path)
    return data.get("document")


def write(key: str, document: Any) -> None:
    """Store ``document`` under ``key`` atomically, then evict the oldest entries over the bounds.
    A cache that cannot be written only costs time."""
    folder = cache_dir()
    try:
        text = json.dumps({"format": FORMAT, "key": key, "document": document})
    except (TypeError, ValueError):
        return
    try:
        folder.mkdir(parents=True, exist_ok=True)
        handle, staging = tempfile.mkstemp(dir=folder, prefix=".", suffix=".tmp")
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        Path(staging).replace(folder / f"{key}.json")
    except OSError:
        return
    evict(folder)


def evict(folder: Path, max_entries: int = MAX_ENTRIES, max_bytes: int = MAX_BYTES) -> None:
    """Remove the least recently used entries until both bounds hold (another process may remove
    the same file first: that is fine)."""
    entries: list[tuple[int, int, Path]] = []
    try:
        for path in folder.glob("*.json"):
            try:
                st = path.stat()
            except OSError:
                continue
            entries.append((st.st_mtime_ns, st.st_size, path))
    except OSError:
        return
    entries.sort()
    total = sum(size for _, size, _ in entries)
    while entries and (len(entries) > max_entries or total > max_bytes):
        _, size, path = entries.pop(0)
        total -= size
        with suppress(OSError):
            path.unlink()
