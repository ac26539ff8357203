"""The live tier's binaries, built from the registries by name once per machine.

Three tools, each resolved by package name from a registry and built (or unpacked) into a cache
outside the checkout, one folder per tool, version and toolchain:

- ``kube-apiserver``: our module ``tests/live/go/kube-apiserver`` (a 10-line ``main`` calling
  ``k8s.io/kubernetes/cmd/kube-apiserver/app.NewAPIServerCommand``), which requires
  ``k8s.io/kubernetes`` at the pinned 1.37 patch release from the Go module proxy;
- ``kueue``: ``go install sigs.k8s.io/kueue/cmd/kueue@v<pin>``, the pin being the Kueue chart's in
  ``charts.lock.yaml`` (Kueue's ``cmd/kueue`` is a ``package main`` of 750 lines: nothing to import);
- ``etcd``: our module ``tests/live/go/etcd`` (a 5-line ``main`` calling
  ``go.etcd.io/etcd/server/v3/etcdmain.Main``), which requires ``go.etcd.io/etcd/server/v3`` at the
  version Kubernetes 1.37 is tested with, from the Go module proxy.

The cache is ``$GPU_BATCH_LIVE_CACHE``, else ``live/`` in the project's cache root (the pack's
``primitives/cache_home.py``).  A folder is complete when its ``build.json`` exists (written last,
after the binary is in place); builds hold an exclusive ``flock`` on ``<folder>.lock``, so parallel
pytest workers and ``make live-tools`` never build one tool twice.  A failed build raises
:class:`ToolError` with the command and the tail of its log: the live tests fail with the reason,
never skip.

``python -m tests.live.toolchain`` builds (or finds) all three and prints where they are and what
each build cost (wall and CPU seconds, from ``build.json``).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT / "policies") not in sys.path:  # the pack's package (``python -m tests.live.toolchain``)
    sys.path.insert(0, str(ROOT / "policies"))

from gpu_batch_policy.primitives.cache_home import cache_home  # noqa: E402

GO_DIR = Path(__file__).resolve().parent / "go"
APISERVER_MODULE = GO_DIR / "kube-apiserver"
ETCD_MODULE = GO_DIR / "etcd"
KUEUE_MODULE = "sigs.k8s.io/kueue"


class ToolError(RuntimeError):
    """A tool could not be had: the message names the command and what it printed."""


@dataclass(frozen=True)
class Tool:
    """A built binary: ``path`` is executable; ``version`` is what it was built at."""

    name: str
    version: str
    path: Path
    build: dict[str, object]


def cache_root() -> Path:
    explicit = os.environ.get("GPU_BATCH_LIVE_CACHE")
    if explicit:
        return Path(explicit)
    return cache_home() / "live"


def _run(cmd: list[str], *, cwd: Path | None = None, env: dict[str, str] | None = None, log: Path) -> str:
    """Run ``cmd``, appending its output to ``log``; raise ToolError with its tail on failure."""
    with log.open("a") as out:
        out.write(f"$ {' '.join(cmd)}\n")
        out.flush()
        try:
            proc = subprocess.run(
                cmd,
                cwd=cwd,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                check=False,
            )
        except FileNotFoundError as exc:
            raise ToolError(f"{cmd[0]}: not found ({exc})") from exc
        out.write(proc.stdout)
    if proc.returncode != 0:
        tail = "\n".join(proc.stdout.strip().splitlines()[-25:])
        raise ToolError(f"`{' '.join(cmd)}` exited {proc.returncode} (log: {log}):\n{tail}")
    return proc.stdout


def go_version() -> str:
    try:
        out = subprocess.run(
            ["go", "env", "GOVERSION"], capture_output=True, text=True, check=True, env=_go_env()
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError) as exc:
        raise ToolError(
            f"the Go toolchain is needed to build the live tier's binaries: `go env GOVERSION`: {exc}"
        ) from exc
    return out


def _go_env() -> dict[str, str]:
    env = dict(os.environ)
    # the installed toolchain builds everything: never fetch another one
    env["GOTOOLCHAIN"] = "local"
    env.setdefault("GOFLAGS", "-buildvcs=false")
    return env


def _required_version(module: Path, path: str) -> str:
    """The version of ``path`` our Go module in ``module`` requires (its go.mod is the pin)."""
    text = (module / "go.mod").read_text()
    match = re.search(rf"^(?:require )?\s*{re.escape(path)} (v\S+)$", text, re.MULTILINE)
    if not match:
        raise ToolError(f"{module / 'go.mod'}: requires no {path} version")
    return match.group(1)


def apiserver_version() -> str:
    return _required_version(APISERVER_MODULE, "k8s.io/kubernetes")


def kueue_version() -> str:
    """Kueue's manager is built at the version of the Kueue chart the stacks pin."""
    lock = yaml.safe_load((ROOT / "charts.lock.yaml").read_text())
    return "v" + str(lock["charts"]["kueue"]["version"]).removeprefix("v")


def _source_digest(folder: Path) -> str:
    digest = hashlib.sha256()
    for name in ("go.mod", "go.sum", "main.go"):
        digest.update(name.encode() + b"\0" + (folder / name).read_bytes() + b"\0")
    return digest.hexdigest()[:12]


