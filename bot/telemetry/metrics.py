"""Prometheus metrics: what each process counts, and the one view of the deployment.

Turns run in worker processes, often in other containers than `parley web`, which serves
`/metrics`; they share only Redis. So every process counts in its own registry and publishes
a snapshot of it (the text exposition format) to Redis every few seconds, under a key of its
own with a TTL: one write per interval, never one per observation, and a dead process's
series lapse. `/metrics` adds up the live snapshots by name and labels (counters and
histogram buckets sum; so do the few gauges, which count things per process). A restarted
process starts its counters again, which Prometheus's `rate()` expects.

Labels are bounded: a trigger, a finish reason, an outcome, a registered tool's name (any
other name counts as `other`), a platform and one of its API methods (names written in
Parley's code), never a session, a chat, a person or free text.

The backlog of the mailboxes (`parley_queue_depth` and the sessions it waits in) and the dead
letters' count are the deployment's, not a process's: the web process reads them from Redis
when it is scraped (`exposition`), and no worker publishes them. The dead letters are counted
in Redis rather than by the worker that gave up, so the total never goes back when a worker's
snapshot lapses, which `increase()` would take for a reset and an alert for a new one.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Collection, Iterable
from typing import Any

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    disable_created_metrics,
    generate_latest,
)
from prometheus_client.metrics_core import CounterMetricFamily, Metric
from prometheus_client.parser import text_string_to_metric_families
from redis.asyncio import Redis
from redis.exceptions import RedisError

from bot.mailbox.backlog import Backlog, backlog
from bot.redis import keys
from bot.redis.instance import instance
from bot.redis.results import done
from bot.vocabulary.runs import RunRecord

log = logging.getLogger(__name__)
disable_created_metrics()  # type: ignore[no-untyped-call]  # `_created` samples cannot be added up across processes
REGISTRY = CollectorRegistry()
PUBLISH_EVERY = 5.0
TTL = 30

TURNS = Counter(
    "parley_turns", "Runs of the agent, by what started them and how they ended",
    ["trigger", "finish"], registry=REGISTRY,
)  # fmt: skip
TURN_SECONDS = Histogram(
    "parley_turn_seconds", "How long a run took, from its start to its end",
    buckets=(0.5, 1, 2, 5, 10, 20, 30, 60, 120, 180, 300), registry=REGISTRY,
)  # fmt: skip
FIRST_TEXT_SECONDS = Histogram(
    "parley_first_text_seconds", "From a run's start to its first streamed text",
    buckets=(0.1, 0.25, 0.5, 1, 2, 5, 10, 30), registry=REGISTRY,
)  # fmt: skip
RUN_ITERATIONS = Histogram(
    "parley_run_iterations", "Model calls a run made (its iterations)",
    buckets=(1, 2, 3, 5, 8, 13, 20, 30, 50), registry=REGISTRY,
)  # fmt: skip
STATE_SECONDS = Counter(
    "parley_run_state_seconds",
    "Seconds runs spent by state: calling the model (to its first text), streaming, running "
    "tools, waiting for a person (before a run a decision resumed), other",
    ["state"], registry=REGISTRY,
)  # fmt: skip
MODEL_CALLS = Counter(
    "parley_model_calls",
    "Model calls, by the model that answered (or was last asked) and outcome (ok, error, "
    "cancelled); a model the settings do not name is `other`",
    ["model", "outcome"], registry=REGISTRY,
)  # fmt: skip
DIGESTS = Counter(
    "parley_digests",
    "Days' digests, by outcome: written, nothing (the day held nothing to keep), failed",
    ["outcome"], registry=REGISTRY,
)  # fmt: skip
DIGEST_TOKENS = Counter(
    "parley_digest_tokens", "Tokens the days' digests took, by direction (input, output)",
    ["direction"], registry=REGISTRY,
)  # fmt: skip
MODEL_RETRIES = Counter("parley_model_retries", "Model calls made again", registry=REGISTRY)
MODEL_FAILOVERS = Counter(
    "parley_model_failovers",
    "Model calls handed to the next fallback model, by the model that failed",
    ["model"], registry=REGISTRY,
)  # fmt: skip
TOOL_CALLS = Counter(
    "parley_tool_calls", "Tool calls, by tool and outcome", ["tool", "outcome"],
    registry=REGISTRY,
)  # fmt: skip
COMPACTIONS = Counter("parley_compactions", "Contexts compacted", registry=REGISTRY)
CONFIRMATIONS = Counter(
    "parley_confirmations", "Approvals decided, by decision (approved, denied, expired)",
    ["decision"], registry=REGISTRY,
)  # fmt: skip
PICKUP_SECONDS = Histogram(
    "parley_pickup_seconds", "From a message's arrival to a worker taking it up",
    buckets=(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30), registry=REGISTRY,
)  # fmt: skip
PLATFORM_CALLS = Counter(
    "parley_platform_calls",
    "Requests to a chat platform's API by method and answer (ok, rate_limited, error), and "
    "calls not made for want of room in the rate budget (dropped)",
    ["platform", "method", "outcome"], registry=REGISTRY,
)  # fmt: skip
FILES_SENT = Counter(
    "parley_files_sent",
    "Files the agent sent people (send_file, run_python's ./out/), by platform and as what "
    "they were shown (image, document); a file posted once, however often a turn was resumed",
    ["platform", "kind"], registry=REGISTRY,
)  # fmt: skip
PROVIDER_KEY_CALLS = Counter(
    "parley_provider_key_calls",
    "Model calls by API and key (its place in ANTHROPIC_API_KEY or OPENAI_API_KEY, 1 first; "
    "never the key) and outcome: ok, rate_limited or refused (the next key took the call), "
    "failed (anything else); counted where the setting holds several keys",
    ["provider", "key", "outcome"], registry=REGISTRY,
)  # fmt: skip


def count_key_call(provider: str, key: str, outcome: str) -> None:
    """A model call on one of an API's several keys (`bot.llm.keyring`)."""
    PROVIDER_KEY_CALLS.labels(provider, key, outcome).inc()


