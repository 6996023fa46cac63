"""A run's status in the record: what its finish reason means to someone who asks "did it
work?". The finish reason says exactly why a run ended; the status sorts those reasons into
outcomes an operator counts, and only `completed` is a success.

A run that waits for a person's decision has not ended (its decision goes on as a run of its
own), and one that found nothing to do did nothing; neither counts for or against the success
rate. Every other status ended without the answer the person asked for.
"""

from __future__ import annotations

from enum import StrEnum

from bot.vocabulary.events import FinishReason


class RunStatus(StrEnum):
    COMPLETED = "completed"  # the run ended with its answer
    FAILED = "failed"  # the provider failed beyond its retries, or the answer broke its schema
    STOPPED = "stopped"  # a /stop or a Stop button, or the reply's stream was cut off
    TIMED_OUT = "timed_out"  # it ran past its time limit
    STEP_LIMIT = "step_limit"  # it made as many model calls as it may without an answer
    LOOPED = "looped"  # it repeated the same tool call until it was stopped
    GIVEN_UP = "given_up"  # its message crashed workers too often and was skipped
    WAITING = "waiting"  # tool calls wait for a person's decision
    SKIPPED = "skipped"  # a decision arrived with nothing waiting for one: nothing was done


STATUS_OF_FINISH: dict[str, RunStatus] = {
    FinishReason.AWAITING_CONFIRMATION: RunStatus.WAITING,
    FinishReason.NOTHING_PENDING: RunStatus.SKIPPED,
    FinishReason.ERROR: RunStatus.FAILED,
    FinishReason.INVALID_OUTPUT: RunStatus.FAILED,
    FinishReason.CANCELLED: RunStatus.STOPPED,
    FinishReason.TIMED_OUT: RunStatus.TIMED_OUT,
    FinishReason.MAX_ITERATIONS: RunStatus.STEP_LIMIT,
    FinishReason.BUDGET_SPENT: RunStatus.STEP_LIMIT,
    FinishReason.DOOM_LOOP: RunStatus.LOOPED,
    FinishReason.POISONED: RunStatus.GIVEN_UP,
}

# Neither a success nor a failure: left out of success rates.
NOT_ENDED = (RunStatus.WAITING, RunStatus.SKIPPED)
# Ended without the answer the person asked for.
UNANSWERED = tuple(s for s in RunStatus if s != RunStatus.COMPLETED and s not in NOT_ENDED)


def status_of(finish_reason: str) -> RunStatus:
    """The status of a run that ended for `finish_reason`. A run that ended with the model's
    answer carries the model's own stop reason (`end_turn`, `max_tokens`, or another of its
    provider's), so every reason not listed is a completed run."""
    return STATUS_OF_FINISH.get(finish_reason, RunStatus.COMPLETED)


def answered(status: str) -> bool:
    """Whether a run with `status` ended with its answer, or has not ended yet: the runs
    whose reliability is judged by their steps alone."""
    return status not in UNANSWERED
