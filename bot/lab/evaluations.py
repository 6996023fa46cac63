"""Evaluations: chosen recorded runs replayed with a candidate configuration, and the two
sides compared.

Starting one plans a replay of each run in one of `lanes` sessions (`bot.vocabulary.replays`)
and submits them all through the mailbox like messages: each lane's mailbox runs its replays
one after another, so at most `lanes` run at once, on whichever workers take them. A replay
is a message with the recorded run's text and files, the candidate config as its `run`, and
`replay_of` naming the run (`bot.lab.replays` prepares it). A run that began with no message
(a decision, a resume) is not replayed, and its row says so.

The report joins each recorded run with its replay's record: outcome, score, latency,
tokens, cost and steps, and whether the two final answers are the same (case and spacing
aside); the summary puts the two sides' rates and medians over the rows both sides have, so
like is compared with like.
"""

from __future__ import annotations

import asyncio
import statistics
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from bot.mailbox.inbox import Mailbox
from bot.store.evaluations import Compared, Evaluation, Evaluations, Planned
from bot.store.replays import ReplaySources, RunInput
from bot.vocabulary.envelope import Envelope, Sender
from bot.vocabulary.replays import PLATFORM, lane_session
from bot.vocabulary.run_config import RunConfig
from bot.vocabulary.runs import run_id

NOT_A_MESSAGE = (
    "the recorded run has no message to replay: it began with a decision or a resumed turn, "
    "or its message was not kept"
)


@dataclass(frozen=True)
class Candidate:
    """What the replays run with: a run config, and the instructions in place of the chat's
    (None: the chat's own; "": none)."""

    config: RunConfig
    instructions: str | None = None

    def as_json(self) -> dict[str, Any]:
        chosen = self.config.model_dump(mode="json", exclude_defaults=True)
        return chosen | ({} if self.instructions is None else {"instructions": self.instructions})


@dataclass(frozen=True)
class Lab:
    evaluations: Evaluations
    sources: ReplaySources
    mailbox: Mailbox
    lanes: int  # replays at once, at most

    async def start(
        self, runs: Sequence[str], candidate: Candidate, *, label: str, budget: int | None,
        by: str,
    ) -> Evaluation:  # fmt: skip
        """Plan and submit the replays of `runs`, in their order."""
        evaluation = Evaluation(
            uuid.uuid4().hex, label, candidate.as_json(), max(1, min(self.lanes, len(runs))),
            budget, "running", by, datetime.now(UTC),
        )  # fmt: skip
        planned: list[Planned] = []
        envelopes: list[Envelope] = []
        # read side by side: the database's pool bounds how many at once
        sources = await asyncio.gather(*(self.sources.input_of(run) for run in runs))
        for position, (run, source) in enumerate(zip(runs, sources, strict=True)):
            session = lane_session(evaluation.id, position % evaluation.lanes)
            envelope_id = f"replay-{evaluation.id}-{position}"
            skipped = NOT_A_MESSAGE if source is None else None
            planned.append(Planned(position, run, run_id(session, envelope_id), skipped))
            if source is not None:
                envelopes.append(_envelope(envelope_id, session, source, candidate.config))
        await self.evaluations.add(evaluation, planned)
        for envelope in envelopes:
            await self.mailbox.submit(envelope)
        return evaluation

    async def report(self, evaluation: Evaluation) -> dict[str, Any]:
        """The evaluation with its rows and summary (see the module docstring)."""
        rows = await self.evaluations.compared(evaluation.id)
        pending = [row for row in rows if row.after is None and row.skipped is None]
        status = "running" if pending and evaluation.status == "running" else "done"
        if evaluation.status == "cancelled":
            status = "cancelled"
        return {
            "id": evaluation.id,
            "label": evaluation.label,
            "status": status,
            "config": evaluation.config,
            "lanes": evaluation.lanes,
            "budget": evaluation.budget,
            "created_by": evaluation.created_by,
            "created_at": evaluation.created_at.isoformat(),
            "rows": [_row(row) for row in rows],
            "summary": summary(rows),
        }


def _envelope(envelope_id: str, session: str, source: RunInput, config: RunConfig) -> Envelope:
    return Envelope(
        id=envelope_id, session=session, text=source.text, attachments=source.attachments,
        sender=Sender(id=source.sender), platform=PLATFORM, chat_kind=source.chat_kind,
        run=config, replay_of=source.run, seen_on=source.platform,
    )  # fmt: skip


def same_answer(row: Compared) -> bool | None:
    before, after = row.answers
    if row.after is None or before is None or after is None:
        return None
    return " ".join(before.casefold().split()) == " ".join(after.casefold().split())


def _row(row: Compared) -> dict[str, Any]:
    return {
        "run": row.run_id,
        "replay": row.replay_run,
        "before": row.before,
        "after": row.after,
        "same_answer": same_answer(row),
        "answers": {"before": row.answers[0], "after": row.answers[1]},
        "skipped": row.skipped,
    }


def summary(rows: Sequence[Compared]) -> dict[str, Any]:
    """Each side's figures over the rows both sides have."""
    both = [row for row in rows if row.before is not None and row.after is not None]
    same = [same_answer(row) for row in both]
    return {
        "compared": len(both),
        "same_answers": sum(1 for verdict in same if verdict),
        "before": _side([row.before for row in both if row.before is not None]),
        "after": _side([row.after for row in both if row.after is not None]),
    }


def _side(sides: Sequence[dict[str, Any]]) -> dict[str, Any]:
    if not sides:
        return {"success_rate": None, "median_latency_ms": None, "median_score": None,
                "tokens": 0, "cost": None}  # fmt: skip
    scores = [side["score"] for side in sides if side["score"] is not None]
    costs = [side["cost"] for side in sides if side["cost"] is not None]
    return {
        "success_rate": sum(1 for side in sides if side["outcome"] == "completed") / len(sides),
        "median_latency_ms": statistics.median(side["latency_ms"] for side in sides),
        "median_score": statistics.median(scores) if scores else None,
        "tokens": sum(side["tokens"] for side in sides),
        "cost": round(sum(costs), 6) if costs else None,
    }
