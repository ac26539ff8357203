"""Derive ``gcp.json`` -- every input path of each declared GCP type, replace or update -- from
terraform-provider-google-beta's Go schema at a tag.  A maintainer's tool, run when the pin of
``pulumi-gcp`` moves (the source is not in the project and is not read by tests)::

    python -m preview.replacement_facts.derive --git-dir <terraform-provider-google-beta.git> \
        --tag v7.45.0 > preview/replacement_facts/gcp.json

Why a reader of the Go source: the provider decides replacement with ``ForceNew`` on each schema
attribute (hashicorp/terraform-plugin-sdk ``helper/schema/schema.go`` ``schemaMap.diff``: a
changed attribute whose schema is ``ForceNew`` sets ``RequiresNew``; for a block, ``diffList``
sets it on the element count, so a block's flag decides only its appearing or disappearing and
each nested attribute decides for itself).  pulumi-gcp's bridged schema does not carry the flag.

The wire names follow pulumi-terraform-bridge's naming: camelCase, a list or set block whose
``MaxItems`` is not 1 pluralised, a ``MaxItems: 1`` block flattened to an object.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

# Pulumi type -> (Terraform resource, files whose definitions build its schema, root definition).
TYPES: Final[Mapping[str, tuple[str, tuple[str, ...], str]]] = {
    "gcp:container/cluster:Cluster": (
        "google_container_cluster",
        (
            "google-beta/services/container/resource_container_cluster.go",
            "google-beta/services/container/node_config.go",
            "google-beta/services/container/resource_container_node_pool.go",
        ),
        "ResourceContainerCluster",
    ),
    "gcp:container/nodePool:NodePool": (
        "google_container_node_pool",
        (
            "google-beta/services/container/resource_container_node_pool.go",
            "google-beta/services/container/node_config.go",
        ),
        "ResourceContainerNodePool",
    ),
    "gcp:compute/firewall:Firewall": (
        "google_compute_firewall",
        ("google-beta/services/compute/resource_compute_firewall.go",),
        "ResourceComputeFirewall",
    ),
    "gcp:compute/router:Router": (
        "google_compute_router",
        ("google-beta/services/compute/resource_compute_router.go",),
        "ResourceComputeRouter",
    ),
    "gcp:compute/routerNat:RouterNat": (
        "google_compute_router_nat",
        ("google-beta/services/compute/resource_compute_router_nat.go",),
        "ResourceComputeRouterNat",
    ),
    "gcp:compute/network:Network": (
        "google_compute_network",
        ("google-beta/services/compute/resource_compute_network.go",),
        "ResourceComputeNetwork",
    ),
    "gcp:compute/subnetwork:Subnetwork": (
        "google_compute_subnetwork",
        ("google-beta/services/compute/resource_compute_subnetwork.go",),
        "ResourceComputeSubnetwork",
    ),
    "gcp:compute/address:Address": (
        "google_compute_address",
        ("google-beta/services/compute/resource_compute_address.go",),
        "ResourceComputeAddress",
    ),
    "gcp:certificatemanager/certificate:Certificate": (
        "google_certificate_manager_certificate",
        ("google-beta/services/certificatemanager/resource_certificate_manager_certificate.go",),
        "ResourceCertificateManagerCertificate",
    ),
    "gcp:certificatemanager/dnsAuthorization:DnsAuthorization": (
        "google_certificate_manager_dns_authorization",
        ("google-beta/services/certificatemanager/resource_certificate_manager_dns_authorization.go",),
        "ResourceCertificateManagerDnsAuthorization",
    ),
    "gcp:dns/recordSet:RecordSet": (
        "google_dns_record_set",
        ("google-beta/services/dns/resource_dns_record_set.go",),
        "ResourceDnsRecordSet",
    ),
    "gcp:compute/globalAddress:GlobalAddress": (
        "google_compute_global_address",
        ("google-beta/services/compute/resource_compute_global_address.go",),
        "ResourceComputeGlobalAddress",
    ),
    "gcp:compute/resourcePolicy:ResourcePolicy": (
        "google_compute_resource_policy",
        ("google-beta/services/compute/resource_compute_resource_policy.go",),
        "ResourceComputeResourcePolicy",
    ),
    "gcp:serviceaccount/account:Account": (
        "google_service_account",
        ("google-beta/services/resourcemanager/resource_google_service_account.go",),
        "ResourceGoogleServiceAccount",
    ),
    "gcp:projects/iAMMember:IAMMember": (
        "google_project_iam_member",
        (
            "google-beta/tpgiamresource/resource_iam_member.go",
            "google-beta/services/resourcemanager/iam_project.go",
        ),
        "IamMemberBaseSchema+IamProjectSchema",
    ),
    "gcp:serviceaccount/iAMMember:IAMMember": (
        "google_service_account_iam_member",
        (
            "google-beta/tpgiamresource/resource_iam_member.go",
            "google-beta/services/resourcemanager/iam_service_account.go",
        ),
        "IamMemberBaseSchema+IamServiceAccountSchema",
    ),
    "gcp:storage/bucket:Bucket": (
        "google_storage_bucket",
        ("google-beta/services/storage/resource_storage_bucket.go",),
        "ResourceStorageBucket",
    ),
    "gcp:storage/bucketIAMMember:BucketIAMMember": (
        "google_storage_bucket_iam_member",
        (
            "google-beta/tpgiamresource/resource_iam_member.go",
            "google-beta/services/storage/iam_storage_bucket.go",
        ),
        "IamMemberBaseSchema+StorageBucketIamSchema",
    ),
    "gcp:monitoring/dashboard:Dashboard": (
        "google_monitoring_dashboard",
        ("google-beta/services/monitoring/resource_monitoring_dashboard.go",),
        "ResourceMonitoringDashboard",
    ),
    "gcp:monitoring/alertPolicy:AlertPolicy": (
        "google_monitoring_alert_policy",
        ("google-beta/services/monitoring/resource_monitoring_alert_policy.go",),
        "ResourceMonitoringAlertPolicy",
    ),
    "gcp:monitoring/notificationChannel:NotificationChannel": (
        "google_monitoring_notification_channel",
        ("google-beta/services/monitoring/resource_monitoring_notification_channel.go",),
        "ResourceMonitoringNotificationChannel",
    ),
    "gcp:projects/service:Service": (
        "google_project_service",
        ("google-beta/services/resourcemanager/resource_google_project_service.go",),
        "ResourceGoogleProjectService",
    ),
}

# Conditional ForceNew in a CustomizeDiff (``customdiff.ForceNewIfChange(key, fn)`` or
# ``d.ForceNew(key)``), keyed by the function or the Terraform key, as the condition the plan diff
# evaluates (preview/replacements.py).  A conditional not listed here fails the derivation, so
# a new one upstream is never silently read as an update.
CONDITIONS: Final[Mapping[str, str]] = {
    # resource_container_cluster.go isBeenEnabled: "if subsetting is enabled, but is not now".
    "isBeenEnabled": "disabled",
    # resource_storage_bucket.go isPolicyLocked: "the old policy is locked, but the new is not".
    "isPolicyLocked": "disabled",
    # resource_compute_subnetwork.go IsShrinkageIpCidr: the new range does not contain the old.
    "IsShrinkageIpCidr": "cidr-not-expanded",
    # containerClusterAutopilotPrivilegedAdmissionCustomizeDiff: an API removed from the set.
    "enable_k8s_beta_apis.0.enabled_apis": "element-removed",
    # containerClusterAutopilotCustomizeDiff: only when enable_autopilot is true.
    "dns_config.0.additive_vpc_scope_dns_domain": "autopilot",
}
IF_CHANGE = re.compile(r'customdiff\.ForceNewIfChange\(\s*"([\w.]+)"\s*,\s*(\w+)')
FORCE_NEW_CALL = re.compile(r'\bd\.ForceNew\(\s*"([\w.]+)"')

TOKEN = re.compile(
    r'"(?:\\.|[^"\\])*"|`[^`]*`|//[^\n]*|/\*.*?\*/|\'(?:\\.|[^\'\\])*\'|[A-Za-z_][\w.]*|\d+|\S',
    re.DOTALL,
)
OPEN, CLOSE = "{([", "})]"


@dataclass
class Attr:
    """One schema attribute: its flags and, for a block, its attributes."""

    type: str = ""
    force_new: bool = False
    max_items: int = 0
    computed_only: bool = False
    children: dict[str, Attr] | None = None
    ref: str = ""  # an Elem or value given by name, resolved later


@dataclass
class Source:
    tokens: list[str]
    definitions: dict[str, int] = field(default_factory=dict)  # name -> token index of its body


def tokenize(text: str) -> list[str]:
    return [t for t in TOKEN.findall(text) if not t.startswith(("//", "/*", "`"))]


def index(tokens: list[str]) -> dict[str, int]:
    """Top-level ``func Name(...) ... {`` and ``var Name = ...`` definitions."""
    found: dict[str, int] = {}
    depth = 0
    for i, tok in enumerate(tokens):
        if tok in OPEN:
            depth += 1
        elif tok in CLOSE:
            depth -= 1
        elif depth == 0 and tok in ("func", "var") and i + 1 < len(tokens):
            name = tokens[i + 1]
            if tok == "var" and tokens[i + 2] == "=":
                found[name] = i + 3
            elif tok == "func" and name != "(":
                j = i + 2
                while tokens[j] != "{" or _paren_depth(tokens, i, j):
                    j += 1
                found[name] = j
    return found


def _paren_depth(tokens: list[str], start: int, end: int) -> int:
    return sum(1 if t == "(" else -1 if t == ")" else 0 for t in tokens[start:end])


def skip(tokens: list[str], i: int) -> int:
    """Past one value: balanced brackets up to the next ``,`` or closing bracket at depth 0."""
    depth = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok in OPEN:
            depth += 1
        elif tok in CLOSE:
            if depth == 0:
                return i
            depth -= 1
        elif tok == "," and depth == 0:
            return i
        i += 1
    return i


class Parser:
    def __init__(self, sources: list[Source]) -> None:
        self.sources = sources

    def definition(self, name: str) -> tuple[Source, int]:
        for source in self.sources:
            if name in source.definitions:
                return source, source.definitions[name]
        raise KeyError(name)

    def resolve(self, name: str, depth: int = 0) -> Any:
        """A definition's schema value: a map of attributes, one attribute, or a resource."""
        name = name.rsplit(".", 1)[-1]
        source, i = self.definition(name)
        toks = source.tokens
        if toks[i] == "{":  # a function body: its `return` value
            end = skip(toks, i + 1)
            j = i + 1
            while j < end and toks[j] != "return":
                j += 1
            return self.value(source, j + 1, depth + 1)[0]
        return self.value(source, i, depth + 1)[0]

    def value(self, source: Source, i: int, depth: int) -> tuple[Any, int]:
        toks = source.tokens
        if depth > 40:
            return None, skip(toks, i)
        j = i
        if toks[j] == "&":
            j += 1
        head = toks[j]
        if head == "map" and "schema.Schema" in toks[j : j + 8]:
            k = toks.index("{", j)
            return self.schema_map(source, k + 1, depth), skip(toks, k)
        if head in ("schema.Schema", "schema.Resource") and toks[j + 1] == "{":
            literal, end = self.literal(source, j + 2, depth)
            return (literal if head == "schema.Schema" else literal.children or {}), end
        if head == "{":
            literal, end = self.literal(source, j + 1, depth)
            return literal, end
        if head == "tpgresource.MergeSchemas" and toks[j + 1] == "(":
            merged: dict[str, Attr] = {}
            k = j + 2
            while toks[k] != ")":
                part, k = self.value(source, k, depth + 1)
                if isinstance(part, dict):
                    merged.update(part)
                if toks[k] == ",":
                    k += 1
            return merged, k + 1
        if re.fullmatch(r"[A-Za-z_][\w.]*", head):
            end = skip(toks, j)
            try:
                return self.resolve(head, depth), end
            except (KeyError, ValueError, IndexError):
                return Attr(ref=head), end
        return None, skip(toks, i)

    def schema_map(self, source: Source, i: int, depth: int) -> dict[str, Attr]:
        toks = source.tokens
        out: dict[str, Attr] = {}
        while i < len(toks) and toks[i] != "}":
            if toks[i].startswith('"') and toks[i + 1] == ":":
                key = toks[i][1:-1]
                value, i = self.value(source, i + 2, depth + 1)
                out[key] = value if isinstance(value, Attr) else Attr(ref=str(value))
            else:
                i = skip(toks, i)
            if i < len(toks) and toks[i] == ",":
                i += 1
        return out

    def literal(self, source: Source, i: int, depth: int) -> tuple[Attr, int]:
        """A ``schema.Schema`` or ``schema.Resource`` literal's fields, up to its ``}``."""
        toks = source.tokens
        attr = Attr()
        flags: dict[str, str] = {}
        while i < len(toks) and toks[i] != "}":
            name = toks[i]
            if toks[i + 1] == ":" and name in ("Elem", "Schema"):
                value, i = self.value(source, i + 2, depth + 1)
                if isinstance(value, dict):
                    attr.children = value
                elif isinstance(value, Attr) and value.children is not None:
                    attr.children = value.children
            elif toks[i + 1] == ":":
                end = skip(toks, i + 2)
                flags[name] = " ".join(toks[i + 2 : end])
                i = end
            else:
                i = skip(toks, i)
            if i < len(toks) and toks[i] == ",":
                i += 1
        attr.type = flags.get("Type", "").removeprefix("schema.")
        attr.force_new = flags.get("ForceNew") == "true"
        attr.max_items = int(flags["MaxItems"]) if flags.get("MaxItems", "").isdigit() else 0
        attr.computed_only = flags.get("Computed") == "true" and not (
            flags.get("Optional") == "true" or flags.get("Required") == "true"
        )
        return attr, i + 1


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


def plural(name: str) -> str:
    if name.endswith("s"):
        return name
    if name.endswith("y") and name[-2:-1] not in "aeiou":
        return name[:-1] + "ies"
    if name.endswith(("ch", "sh", "x")):
        return name + "es"
    return name + "s"


def wire_name(key: str, attr: Attr) -> str:
    name = camel(key)
    if attr.type in ("TypeList", "TypeSet") and attr.max_items != 1 and attr.children is not None:
        return plural(name)
    if attr.type in ("TypeList", "TypeSet") and attr.max_items != 1:
        return plural(name)
    return name


def walk(attrs: Mapping[str, Attr], wire: str = "", tf: str = "") -> Iterator[tuple[str, str, Attr]]:
    for key, attr in sorted(attrs.items()):
        if attr.computed_only:
            continue  # an output: never an input path
        path = f"{wire}.{wire_name(key, attr)}" if wire else wire_name(key, attr)
        tf_path = f"{tf}.{key}" if tf else key
        yield path, tf_path, attr
        if attr.children:
            yield from walk(attr.children, path, tf_path)


def kind(attr: Attr) -> str:
    if attr.children is not None:
        return "block" if attr.max_items == 1 else "blocks"
    if attr.type == "TypeMap":
        return "map"
    if attr.type in ("TypeList", "TypeSet"):
        return "list"
    return "value"


def conditional_force_new(texts: list[str]) -> Iterator[tuple[str, str]]:
    """(Terraform key, condition) of every conditional ForceNew in the sources."""
    for text in texts:
        for key, function in IF_CHANGE.findall(text):
            if function not in CONDITIONS:
                raise SystemExit(f"ForceNewIfChange({key}, {function}): condition not modelled")
            yield key, CONDITIONS[function]
        for key in FORCE_NEW_CALL.findall(text):
            if key not in CONDITIONS:
                raise SystemExit(f"d.ForceNew({key}): condition not modelled")
            yield key, CONDITIONS[key]


def derive(git_dir: str, tag: str) -> dict[str, Any]:
    types: dict[str, Any] = {}
    for token, (tf_name, files, root) in TYPES.items():
        sources = []
        texts = []
        for path in files:
            text = subprocess.run(
                ["git", "--git-dir", git_dir, "show", f"{tag}:{path}"],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            texts.append(text)
            tokens = tokenize(text)
            sources.append(Source(tokens, index(tokens)))
        parser = Parser(sources)
        attrs: dict[str, Attr] = {}
        for part in root.split("+"):
            value = parser.resolve(part)
            attrs.update(value if isinstance(value, dict) else (value.children or {}))
        paths = {
            path: {
                "tf": tf_path,
                "kind": kind(attr),
                "action": "replace" if attr.force_new else "update",
            }
            for path, tf_path, attr in walk(attrs)
        }
        by_tf = {entry["tf"]: entry for entry in paths.values()}
        for key, condition in conditional_force_new(texts):
            entry = by_tf.get(key.replace(".0.", "."))
            if entry is None:
                raise SystemExit(f"{token}: conditional ForceNew on unknown attribute {key}")
            if entry["action"] != "replace":
                entry["action"], entry["condition"] = "replace-if", condition
        if not paths:
            raise SystemExit(f"{token}: no attribute parsed from {files} ({root})")
        types[token] = {"terraform": tf_name, "files": list(files), "paths": paths}
    return {
        "source": {"repository": "hashicorp/terraform-provider-google-beta", "tag": tag},
        "types": types,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--git-dir", required=True)
    parser.add_argument("--tag", required=True)
    args = parser.parse_args(argv)
    json.dump(derive(args.git_dir, args.tag), sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
