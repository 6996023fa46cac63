"""The Kubernetes example (`deploy/kubernetes/`): valid for a pinned Kubernetes, and true to Parley.

Every object the kustomization applies is validated against the JSON schemas of Kubernetes
`VERSION` (the `kubernetes-validate` dev dependency bundles them), strictly: a field Kubernetes
does not know fails as a wrong type does. Then what the schemas cannot know: the commands are
`parley` commands, every variable is one Parley reads, the ConfigMap loads as Parley's
settings with the Secret's files, the probes and the port are the web server's, the autoscaler
reads a metric Parley exports, and the pods run as the image's user on a read-only root with a
private temporary folder for the health signals. The processes themselves, started with this
configuration and probed as the manifests say: tests/integration/deploy/.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import typer.main
import yaml

from adapters.http import readiness
from bot.config.secret_files import SUFFIX
from bot.config.settings import ENV_PREFIX, Settings, env_name, load_settings, secret_variables
from tests.support.dockerfile import DOCKERFILE, ROOT
from tests.support.kubernetes import (
    KUBERNETES,
    Object,
    config,
    containers,
    kustomization,
    mounts,
    one,
    render,
)
from tests.support.metric_names import exported
from worker.cli import app
from worker.health import ROLES

VERSION = "1.31.0"  # the oldest Kubernetes the example is held to; autoscaling/v2 is GA since 1.23
NOT_APPLIED = {"kustomization.yaml", "prometheus-adapter-rules.yaml"}
SECRETS_AT = "/run/secrets/parley"
DATA_AT = "/app/data"
OPERATIONS = ROOT / "docs" / "OPERATIONS.md"
# Read by something other than Parley's settings: the temporary folder (Python's tempfile).
OTHER_VARIABLES = {"TMPDIR"}


def deployments(objects: list[Object]) -> dict[str, Object]:
    return {o["metadata"]["name"]: o for o in objects if o["kind"] == "Deployment"}


def pod(deployment: Object) -> Object:
    spec: Object = deployment["spec"]["template"]["spec"]
    return spec


def probes(container: Object) -> list[Object]:
    kinds = ("startupProbe", "livenessProbe", "readinessProbe")
    return [container[kind] for kind in kinds if kind in container]


def test_every_object_is_valid_for_the_pinned_kubernetes() -> None:
    objects = render()
    assert {o["kind"] for o in objects} >= {
        "ConfigMap", "PersistentVolumeClaim", "Deployment", "Service", "HorizontalPodAutoscaler"
    }  # fmt: skip
    for obj in objects:
        kubernetes_validate.validate(obj, VERSION, strict=True)


def test_the_validation_fails_a_field_kubernetes_does_not_know() -> None:
    """The check above can fail: a misspelt probe is refused, not ignored."""
    broken = copy.deepcopy(deployments(render())["parley-web"])
    container = pod(broken)["containers"][0]
    container["livenesProbe"] = container.pop("livenessProbe")
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, VERSION, strict=True)


def test_the_kustomization_applies_every_manifest_of_its_folder() -> None:
    listed = set(kustomization()["resources"])
    present = {p.name for p in KUBERNETES.glob("*.yaml")} - NOT_APPLIED
    assert listed == present
    for obj in render():
        if obj["kind"] != "Namespace":
            assert obj["metadata"]["namespace"] == kustomization()["namespace"]
        assert all(c["image"].startswith("registry.example.com/parley:") for c in containers(obj))


def test_each_deployment_runs_its_parley_command_and_probes_its_own_role() -> None:
    commands = set(typer.main.get_command(app).commands)  # type: ignore[attr-defined]
    found = deployments(render())
    assert set(found) == {"parley-web", "parley-worker", "parley-scheduler"}
    for name, deployment in found.items():
        role = name.removeprefix("parley-")
        (container,) = pod(deployment)["containers"]
        assert container["command"] == ["parley", role] and role in commands
        for probe in probes(container):
            if "exec" in probe:
                assert probe["exec"]["command"] == ["parley", "health", role]
                assert role in ROLES and "health" in commands
        assert probes(container), f"{name} has no probe"
    (web,) = pod(found["parley-web"])["containers"]
    assert all("httpGet" in probe for probe in probes(web))


def known_variables() -> set[str]:
    names = {env_name(field) for field in Settings.model_fields}
    assert all(n.startswith(ENV_PREFIX) or n.isupper() for n in names)
    return names | {v + SUFFIX for v in secret_variables().values()} | OTHER_VARIABLES


def test_every_variable_is_one_parley_reads() -> None:
    objects = render()
    known = known_variables()
    assert set(config(objects)) - known == set()
    for deployment in deployments(objects).values():
        for container in pod(deployment)["containers"]:
            assert {e["name"] for e in container.get("env", [])} - known == set()
            assert container["envFrom"] == [{"configMapRef": {"name": "parley-config"}}]


def secret_files(data: dict[str, str]) -> dict[str, str]:
    """The `NAME_FILE` variables of the ConfigMap, each with the Secret's key it reads."""
    found = {}
    for variable, path in data.items():
        if variable.endswith(SUFFIX):
            folder, _, key = path.rpartition("/")
            assert folder == SECRETS_AT, f"{variable} reads {path}, outside the Secret's mount"
            assert key == variable.removesuffix(SUFFIX).lower(), f"{variable}: key {key}"
            found[variable] = key
    return found


