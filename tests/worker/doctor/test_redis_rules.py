"""The rules the doctor holds a Redis to, from what Redis says (INFO, CONFIG GET): the
version Parley's commands need, persistence, and an eviction policy that never drops
Parley's keys. A Redis older than 7.0 cannot be started here, so the version rule is held
here on INFO's own field; the other rules also run against a real Redis in
tests/integration/doctor/test_doctor.py."""

from __future__ import annotations

import pytest

from worker.doctor.redis_rules import (
    eviction_finding,
    persistence_finding,
    server_finding,
    version_tuple,
)

WHERE = "redis://:***@redis:6379/0"


@pytest.mark.parametrize(
    ("version", "expected"),
    [("7.0.15", (7, 0, 15)), ("6.2.14", (6, 2, 14)), ("255.255.255", (255, 255, 255)),
     ("7.2.4-valkey", (7, 2, 4)), ("7.0-rc1.2", (7, 0)), ("unknown", ())],
)  # fmt: skip
def test_versions_are_read_as_numbers(version: str, expected: tuple[int, ...]) -> None:
    assert version_tuple(version) == expected


@pytest.mark.parametrize("version", ["6.2.14", "6.0.20", "5.0.7"])
def test_a_redis_older_than_7_fails_naming_what_parley_needs(version: str) -> None:
    finding = server_finding({"redis_version": version, "role": "master"}, WHERE)
    assert finding.status == "failed"
    assert f"Redis {version} at {WHERE}" in finding.found
    assert "needs 7.0 or newer" in finding.found and "EXPIRE … NX" in finding.found
    assert finding.fix is not None and "upgrade Redis to 7.0" in finding.fix


@pytest.mark.parametrize("version", ["7.0.0", "7.0.15", "7.4.2", "8.0.1"])
def test_redis_7_and_newer_pass(version: str) -> None:
    finding = server_finding({"redis_version": version, "role": "master"}, WHERE)
    assert (finding.status, finding.found) == ("ok", f"Redis {version} at {WHERE}")


def test_a_replica_fails_since_it_takes_no_writes() -> None:
    finding = server_finding({"redis_version": "7.4.2", "role": "slave"}, WHERE)
    assert finding.status == "failed" and "read-only replica" in finding.found
    assert finding.fix is not None and "primary" in finding.fix


@pytest.mark.parametrize(
    ("config", "info", "status", "words"),
    [
        ({"appendonly": "yes", "save": ""}, {"aof_enabled": 1}, "ok", "AOF on"),
        ({"appendonly": "no", "save": "3600 1"}, {"aof_enabled": 0}, "ok", "RDB snapshots"),
        ({"appendonly": "no", "save": ""}, {"aof_enabled": 0}, "failed", "nothing is persisted"),
        (None, {"aof_enabled": 1}, "ok", "AOF on"),
        (None, {"aof_enabled": 0}, "warning", "CONFIG is disabled"),
        ({"appendonly": "yes", "save": ""},
         {"aof_enabled": 1, "aof_last_write_status": "err"}, "failed", "could not write"),
        ({"appendonly": "no", "save": "60 1"},
         {"aof_enabled": 0, "rdb_last_bgsave_status": "err"}, "failed", "snapshot failed"),
    ],
)  # fmt: skip
def test_persistence(
    config: dict[str, str] | None, info: dict[str, object], status: str, words: str
) -> None:
    finding = persistence_finding(config, info)
    assert finding.status == status and words in finding.found, finding
    assert (finding.fix is None) == (status == "ok")


def test_no_persistence_names_the_fix() -> None:
    finding = persistence_finding({"appendonly": "no", "save": ""}, {"aof_enabled": 0})
    assert finding.fix is not None and "appendonly yes" in finding.fix


GB = 1 << 30


@pytest.mark.parametrize(
    ("info", "status", "words"),
    [
        ({"maxmemory_policy": "noeviction", "maxmemory": 0}, "ok", "maxmemory 0 (no limit)"),
        ({"maxmemory_policy": "noeviction", "maxmemory": GB, "used_memory": GB // 2}, "ok",
         "maxmemory 1.0 GB"),
        ({"maxmemory_policy": "noeviction", "maxmemory": GB, "used_memory": GB - 1}, "warning",
         "refuses new messages"),
        ({"maxmemory_policy": "allkeys-lru", "maxmemory": 0}, "warning",
         "nothing is evicted while no maxmemory is set"),
        ({"maxmemory_policy": "allkeys-lru", "maxmemory": GB}, "failed",
         "may evict Parley's mailboxes"),
        ({"maxmemory_policy": "volatile-ttl", "maxmemory": GB}, "failed",
         "may evict Parley's leases, duplicate marks"),
    ],
)  # fmt: skip
def test_eviction(info: dict[str, object], status: str, words: str) -> None:
    finding = eviction_finding(info)
    assert finding.status == status and words in finding.found, finding
    if status != "ok":
        assert finding.fix is not None
    if status == "failed":
        assert "noeviction" in (finding.fix or "")
