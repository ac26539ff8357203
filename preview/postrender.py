"""A release's Helm post-renderer, run over its rendered templates as ``helm install`` runs it.

A Release with ``postrender`` (pulumi-kubernetes ``helm.v3.Release``) installs what that
executable prints, not what the chart renders: Helm writes every template's objects to the
post-renderer's standard input as ``---\\n# Source: <template>\\n<document>``, installs the
documents of its standard output and fails the install when it exits non-zero (helm/helm v3.20.2
``pkg/action/action.go`` ``renderResources``, ``pkg/postrender/exec.go``; helm-www
``docs/topics/advanced.md`` "Post Rendering": "any executable that accepts rendered Kubernetes
manifests on STDIN and returns valid Kubernetes manifests on STDOUT").  The chart's ``crds/``
objects are not part of that stream: Helm installs them before, unchanged (``installCRDs``).

The preview runs the same executable, so ``manifests.yaml`` lists what the release would really
install (Kueue's templated CRDs, which ``components/helm_postrender/drop-crds`` removes because the
stack declares them itself, appear once).  A relative path is resolved against the project
directory, where ``pulumi up`` runs the program; one that does not run, fails or prints nothing
makes the release ``refused`` with one line, as the install would fail.
"""

from __future__ import annotations

import subprocess
from dataclasses import replace
from pathlib import Path

import yaml
from gpu_batch_policy.facts.charts.release import ReleaseRender
from gpu_batch_policy.facts.charts.render import RenderedObject, in_crds_dir

# what the preview gives one post-renderer run before calling it hung: a render is seconds, but on a
# loaded 2-core CI runner (test workers previewing several stacks at once) one took over 60 s
TIMEOUT_SECONDS = 300
POST_RENDERED = "(post-renderer output)"  # the source of an object the post-renderer printed


def helm_stream(objects: tuple[RenderedObject, ...]) -> str:
    """The template objects as Helm hands them to a post-renderer (``renderResources``:
    ``"---\\n# Source: %s\\n%s\\n"`` per document; ``crds/`` objects are not in it)."""
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    return "".join(
        f"---\n# Source: {o.source}\n{yaml.dump(o.manifest, Dumper=dumper, sort_keys=False)}\n"
        for o in objects
        if not in_crds_dir(o.source)
    )


def post_render(render: ReleaseRender, command: str, project_dir: Path) -> ReleaseRender:
    """``render`` with its template objects replaced by what ``command`` prints for them."""
    if render.status != "rendered":
        return render
    path = Path(command)
    executable = str(path if path.is_absolute() or "/" not in command else project_dir / path)
    try:
        done = subprocess.run(
            [executable],
            input=helm_stream(render.objects),
            capture_output=True,
            text=True,
            cwd=project_dir,
            timeout=TIMEOUT_SECONDS,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return _refused(render, command, f"could not run it: {error}")
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no error output"])[-1]
        return _refused(render, command, f"exit status {done.returncode}: {last}")
    try:
        documents = [d for d in yaml.safe_load_all(done.stdout) if d is not None]
    except yaml.YAMLError as error:
        return _refused(render, command, f"printed what is not YAML: {str(error).splitlines()[0]}")
    if not documents:
        return _refused(render, command, "printed nothing")
    if not all(isinstance(d, dict) for d in documents):
        return _refused(render, command, "printed a document that is not a Kubernetes object")
    kept = tuple(o for o in render.objects if in_crds_dir(o.source))
    return replace(render, objects=kept + tuple(RenderedObject(POST_RENDERED, d) for d in documents))


def _refused(render: ReleaseRender, command: str, why: str) -> ReleaseRender:
    return replace(
        render,
        status="refused",
        objects=(),
        message=f"post-renderer {command} {why} (Helm would fail the install the same way)",
        error_kind="postrender",
    )