def test_the_secrets_are_read_from_the_mounted_secrets_files() -> None:
    objects = render()
    keys = secret_files(config(objects))
    secrets = set(secret_variables().values())
    assert {v.removesuffix(SUFFIX) for v in keys} <= secrets
    assert {"REDIS_URL_FILE", "DATABASE_URL_FILE", "PARLEY_API_TOKEN_FILE"} <= set(keys)
    assert not secrets & set(config(objects)), "a secret's value in the ConfigMap"
    for deployment in deployments(objects).values():
        spec = pod(deployment)
        (container,) = spec["containers"]
        volume = mounts(container, spec)[SECRETS_AT]
        assert volume["secret"]["secretName"] == "parley-secrets"
        assert "items" not in volume["secret"]  # every key of the Secret is a file
        # Kubernetes makes the files root's, and the pod's fsGroup's when it has one: the
        # user the process runs as reads them through that group, or not at all.
        mode = volume["secret"].get("defaultMode", 0o644)
        if not mode & 0o004:
            assert mode & 0o040 and spec["securityContext"].get("fsGroup") is not None
    # The documented way to create the Secret makes one key for each NAME_FILE.
    section = OPERATIONS.read_text(encoding="utf-8").split("\n## Kubernetes\n", 1)[1]
    documented = set(re.findall(r"> secrets/(\w+)", section.split("\n## ", 1)[0]))
    assert documented == set(keys.values())


def test_the_config_loads_as_parley_settings_with_the_secrets_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a pod's process reads: the ConfigMap, and the Secret's files (here in a folder
    of the test's) through the `_FILE` variables."""
    objects = render()
    data = config(objects)
    values = {
        "redis_url": "redis://:pw@redis.example.internal:6379/0",
        "database_url": "postgresql+asyncpg://parley:pw@postgres.example.internal/parley",
        "parley_api_token": "a-long-random-token",
        "anthropic_api_key": "sk-ant-example",
    }
    for key in secret_files(data).values():
        (tmp_path / key).write_text(values[key] + "\n", encoding="utf-8")
    for variable in known_variables():
        monkeypatch.delenv(variable, raising=False)
    for variable, value in data.items():
        monkeypatch.setenv(variable, value.replace(SECRETS_AT, str(tmp_path)))
    monkeypatch.chdir(tmp_path)  # no .env
    settings = load_settings()
    assert settings.redis_url == values["redis_url"]
    assert settings.database_url == values["database_url"]
    assert settings.api_token is not None
    assert settings.api_token.get_secret_value() == values["parley_api_token"]
    web = pod(deployments(objects)["parley-web"])
    (container,) = web["containers"]
    (port,) = container["ports"]
    assert settings.http_host == "0.0.0.0" and settings.http_port == port["containerPort"]
    for deployment in ("parley-web", "parley-worker"):
        spec = pod(deployments(objects)[deployment])
        volume = mounts(spec["containers"][0], spec)[DATA_AT]
        assert volume["persistentVolumeClaim"]["claimName"] == "parley-data"
    for folder in (settings.workspace_dir, settings.files_dir):
        assert folder.is_relative_to(DATA_AT)


def test_the_web_probes_and_service_are_the_web_servers() -> None:
    objects = render()
    spec = pod(deployments(objects)["parley-web"])
    (container,) = spec["containers"]
    (port,) = container["ports"]
    assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": port["name"]}
    assert container["readinessProbe"]["httpGet"] == {"path": readiness.PATH, "port": "http"}
    service = one(objects, "Service", "parley-web")
    assert (
        service["spec"]["selector"]
        == deployments(objects)["parley-web"]["spec"]["selector"]["matchLabels"]
    )
    assert [p["targetPort"] for p in service["spec"]["ports"]] == [port["name"]]


def test_the_workers_scale_on_the_backlog_parley_exports() -> None:
    objects = render()
    hpa = one(objects, "HorizontalPodAutoscaler", "parley-worker")
    assert hpa["spec"]["scaleTargetRef"]["name"] == "parley-worker"
    assert "replicas" not in deployments(objects)["parley-worker"]["spec"]  # the HPA's to set
    (metric,) = hpa["spec"]["metrics"]
    name = metric[metric["type"].lower()]["metric"]["name"]
    assert name == "parley_queue_depth" and name in exported()
    assert 1 <= hpa["spec"]["minReplicas"] < hpa["spec"]["maxReplicas"]
    rules = yaml.safe_load((KUBERNETES / "prometheus-adapter-rules.yaml").read_text())
    (rule,) = rules["rules"]["external"]
    assert rule["name"]["as"] == name
    assert rule["seriesQuery"].split("{")[0] in exported()
    assert rule["metricsQuery"].startswith("max(")  # every web pod reports the same backlog


def test_two_schedulers_and_a_worker_grace_period_for_the_hand_over() -> None:
    found = deployments(render())
    assert found["parley-scheduler"]["spec"]["replicas"] == 2
    assert pod(found["parley-worker"])["terminationGracePeriodSeconds"] >= 30


def image_uid() -> int:
    uid = re.search(r"useradd [^\n]*--uid (\d+)", DOCKERFILE.read_text(encoding="utf-8"))
    assert uid is not None
    return int(uid[1])


def test_pods_run_as_the_images_user_on_a_read_only_root() -> None:
    for name, deployment in deployments(render()).items():
        spec = pod(deployment)
        context: dict[str, Any] = spec["securityContext"]
        assert context["runAsNonRoot"] and context["runAsUser"] == image_uid(), name
        assert spec["automountServiceAccountToken"] is False
        (container,) = spec["containers"]
        own = container["securityContext"]
        assert own["readOnlyRootFilesystem"] and not own["allowPrivilegeEscalation"]
        assert own["capabilities"]["drop"] == ["ALL"]
        # The health signals are in $TMPDIR/parley-health: a private, writable folder.
        assert "emptyDir" in mounts(container, spec)[config(render())["TMPDIR"]]
        resources = container["resources"]
        assert {"cpu", "memory"} <= set(resources["requests"]), name
        assert "memory" in resources["limits"], name