VOICE_REPLIES = Counter(
    "parley_voice_replies",
    "Replies said aloud (`/voice`), by platform and outcome: sent, refused (the platform did "
    "not take the voice note) or failed (the speech endpoint gave none)",
    ["platform", "outcome"], registry=REGISTRY,
)  # fmt: skip
PLATFORM_RATE_LIMITED = Counter(
    "parley_platform_rate_limited", "The platform's own rate-limit answers (HTTP 429)",
    ["platform"], registry=REGISTRY,
)  # fmt: skip
RATE_LIMIT_WAIT_SECONDS = Histogram(
    "parley_rate_limit_wait_seconds",
    "How long a platform call waited for the shared rate budget, a platform's retry_after "
    "included (0: not at all)",
    ["platform"], buckets=(0, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120), registry=REGISTRY,
)  # fmt: skip
# Who is running, for the alerts that no worker is or no scheduler leads: each process sets
# its own to 1 and the live snapshots add up (the web process's own shows 0); a killed
# process's snapshot lapses within TTL.
WORKERS = Gauge(
    "parley_workers", "Worker processes running, each publishing its snapshot",
    registry=REGISTRY,
)  # fmt: skip
SCHEDULERS = Gauge(
    "parley_schedulers", "Scheduler processes running, leading or standing by",
    registry=REGISTRY,
)  # fmt: skip
SCHEDULER_LEADING = Gauge(
    "parley_scheduler_leading", "Scheduler processes holding the leader lease (one, normally)",
    registry=REGISTRY,
)  # fmt: skip


def observe_run(record: RunRecord, tools: Collection[str], models: Collection[str] = ()) -> None:
    """Count a recorded run, and what its trace saw; `tools` are the registered names and
    `models` those the settings name: labels take no other value."""

    def model(name: Any) -> str:
        return name if name in models else "other"

    TURNS.labels(record.trigger, str(record.finish_reason)).inc()
    TURN_SECONDS.observe(max(0.0, record.finished_at - record.started_at))
    if record.first_text_at is not None:
        FIRST_TEXT_SECONDS.observe(max(0.0, record.first_text_at - record.started_at))
    RUN_ITERATIONS.observe(record.iterations)
    for state, ms in record.trace.states.items() if record.trace is not None else []:
        STATE_SECONDS.labels(state).inc(ms / 1000)
    for node in record.trace.nodes if record.trace is not None else []:
        if node.kind == "model_call":
            outcome = node.status if node.status != "waiting" else "ok"
            MODEL_CALLS.labels(model(node.detail.get("model")), outcome).inc()
        elif node.kind == "failover":
            MODEL_FAILOVERS.labels(model(node.detail.get("failed"))).inc()
        elif node.kind == "tool_call" and node.status != "waiting":
            TOOL_CALLS.labels(node.name if node.name in tools else "other", node.status).inc()
        elif node.kind == "retry":
            MODEL_RETRIES.inc()
        elif node.kind == "compaction":
            COMPACTIONS.inc()


