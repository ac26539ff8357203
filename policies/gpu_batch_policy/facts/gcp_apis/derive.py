"""Derive ``table.json`` -- the Google API each ``gcp:`` resource type is served by -- from the providers.

A maintainer's tool, run when the pin of ``pulumi-gcp`` moves (neither source is in the project
and tests do not read them)::

    python -m gpu_batch_policy.facts.gcp_apis.derive \\
        --tf-git-dir <terraform-provider-google-beta.git> --tf-tag v7.45.0 \\
        --pulumi-git-dir <pulumi-gcp.git> --pulumi-ref <commit> > .../gcp_apis/table.json

Two provider-side facts, joined:

* terraform-provider-google-beta ships a metadata file per resource,
  ``google-beta/services/<service>/resource_<name>[_generated]_meta.yaml``, whose
  ``api_service_name`` is the API the resource calls (e.g. ``resource: google_container_cluster``,
  ``api_service_name: container.googleapis.com``).  IAM members, bindings and policies
  (``<parent>_iam_member`` etc., built by ``tpgiam``) have no file: each calls its parent's
  ``getIamPolicy``/``setIamPolicy`` on the parent's API (e.g. ``services/resourcemanager/
  iam_project.go`` through ``NewResourceManagerClient``), so they take their parent's entry.
* pulumi-gcp's ``provider/cmd/pulumi-resource-gcp/bridge-metadata.json`` (``auto-aliasing``,
  ``resources``) maps each Terraform resource to its Pulumi type token (``current``).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections.abc import Mapping
from typing import Final

META: Final = re.compile(r"_meta\.yaml$")
FIELD: Final = re.compile(r"^(resource|api_service_name):\s*['\"]?([^'\"\s]+)", re.MULTILINE)
IAM: Final = re.compile(r"^(?P<parent>.+)_iam_(?:member|binding|policy)$")
BRIDGE: Final = "provider/cmd/pulumi-resource-gcp/bridge-metadata.json"


def _git(git_dir: str, *args: str) -> str:
    return subprocess.run(
        ["git", "--git-dir", git_dir, *args], check=True, capture_output=True, text=True
    ).stdout


def terraform_apis(git_dir: str, tag: str) -> dict[str, str]:
    """Terraform resource -> API service name, from every ``*_meta.yaml`` at ``tag``."""
    paths = [p for p in _git(git_dir, "ls-tree", "-r", "--name-only", tag).splitlines() if META.search(p)]
    batch = subprocess.run(
        ["git", "--git-dir", git_dir, "cat-file", "--batch"],
        input="".join(f"{tag}:{p}\n" for p in paths),
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    out: dict[str, str] = {}
    for block in re.split(r"^[0-9a-f]{40} blob \d+$", batch, flags=re.MULTILINE):
        fields = dict(FIELD.findall(block))
        if "resource" in fields and "api_service_name" in fields:
            out[fields["resource"]] = fields["api_service_name"]
    return out


def with_iam(apis: Mapping[str, str], resources: list[str]) -> dict[str, tuple[str, str]]:
    """Each Terraform resource -> (API, how it was found): its metadata, or its IAM parent's."""
    out: dict[str, tuple[str, str]] = {r: (a, "meta") for r, a in apis.items()}
    for name in resources:
        match = IAM.match(name)
        if name not in out and match and match["parent"] in apis:
            out[name] = (apis[match["parent"]], f"iam-parent:{match['parent']}")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tf-git-dir", required=True)
    parser.add_argument("--tf-tag", required=True)
    parser.add_argument("--pulumi-git-dir", required=True)
    parser.add_argument("--pulumi-ref", required=True)
    ns = parser.parse_args()
    bridge = json.loads(_git(ns.pulumi_git_dir, "show", f"{ns.pulumi_ref}:{BRIDGE}"))
    tokens = {tf: entry["current"] for tf, entry in bridge["auto-aliasing"]["resources"].items()}
    apis = with_iam(terraform_apis(ns.tf_git_dir, ns.tf_tag), sorted(tokens))
    table = {
        tokens[tf]: {"api": api, "terraform": tf, "from": how}
        for tf, (api, how) in sorted(apis.items())
        if tf in tokens
    }
    doc = {
        "source": {
            "terraform": {"repository": "hashicorp/terraform-provider-google-beta", "tag": ns.tf_tag},
            "pulumi": {"repository": "pulumi/pulumi-gcp", "commit": ns.pulumi_ref, "path": BRIDGE},
        },
        "unmapped": sorted(tokens[tf] for tf in tokens if tf not in apis),
        "types": dict(sorted(table.items())),
    }
    json.dump(doc, sys.stdout, indent=1, sort_keys=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
