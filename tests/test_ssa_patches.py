"""``preview.ssa_patches``: a ``<Kind>Patch`` is validated as the object it leaves on the cluster.

Server-side apply merges a partial object into the live one (lists keyed by the Kubernetes
OpenAPI ``x-kubernetes-list-map-keys``: ``name`` for containers/volumes, ``mountPath`` for
volumeMounts); the merged object is what the API server validates.
"""

from __future__ import annotations

from typing import Any

from preview.manifests import validate_manifests
from preview.ssa_patches import applied, merge

LIVE: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "kueue-controller-manager", "namespace": "kueue-system"},
    "spec": {
        "selector": {"matchLabels": {"app": "kueue"}},
        "template": {
            "metadata": {"labels": {"app": "kueue"}},
            "spec": {
                "containers": [
                    {
                        "name": "manager",
                        "image": "kueue:v0.19.2",
                        "volumeMounts": [{"name": "cert", "mountPath": "/tmp/k8s"}],
                    }
                ],
                "volumes": [{"name": "cert", "secret": {"secretName": "cert"}}],
            },
        },
    },
}
PATCH: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "kueue-controller-manager", "namespace": "kueue-system"},
    "spec": {
        "template": {
            "spec": {
                "volumes": [{"name": "plugins", "emptyDir": {}}],
                "initContainers": [{"name": "add-plugins", "image": "plugin:v1", "command": ["cp"]}],
                "containers": [
                    {"name": "manager", "volumeMounts": [{"name": "plugins", "mountPath": "/plugins"}]}
                ],
            }
        }
    },
}


def test_a_patch_extends_keyed_lists_and_keeps_the_live_fields() -> None:
    merged = merge(LIVE, PATCH)
    pod = merged["spec"]["template"]["spec"]
    assert [v["name"] for v in pod["volumes"]] == ["cert", "plugins"]
    (manager,) = pod["containers"]
    assert manager["image"] == "kueue:v0.19.2"
    assert [m["mountPath"] for m in manager["volumeMounts"]] == ["/tmp/k8s", "/plugins"]
    assert pod["initContainers"][0]["name"] == "add-plugins"
    assert merged["spec"]["selector"] == LIVE["spec"]["selector"]
    assert LIVE["spec"]["template"]["spec"]["volumes"] == [{"name": "cert", "secret": {"secretName": "cert"}}]


def test_the_merged_object_is_validated_and_an_untargeted_patch_as_it_stands() -> None:
    assert validate_manifests(applied([LIVE], [PATCH])) == []
    alone = validate_manifests(applied([], [PATCH]))
    assert any("spec.selector" in line for line in alone), alone
    wrong = {**PATCH, "spec": {"template": {"spec": {"initContainers": [{"name": "x", "image": 3}]}}}}
    assert validate_manifests(applied([LIVE], [wrong])), "a wrongly typed patched field is caught"
