"""A stateful model check of the mailbox's Lua scripts on a real Redis (Hypothesis).

Random interleavings of submissions (with duplicates), two workers taking, committing and
releasing leases, leases expiring under a worker, workers dying (their liveness key lapses) and
coming back from a stall, and sweeps. After every step: the inbox is exactly the accepted
messages not yet committed, commits happened once each and in order, only the lease holder
could commit, and a non-empty inbox is always armed (so a job will come). After a sweep: an
armed session held by a dead worker is free and woken, and a live worker's lease is untouched.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import redis
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule
from redis.asyncio import Redis

from bot.mailbox.inbox import LeaseLost, Mailbox
from bot.mailbox.saved_state import StateWrite
from bot.redis import keys
from bot.vocabulary.envelope import Envelope, Sender

SESSIONS = ("test:a", "test:b")
WORKERS = (0, 1)
WORKER_IDS = ("a0", "b1")  # liveness ids: hex, as the sweep expects in a token


class Jobs:
    async def enqueue_job(self, function: str, *args: Any, **kwargs: Any) -> None:
        return None


def build(url: str) -> type[RuleBasedStateMachine]:
    class MailboxModel(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            redis.Redis.from_url(url).flushall()
            self.loop = asyncio.new_event_loop()
            self.redis = Redis.from_url(url)
            self.mailbox = Mailbox(self.redis, Jobs())
            self.seen: dict[str, set[str]] = {s: set() for s in SESSIONS}
            self.inbox: dict[str, list[str]] = {s: [] for s in SESSIONS}
            self.committed: dict[str, list[str]] = {s: [] for s in SESSIONS}
            self.accepted: dict[str, list[str]] = {s: [] for s in SESSIONS}
            self.holder: dict[str, tuple[int, str] | None] = dict.fromkeys(SESSIONS)
            self.tokens: dict[tuple[int, str], str] = {}
            self.alive = dict.fromkeys(WORKERS, True)
            for worker in WORKERS:
                self.run(self.redis.set(keys.worker(WORKER_IDS[worker]), "1"))

        def run(self, coroutine: Any) -> Any:
            return self.loop.run_until_complete(coroutine)

        def teardown(self) -> None:
            self.run(self.redis.aclose())
            self.loop.close()

        @rule(session=st.sampled_from(SESSIONS), n=st.integers(0, 7))
        def submit(self, session: str, n: int) -> None:
            envelope = Envelope(
                id=f"m{n}", session=session, text=str(n), sender=Sender(id="test:u")
            )
            result = self.run(self.mailbox.submit(envelope))
            assert result.accepted == (envelope.id not in self.seen[session])
            if result.accepted:
                self.seen[session].add(envelope.id)
                self.inbox[session].append(envelope.id)
                self.accepted[session].append(envelope.id)

        @rule(worker=st.sampled_from(WORKERS), session=st.sampled_from(SESSIONS))
        def take(self, worker: int, session: str) -> None:
            token = self.run(self.mailbox.take_lease(session, ttl=60, worker=WORKER_IDS[worker]))
            if self.holder[session] is None:
                assert token is not None
                self.holder[session] = (worker, token)
                self.tokens[(worker, session)] = token
            else:
                assert token is None

        @rule(worker=st.sampled_from(WORKERS), session=st.sampled_from(SESSIONS))
        def commit_head(self, worker: int, session: str) -> None:
            token = self.tokens.get((worker, session))
            heads = self.run(self.mailbox.peek(session, 1))
            if token is None or not heads:
                return
            holds = self.holder[session] == (worker, token)
            try:
                self.run(self.mailbox.commit(session, token, heads, StateWrite("{}")))
            except LeaseLost:
                assert not holds
                return
            assert holds
            self.committed[session].append(self.inbox[session].pop(0))

        @rule(worker=st.sampled_from(WORKERS), session=st.sampled_from(SESSIONS))
        def release(self, worker: int, session: str) -> None:
            token = self.tokens.get((worker, session))
            if token is None:
                return
            result = self.run(self.mailbox.release_if_empty(session, token))
            if self.holder[session] != (worker, token):
                assert result is None
            elif self.inbox[session]:
                assert result is False
            else:
                assert result is True
                self.holder[session] = None

        @rule(session=st.sampled_from(SESSIONS))
        def lease_expires(self, session: str) -> None:
            self.run(self.redis.delete(keys.session(session, "lease")))
            self.holder[session] = None

        @rule(worker=st.sampled_from(WORKERS))
        def worker_dies(self, worker: int) -> None:
            self.run(self.redis.delete(keys.worker(WORKER_IDS[worker])))
            self.alive[worker] = False

        @rule(worker=st.sampled_from(WORKERS))
        def worker_wakes(self, worker: int) -> None:
            """A stalled worker beats again; its leases the sweep freed stay lost."""
            self.run(self.redis.set(keys.worker(WORKER_IDS[worker]), "1"))
            self.alive[worker] = True

        @rule()
        def sweep(self) -> None:
            woken = set(self.run(self.mailbox.sweep(grace=0)))
            for session in SESSIONS:
                armed = self.run(self.redis.exists(keys.session(session, "armed")))
                holder = self.holder[session]
                if armed and holder is not None and not self.alive[holder[0]]:
                    self.holder[session] = holder = None
                    assert not self.run(self.redis.exists(keys.session(session, "lease")))
                if armed and holder is None:
                    assert session in woken
                if holder is not None:
                    assert session not in woken
                    lease = self.run(self.redis.get(keys.session(session, "lease")))
                    assert lease == holder[1].encode()

        @invariant()
        def inbox_matches_and_nothing_is_lost_or_repeated(self) -> None:
            for session in SESSIONS:
                stored = [e.id for e in self.run(self.mailbox.peek(session, 100))]
                assert stored == self.inbox[session]
                assert self.committed[session] + stored == self.accepted[session]
                if stored:
                    assert self.run(self.redis.exists(keys.session(session, "armed")))

    return MailboxModel


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_mailbox_protocol_model(redis_url: str) -> None:
    machine = build(redis_url)
    machine.TestCase.settings = settings(
        max_examples=60,
        stateful_step_count=40,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    machine.TestCase().runTest()