@contextmanager
def _locked(lock_path: Path) -> Iterator[None]:
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with lock_path.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _cached(
    name: str,
    key: str,
    version: str,
    binary: str,
    build: Callable[[Path, Path], None],
    version_of: Callable[[], str] | None = None,
) -> Tool:
    """The tool in ``<cache>/<key>/``, built by ``build(folder, log)`` under the key's lock if absent."""
    folder = cache_root() / key
    record = folder / "build.json"
    if record.exists():
        return Tool(name, version, folder / binary, json.loads(record.read_text()))
    with _locked(cache_root() / f"{key}.lock"):
        if record.exists():  # another worker built it while we waited
            return Tool(name, version, folder / binary, json.loads(record.read_text()))
        staging = Path(tempfile.mkdtemp(prefix=f".{key}.", dir=cache_root()))
        log = staging / "build.log"
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.monotonic()
        try:
            build(staging, log)
            if not (staging / binary).is_file():
                raise ToolError(f"building {name} {version} left no {binary} in {staging} (log: {log})")
        except BaseException:
            # keep the log where the next reader finds it, drop the half-built folder
            failed = cache_root() / f"{key}.failed.log"
            if log.exists():
                shutil.copyfile(log, failed)
            shutil.rmtree(staging, ignore_errors=True)
            raise
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if version_of is not None:
            version = version_of()
        info: dict[str, object] = {
            "name": name,
            "version": version,
            "wall_s": round(time.monotonic() - start, 1),
            "cpu_s": round((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), 1),
            "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        (staging / "build.json").write_text(json.dumps(info, indent=1) + "\n")
        if folder.exists():  # a stale half-folder without build.json
            shutil.rmtree(folder)
        staging.rename(folder)
        return Tool(name, version, folder / binary, info)


def kube_apiserver() -> Tool:
    version = apiserver_version()
    gover = go_version()
    # the version the server reports (/version), set as Kubernetes' hack/lib/version.sh sets it:
    # clients such as Kueue parse it and refuse the unset "v0.0.0-master+$Format:%H$"
    major, minor = version.removeprefix("v").split(".")[:2]
    stamp = {"gitVersion": version, "gitMajor": major, "gitMinor": minor, "gitTreeState": "clean"}
    ldflags = " ".join(
        ["-s", "-w"]
        + [
            f"-X k8s.io/{pkg}/version.{k}={v}"
            for pkg in ("client-go/pkg", "component-base")
            for k, v in stamp.items()
        ]
    )
    digest = hashlib.sha256((_source_digest(APISERVER_MODULE) + ldflags).encode()).hexdigest()[:12]
    key = f"kube-apiserver-{version}-{gover}-{digest}"

    def build(out: Path, log: Path) -> None:
        _run(
            ["go", "build", "-trimpath", f"-ldflags={ldflags}", "-o", str(out / "kube-apiserver"), "."],
            cwd=APISERVER_MODULE,
            env=_go_env(),
            log=log,
        )

    return _cached("kube-apiserver", key, version, "kube-apiserver", build)


def kueue() -> Tool:
    version = kueue_version()
    gover = go_version()
    key = f"kueue-{version}-{gover}"

    def build(out: Path, log: Path) -> None:
        env = _go_env()
        env["GOBIN"] = str(out)
        # a module built by its path at the pinned version: Kueue's own go.mod and go.sum decide
        # every dependency (no replace directives at the tag, so `go install pkg@version` works);
        # the version string Kueue logs is set as its Makefile sets it
        ldflags = f"-s -w -X {KUEUE_MODULE}/pkg/version.GitVersion={version}"
        _run(
            ["go", "install", "-trimpath", f"-ldflags={ldflags}", f"{KUEUE_MODULE}/cmd/kueue@{version}"],
            env=env,
            log=log,
            cwd=out,
        )

    return _cached("kueue", key, version, "kueue", build)


def etcd_version() -> str:
    return _required_version(ETCD_MODULE, "go.etcd.io/etcd/server/v3")


def etcd() -> Tool:
    """etcd from our module ``tests/live/go/etcd`` (``etcdmain.Main``), which requires
    ``go.etcd.io/etcd/server/v3`` at the version Kubernetes 1.37 is tested with (kubernetes
    v1.37.2 ``go.mod``; ``hack/lib/etcd.sh`` ``ETCD_VERSION=3.7.0``).  Debian's etcd-server
    (3.4.23), used before, lacks RequestWatchProgress, which kube-apiserver 1.37 needs to serve a
    watch with bookmarks from its cache: it answered Kueue's MultiKueue watches on a worker with
    "a watch stream was requested by the client but the required storage feature
    RequestWatchProgress is disabled" and closed them, ~20,000 times in a 90 s run."""
    version = etcd_version()
    gover = go_version()
    key = f"etcd-{version}-{gover}-{_source_digest(ETCD_MODULE)}"

    def build(out: Path, log: Path) -> None:
        _run(
            ["go", "build", "-trimpath", "-ldflags=-s -w", "-o", str(out / "etcd"), "."],
            cwd=ETCD_MODULE,
            env=_go_env(),
            log=log,
        )

    return _cached("etcd", key, version, "etcd", build)


TOOLS: dict[str, Callable[[], Tool]] = {"etcd": etcd, "kube-apiserver": kube_apiserver, "kueue": kueue}


def all_tools() -> dict[str, Tool]:
    """Every tool, built if need be (etcd first: the smallest Go build; then the two others)."""
    return {name: make() for name, make in TOOLS.items()}


def main(argv: list[str]) -> int:
    names = argv or list(TOOLS)
    failed = False
    for name in names:
        try:
            tool = TOOLS[name]()
        except ToolError as exc:
            print(f"live-tools: {name}: {exc}", file=sys.stderr)
            failed = True
            continue
        print(
            f"live-tools: {tool.name} {tool.version}: {tool.path} "
            f"(built in {tool.build.get('wall_s')} s wall, {tool.build.get('cpu_s')} CPU-s)"
        )
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