def own_key() -> str:
    return keys.metrics(instance())


async def publish(redis: Redis, key: str, every: float = PUBLISH_EVERY) -> None:
    """Write this process's snapshot every `every` seconds until cancelled, then remove it.
    Redis away costs a snapshot, never the work the process does."""
    try:
        while True:
            try:
                await redis.set(key, generate_latest(REGISTRY), ex=TTL)
            except (RedisError, OSError) as exc:
                log.debug("could not publish the metrics: %s", exc)
            await asyncio.sleep(every)
    finally:
        with contextlib.suppress(RedisError, OSError):
            await redis.delete(key)


async def snapshots(redis: Redis) -> list[str]:
    """The live processes' snapshots."""
    found = []
    async for key in redis.scan_iter(match=keys.METRICS_MATCH, count=100):
        raw = await done(redis.get(key))
        if raw:
            found.append(raw.decode() if isinstance(raw, bytes) else str(raw))
    return found


class _Merged:
    """A collector of the snapshots added up, for `generate_latest`."""

    def __init__(self, texts: Iterable[str]) -> None:
        self.families: dict[str, Metric] = {}
        values: dict[tuple[str, str, tuple[tuple[str, str], ...]], float] = {}
        for text in texts:
            for family in text_string_to_metric_families(text):
                self.families.setdefault(
                    family.name, Metric(family.name, family.documentation, family.type)
                )
                for sample in family.samples:
                    labels = tuple(sorted(sample.labels.items()))
                    at = (family.name, sample.name, labels)
                    values[at] = values.get(at, 0.0) + sample.value
        for (family_name, name, labels), value in values.items():
            self.families[family_name].add_sample(name, dict(labels), value)

    def collect(self) -> Iterable[Metric]:
        return list(self.families.values())


def backlog_text(found: Backlog) -> str:
    """`found` as gauges in the text format, to be added to the processes' snapshots."""
    registry = CollectorRegistry()
    gauges = (
        ("parley_queue_depth", "Envelopes not yet answered in every session's inbox, "
         "those whose turn is running included", found.envelopes),
        ("parley_sessions_waiting", "Sessions with at least one envelope not yet answered",
         found.sessions),
        ("parley_sessions_running", "Of the sessions waiting, those a worker is running now",
         found.running),
    )  # fmt: skip
    for name, documentation, value in gauges:
        Gauge(name, documentation, registry=registry).set(value)
    return generate_latest(registry).decode()


def dead_letters_text(count: int) -> str:
    """The deployment's dead letters (`keys.DEAD_LETTER_COUNT`) as a counter in the text
    format: kept in Redis, so it never goes back when a worker's snapshot lapses."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Fixed(CounterMetricFamily(
        "parley_dead_letters", "Messages given up on after crashing workers "
        "PARLEY_MAX_ATTEMPTS times (each kept in `parley:dead`, the newest 1000)", value=count,
    )))  # fmt: skip
    return generate_latest(registry).decode()


class _Fixed:
    """A collector of families made at scrape time, for `generate_latest`."""

    def __init__(self, *families: Metric) -> None:
        self.families = list(families)

    def collect(self) -> Iterable[Metric]:
        return self.families


async def exposition(redis: Redis) -> bytes:
    """What `/metrics` shows: this process's counts, every live process's snapshot, and the
    backlog of the mailboxes and the dead letters as they are now."""
    own = generate_latest(REGISTRY).decode()
    found = await backlog(redis)
    dead = int(await done(redis.get(keys.DEAD_LETTER_COUNT)) or 0)
    texts = [own, *await snapshots(redis), backlog_text(found), dead_letters_text(dead)]
    return merged(texts)


def merged(texts: Iterable[str]) -> bytes:
    """`texts` (snapshots in the text format) added up into one exposition."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Merged(texts))
    return generate_latest(registry)
