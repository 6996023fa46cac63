"""The Kubernetes example (`deploy/kubernetes/`) rendered as `kubectl apply -k` would apply it.

No kustomize binary is installed here, so the kustomization is kept to what this renders and
nothing more: `resources` (plain manifest files, several documents each), a `namespace` set on
every namespaced object, and `images` (a new name and tag for the containers of an image).
A field beyond these fails `render`, so the example never grows a feature the tests ignore.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from tests.support.dockerfile import ROOT

KUBERNETES = ROOT / "deploy" / "kubernetes"
KNOWN = {"apiVersion", "kind", "namespace", "resources", "images"}
CLUSTER_WIDE = {"Namespace", "PersistentVolume", "ClusterRole", "ClusterRoleBinding"}
Object = dict[str, Any]


def kustomization(folder: Path = KUBERNETES) -> Object:
    loaded: Object = yaml.safe_load((folder / "kustomization.yaml").read_text(encoding="utf-8"))
    unknown = set(loaded) - KNOWN
    assert not unknown, f"kustomization fields this renderer does not apply: {sorted(unknown)}"
    return loaded


def render(folder: Path = KUBERNETES) -> list[Object]:
    """Every object the kustomization applies, with its namespace and images set."""
    spec = kustomization(folder)
    objects: list[Object] = []
    for resource in spec["resources"]:
        text = (folder / resource).read_text(encoding="utf-8")
        objects.extend(doc for doc in yaml.safe_load_all(text) if doc is not None)
    for obj in objects:
        if "namespace" in spec and obj["kind"] not in CLUSTER_WIDE:
            obj["metadata"]["namespace"] = spec["namespace"]
        for container in containers(obj):
            container["image"] = _image(container["image"], spec.get("images", []))
    return objects


def _image(image: str, images: list[Object]) -> str:
    name, _, tag = image.partition(":")
    for change in images:
        if change["name"] == name:
            return f"{change.get('newName', name)}:{change.get('newTag', tag or 'latest')}"
    return image


def containers(obj: Object) -> Iterator[Object]:
    """The containers of a workload's pod template (none for other kinds)."""
    pod = obj.get("spec", {}).get("template", {}).get("spec", {})
    yield from pod.get("initContainers", [])
    yield from pod.get("containers", [])


def one(objects: list[Object], kind: str, name: str) -> Object:
    (found,) = [o for o in objects if o["kind"] == kind and o["metadata"]["name"] == name]
    return found


def config(objects: list[Object]) -> dict[str, str]:
    """The ConfigMap every Parley container takes its environment from."""
    data: dict[str, str] = one(objects, "ConfigMap", "parley-config")["data"]
    return data


def mounts(container: Object, pod: Object) -> dict[str, Object]:
    """A container's mount paths, each with the pod volume mounted there."""
    volumes = {v["name"]: v for v in pod["volumes"]}
    return {m["mountPath"]: volumes[m["name"]] for m in container.get("volumeMounts", [])}
