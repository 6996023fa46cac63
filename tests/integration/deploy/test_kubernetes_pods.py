"""Parley's processes started as the Kubernetes example's pods start them, probed as it probes.

Each Deployment's container command runs with the ConfigMap as its environment and the Secret's
keys as files (in folders of the test's, where a pod has /run/secrets/parley, /app/data and its
own emptyDir at /tmp), on PostgreSQL as the example expects; then each probe the manifests name
is asked as the kubelet would: an HTTP GET on the port named in the pod, or the command in
the container's environment. The web's /metrics then counts the worker and the scheduler by
the snapshots they publish, as the alerts read them. The manifests' schema and the settings
behind each variable: tests/test_kubernetes.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
from prometheus_client.parser import text_string_to_metric_families

from tests.support.kubernetes import Object, config, containers, render
from tests.support.metric_names import alert_rules, exported, sample, selectors
from tests.support.redis_server import free_port
from tests.support.waiting import until

TOKEN = "a-long-random-token-for-the-probes-test"
START_LIMIT = 120  # three processes importing at once on a busy machine of two cores
Pod = tuple[Object, dict[str, str], asyncio.subprocess.Process]  # container, environment, process


def where(tmp: Path, role: str) -> dict[str, str]:
    """The pod's folders, in the test's: the Secret, the shared volume, the pod's own /tmp."""
    return {
        "/run/secrets/parley": str(tmp / "secrets"),
        "/app/data": str(tmp / "data"),
        "/tmp": str(tmp / f"{role}-tmp"),
    }


def environment(data: dict[str, str], tmp: Path, role: str, port: int) -> dict[str, str]:
    env = {"PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}", "HOME": str(tmp)}
    for name, value in data.items():
        folders = [(f, ours) for f, ours in where(tmp, role).items() if value.startswith(f)]
        env[name] = value.replace(*folders[0], 1) if folders else value
    Path(env["TMPDIR"]).mkdir(exist_ok=True)
    env["PARLEY_HTTP_PORT"] = str(port)  # the manifests' 8080 may be taken on this machine
    return env


def write_secrets(data: dict[str, str], env: dict[str, str], values: dict[str, str]) -> None:
    for name, path in env.items():
        if name.endswith("_FILE") and name in data:
            Path(path).parent.mkdir(exist_ok=True)
            Path(path).write_text(values[Path(path).name] + "\n", encoding="utf-8")


@contextlib.asynccontextmanager
async def pods(
    objects: list[Object], tmp: Path, values: dict[str, str]
) -> AsyncIterator[dict[str, Pod]]:
    """Each Deployment's container running: its spec, its environment, its process."""
    data, port = config(objects), free_port()
    running: dict[str, Pod] = {}
    try:
        for obj in objects:
            if obj["kind"] != "Deployment":
                continue
            (container,) = containers(obj)
            role = obj["metadata"]["name"].removeprefix("parley-")
            env = environment(data, tmp, role, port)
            write_secrets(data, env, values)
            with (tmp / f"{role}.log").open("wb") as log:
                proc = await asyncio.create_subprocess_exec(
                    *container["command"], env=env, cwd=tmp, stdout=log, stderr=log
                )
            running[role] = (container, env, proc)
        yield running
    finally:
        for _, _, proc in running.values():
            if proc.returncode is None:
                proc.send_signal(signal.SIGTERM)
        for _, _, proc in running.values():
            await asyncio.wait_for(proc.wait(), 60)


async def probe(probe: Object, container: Object, env: dict[str, str]) -> bool:
    """One probe as the kubelet asks it: True when it passes."""
    if "httpGet" in probe:
        ports = {p["name"]: p["containerPort"] for p in container["ports"]}
        port = probe["httpGet"]["port"]
        assert ports[port] == int(ports[port])  # named in the pod
        url = f"http://127.0.0.1:{env['PARLEY_HTTP_PORT']}{probe['httpGet']['path']}"
        with contextlib.suppress(httpx.TransportError):
            async with httpx.AsyncClient(timeout=probe.get("timeoutSeconds", 1)) as client:
                return 200 <= (await client.get(url)).status_code < 400
        return False
    command = probe["exec"]["command"]
    done = await asyncio.create_subprocess_exec(
        *command, env=env, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL
    )
    return await asyncio.wait_for(done.wait(), probe.get("timeoutSeconds", 1) + 30) == 0


async def passing(role: str, kind: str, pod: Pod, log: Path) -> None:
    """Ask the container's probe `kind` until it passes, as the kubelet does."""
    container, env, proc = pod

    async def passes() -> bool:
        if proc.returncode is not None:
            said = await asyncio.to_thread(log.read_text)
            raise AssertionError(f"{role} exited with {proc.returncode}: {said}")
        return await probe(container[kind], container, env)

    await until(passes, f"{role}'s {kind}", START_LIMIT, every=0.5)


async def counted(client: httpx.AsyncClient) -> bool:
    """Whether /metrics counts one worker and one scheduler, leading (each publishes its
    snapshot every 5 s)."""
    shown = (await client.get("/metrics")).text
    names = ("parley_workers", "parley_schedulers", "parley_scheduler_leading")
    return [sample(shown, name) for name in names] == [1, 1, 1]


async def test_each_pods_command_starts_and_passes_every_probe_it_is_given(
    tmp_path: Path, redis_url: str, postgres_url: str
) -> None:
    values = {
        "redis_url": redis_url,
        "database_url": postgres_url,
        "parley_api_token": TOKEN,
        "anthropic_api_key": "sk-ant-not-called-by-this-test",
    }
    async with pods(render(), tmp_path, values) as running:
        assert set(running) == {"web", "worker", "scheduler"}
        for role, pod in running.items():
            kinds = ("startupProbe", "readinessProbe", "livenessProbe")
            for kind in (k for k in kinds if k in pod[0]):
                await passing(role, kind, pod, tmp_path / f"{role}.log")
        base = f"http://127.0.0.1:{running['web'][1]['PARLEY_HTTP_PORT']}"
        async with httpx.AsyncClient(base_url=base, timeout=10) as client:
            assert (await client.get("/metrics")).status_code == 401  # the Secret's token
            client.headers["Authorization"] = f"Bearer {TOKEN}"
            await until(lambda: counted(client), "the worker and the scheduler on /metrics")
            shown = (await client.get("/metrics")).text
    # What the alerts ask for and a scrape shows before anything is counted: every series
    # without labels (a labelled counter shows once counted; tests/test_alerts.py checks it).
    scraped = {s.name for f in text_string_to_metric_families(shown) for s in f.samples}
    unlabelled = {name for name, labels in exported().items() if not labels}
    for rule in alert_rules():
        asked = {selector.name for selector in selectors(rule["expr"])}
        assert asked & unlabelled <= scraped, rule["alert"]
    # every process wrote only where the pod lets it: the volume, the secrets, its /tmp
    written = await asyncio.to_thread(lambda: {p.name for p in tmp_path.iterdir()})
    assert written <= {
        "secrets", "data", "web-tmp", "worker-tmp", "scheduler-tmp",
        "web.log", "worker.log", "scheduler.log",
    }  # fmt: skip
