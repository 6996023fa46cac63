"""A scheduled task as the rest of Parley sees it, and the envelope each of its runs becomes."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from bot.vocabulary.envelope import Envelope, Sender, task_run_id
from bot.vocabulary.run_config import RunConfig
from bot.vocabulary.schedule import Schedule

MAX_PROMPT = 4000
Status = Literal["active", "done", "cancelled", "missed"]
# What happens to a run that came due while no scheduler ran (found at the next start):
# "skip" runs it late only within the grace period (PARLEY_TASK_GRACE), "run_once" runs it
# once whatever its age (several missed runs of a recurring task make one).
IfMissed = Literal["skip", "run_once"]
# Who made the configuration's tasks; a person's id never looks like this.
CONFIG_CREATOR = "config"
# What a quiet task's run (a check-in) answers when it has nothing worth saying: a run whose
# whole answer is this posts nothing (`bot.session.quiet`).
NOTHING_TO_REPORT = "NOTHING_TO_REPORT"
QUIET_NOTE = (
    "This is a quiet check-in: if there is nothing worth telling the person, answer exactly "
    f"{NOTHING_TO_REPORT} and nothing else; then nothing is posted."
)


class Target(BaseModel):
    """Where a task's runs are answered: where it was made (the session, its platform and the
    adapter's opaque `reply_to`: chat and topic, channel and thread), or the session an
    operator named."""

    model_config = ConfigDict(frozen=True)

    session: str = Field(min_length=1, max_length=300)
    platform: str = Field(min_length=1, max_length=32)
    chat_kind: str = Field(default="private", max_length=32)
    reply_to: dict[str, Any] = Field(default_factory=dict)


class Task(BaseModel):
    id: int
    name: str | None = None
    target: Target
    creator: Sender
    prompt: str
    when: str
    schedule: Schedule
    if_missed: IfMissed
    status: Status
    next_run_at: datetime | None
    last_run_at: datetime | None
    runs: int
    missed: int
    created_at: datetime
    ended_by: str | None = None
    config: RunConfig | None = None  # how its runs are made, where not the chat's way
    tokens_per_day: int | None = None  # its own daily cap, within the deployment's
    quiet: bool = False  # a check-in: its runs post only what is worth saying

    @property
    def active(self) -> bool:
        return self.status == "active"

    @property
    def from_config(self) -> bool:
        return self.name is not None

    def may_be_ended_by(self, person: Sender) -> bool:
        """The rule of approvals: the person who made it, or an admin. A task from the
        configuration is the configuration's: it ends when it is taken out of there."""
        if self.from_config:
            return False
        return person.is_admin or person.id == self.creator.id

    def run_id(self, run_at: datetime) -> str:
        """The envelope id of the run due at `run_at`: the same in every scheduler, so a run
        fired twice during a takeover is one message to the mailbox."""
        return task_run_id(self.id, run_at.timestamp())

    def envelope(self, run_at: datetime) -> Envelope:
        """The message a run sends to the task's session, from the task's creator."""
        local = run_at.astimezone(self.schedule.tz)
        header = (
            f"(Scheduled task {self.id}, {self.schedule.describe()}, set by "
            f"{self.creator.name or self.creator.id}; this is its run of "
            f"{local:%a %Y-%m-%d %H:%M %Z}. Do what it asks now; the person is not "
            "necessarily here to answer.)"
        )
        if self.quiet:
            header = f"{header}\n{QUIET_NOTE}"
        return Envelope(
            id=self.run_id(run_at),
            session=self.target.session,
            kind="scheduled",
            text=f"{header}\n{self.prompt}",
            sender=self.creator,
            platform=self.target.platform,
            chat_kind=self.target.chat_kind,
            reply_to=self.target.reply_to,
            run=self.config,
            quiet=self.quiet,
        )

    def summary(self) -> str:
        """One line for lists: `#7 every weekday… next Mon 09:00 WET: call Ann`."""
        upcoming = self.next_run_at
        tz = self.schedule.tz
        due = f"next {moment(upcoming.astimezone(tz))}" if upcoming else self.status
        kind = self.when if self.schedule.kind != "once" else "once"
        prompt = self.prompt if len(self.prompt) <= 80 else self.prompt[:79] + "…"
        quiet = ", quiet" if self.quiet else ""
        return f"#{self.id} ({kind}{quiet}, {due}): {prompt}"

    def confirmation(self, now: datetime) -> str:
        """What the person is told when the task is made: the zone and the next three runs,
        so a misunderstanding shows at once."""
        runs = self.schedule.next_runs(now, 3)
        shown = ", ".join(moment(run) for run in runs) or "none"
        kind = "runs once" if self.schedule.kind == "once" else f"runs {self.schedule.describe()}"
        cap = (
            f" It spends at most {self.tokens_per_day:,} tokens a day."
            if self.tokens_per_day
            else ""
        )
        return (
            f"Task {self.id} {kind}, in the time zone {self.schedule.zone}. "
            f"Next runs: {shown}.{cap} Prompt: {self.prompt}"
        )


def moment(when: datetime) -> str:
    """`Mon 2026-11-23 09:00 WET`, with the seconds when there are some (`in 90 seconds`)."""
    clock = "%H:%M:%S" if when.second else "%H:%M"
    return when.strftime(f"%a %Y-%m-%d {clock} %Z")
