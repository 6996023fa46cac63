"""Scheduled tasks for operators: list, read, create and cancel them over the API.

An operator's task is made in the name of the API's identity (`http:token`, or `http:local`
without a token), which counts as one person: PARLEY_TASKS_PER_PERSON limits its active tasks
as it limits anyone's, and PARLEY_TASK_MIN_INTERVAL its schedules. Its runs are answered in
the session it names (`tg:…`, `slack:…` on a configured platform, or an HTTP session this API
made), with the `reply_to` that platform's ingress would have built. Its zone is `timezone`,
or PARLEY_TIMEZONE. The identity is an admin, so it may
cancel any task but the configuration's (PARLEY_TASKS), which end when taken out of there.
Each task shows the tokens its runs spent today (UTC) and the daily cap that holds it
(`bot.tasks.spend`): its own `tokens_per_day`, within PARLEY_TASK_TOKENS_PER_DAY.
"""

from __future__ import annotations

import re
import zoneinfo
from datetime import UTC, datetime
from typing import Any

from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field, field_validator

from adapters.http import place, sessions
from adapters.http.common import api_sender
from adapters.http.run_checks import config_problems
from adapters.web.input import error, query_number, read_body, refusal
from adapters.web.services import Services
from bot.config.zones import known_zone
from bot.tasks.book import NewTask, TaskRefused
from bot.tasks.model import MAX_PROMPT, IfMissed, Target, Task
from bot.tasks.spend import TaskSpend, cap_of
from bot.vocabulary.run_config import RunConfig
from bot.vocabulary.schedule import MAX_WHEN, Schedule, WhenError, check_frequency, parse_when

MAX_LIMIT = 100
MAX_SESSION = 300
NEXT_RUNS = 3
TASK_ID = re.compile(r"[1-9][0-9]{0,17}")  # fits a 64-bit row id
STATUSES = ("active", "all")


class TaskIn(BaseModel):
    """A task an operator makes; unknown fields are refused, so a typo is not ignored."""

    model_config = ConfigDict(extra="forbid", strict=True)

    session: str = Field(min_length=1, max_length=MAX_SESSION)
    prompt: str = Field(min_length=1, max_length=MAX_PROMPT)
    when: str = Field(min_length=1, max_length=MAX_WHEN)
    timezone: str | None = Field(default=None, min_length=1, max_length=64)
    if_missed: IfMissed = "skip"
    config: RunConfig | None = None  # how its runs are made: an output schema, a mode…
    tokens_per_day: int | None = Field(default=None, ge=1)  # within the deployment's cap

    @field_validator("prompt")
    @classmethod
    def _not_blank(cls, prompt: str) -> str:
        if not prompt.strip():
            raise ValueError("the prompt is only whitespace")
        return prompt


def given_session(given: str) -> str:
    """A session key as given, or `http:ID` for the bare id POST /api/sessions returned."""
    return place.session_key(given) if place.SESSION_ID.fullmatch(given) else given


def _stamp(moment: datetime | None) -> str | None:
    return moment.astimezone(UTC).isoformat() if moment is not None else None


def task_json(task: Task, now: datetime, spent: int = 0, deployment: int = 0) -> dict[str, Any]:
    """A task as the API shows it; an active one with its next runs in its own zone, and
    the tokens it `spent` today against its cap (the lower of `deployment` and its own)."""
    runs = task.schedule.next_runs(now, NEXT_RUNS) if task.active else []
    return {
        "id": task.id,
        "name": task.name,
        "session": task.target.session,
        "platform": task.target.platform,
        "chat_kind": task.target.chat_kind,
        "reply_to": task.target.reply_to,
        "creator": task.creator.id,
        "creator_name": task.creator.name,
        "prompt": task.prompt,
        "when": task.when,
        "kind": task.schedule.kind,
        "spec": task.schedule.spec,
        "timezone": task.schedule.zone,
        "if_missed": task.if_missed,
        "status": task.status,
        "next_run_at": _stamp(task.next_run_at),
        "last_run_at": _stamp(task.last_run_at),
        "runs": task.runs,
        "missed": task.missed,
        "created_at": _stamp(task.created_at),
        "ended_by": task.ended_by,
        "from_config": task.from_config,
        "config": task.config.model_dump(mode="json", exclude_none=True) if task.config else None,
        "next_runs": [run.isoformat() for run in runs],
        "quiet": task.quiet,
        "tokens_today": spent,
        "tokens_per_day": cap_of(task, deployment),
    }


def _invalid(problems: list[str]) -> web.HTTPException:
    """The same 422 a body of the wrong shape gets: each problem names its field."""
    return refusal(web.HTTPUnprocessableEntity, "invalid request", problems=problems)


class TaskRoutes:
    def __init__(self, services: Services) -> None:
        self.services = services

    async def page(self, request: web.Request) -> web.Response:
        """`?session=` (a session, or a chat with its topics and threads), `?status=active|all`
        (active unless asked), `?offset=&limit=`: in the order they were made, with the total."""
        status = request.query.get("status", "active")
        if status not in STATUSES:
            raise refusal(web.HTTPBadRequest, "status must be active or all")
        offset = query_number(request, "offset", 0, 0, 10**9)
        limit = query_number(request, "limit", 20, 1, MAX_LIMIT)
        book, active = self.services.tasks, status == "active"
        if "session" in request.query:
            chat = request.query["session"]
            if not 1 <= len(chat) <= MAX_SESSION:
                raise refusal(web.HTTPBadRequest, f"session must be 1 to {MAX_SESSION} characters")
            found = await book.in_chat(given_session(chat), active=active)
        else:
            found = await book.every(active=active)
        now = datetime.now(UTC)
        return web.json_response(
            {
                "total": len(found),
                "offset": offset,
                "limit": limit,
                "items": await self._shown(found[offset : offset + limit], now),
            }
        )

    async def detail(self, request: web.Request) -> web.Response:
        task_id = _task_id(request)
        task = await self.services.tasks.get(task_id) if task_id is not None else None
        if task is None:
            return _unknown(request)
        (shown,) = await self._shown([task], datetime.now(UTC))
        return web.json_response(shown)

    async def _shown(self, tasks: list[Task], now: datetime) -> list[dict[str, Any]]:
        """`tasks` as the API shows them, with what each spent today, read in one go."""
        spent = await TaskSpend(self.services.tasks.redis).today(task.id for task in tasks)
        cap = self.services.settings.task_tokens_per_day
        return [task_json(task, now, spent.get(task.id, 0), cap) for task in tasks]

    async def create(self, request: web.Request) -> web.Response:
        """201 with the task, its next runs and the confirmation a person would be given."""
        body = await read_body(request, TaskIn)
        now = datetime.now(UTC)
        target, schedule = await self._checked(request, body, now)
        config = None
        if body.config is not None:
            config, problems = await config_problems(self.services, body.config)
            if problems:
                raise _invalid(problems)
        operator = api_sender(request)
        cap = self.services.settings.task_tokens_per_day
        if body.tokens_per_day is not None and cap and body.tokens_per_day > cap:
            raise _invalid([f"tokens_per_day: at most {cap} (PARLEY_TASK_TOKENS_PER_DAY)"])
        new = NewTask(
            target, operator, body.prompt, body.when, schedule, body.if_missed, config=config,
            tokens_per_day=body.tokens_per_day,
        )  # fmt: skip
        limit = self.services.settings.tasks_per_person
        try:
            task = await self.services.tasks.add(new, max_active=limit, now=now)
        except TaskRefused:
            return error(
                409,
                f"{operator.id} already has {limit} active tasks, the most "
                "PARLEY_TASKS_PER_PERSON allows (the API counts as one person); cancel one "
                "with DELETE /api/tasks/ID first",
                limit=limit,
            )
        answer = {**task_json(task, now, 0, cap), "confirmation": task.confirmation(now)}
        return web.json_response(answer, status=201, headers={"Location": f"/api/tasks/{task.id}"})

    async def _checked(
        self, request: web.Request, body: TaskIn, now: datetime
    ) -> tuple[Target, Schedule]:
        """Where the task answers and when it runs, or a 422 naming every field that is wrong."""
        problems: list[str] = []
        target = await self._target(request, given_session(body.session), problems)
        schedule = None
        try:
            zone = known_zone(body.timezone) if body.timezone else self._default_zone()
        except ValueError as exc:
            problems.append(f"timezone: {exc}")
        else:
            schedule = self._schedule(body.when, zone, now, problems)
        if problems or target is None or schedule is None:
            raise _invalid(problems)
        return target, schedule

    def _default_zone(self) -> zoneinfo.ZoneInfo:
        """PARLEY_TIMEZONE, which the configuration has checked."""
        return zoneinfo.ZoneInfo(self.services.settings.timezone)

    def _schedule(
        self, when: str, zone: zoneinfo.ZoneInfo, now: datetime, problems: list[str]
    ) -> Schedule | None:
        try:
            schedule = parse_when(when, zone, now)
        except WhenError as exc:
            problems.append(f"when: {exc}")
            return None
        try:
            check_frequency(schedule, now, self.services.settings.task_min_interval)
        except WhenError as exc:
            problems.append(f"when: {exc} (PARLEY_TASK_MIN_INTERVAL)")
            return None
        return schedule

    async def _target(
        self, request: web.Request, session: str, problems: list[str]
    ) -> Target | None:
        try:
            target = self.services.target_of(session)
        except ValueError as exc:
            problems.append(f"session: {exc}")
            return None
        if target.platform == place.PLATFORM:
            session_id = place.session_id(session)
            if not await sessions.known(self.services, session_id, api_sender(request).id):
                problems.append(
                    f"session: unknown HTTP session {session!r}; make one with POST /api/sessions"
                )
                return None
        return target

    async def cancel(self, request: web.Request) -> web.Response:
        """200 with the cancelled task; 409 once it had ended, 403 for the configuration's."""
        task_id = _task_id(request)
        if task_id is None:
            return _unknown(request)
        outcome, task = await self.services.tasks.end(task_id, api_sender(request))
        now = datetime.now(UTC)
        if outcome == "not_found" or task is None:
            return _unknown(request)
        if outcome == "forbidden":
            return error(
                403,
                f"task {task_id} ({task.name}) comes from the configuration: remove it from "
                "PARLEY_TASKS to end it",
                task=task_json(task, now),
            )
        if outcome == "ended":
            return error(
                409, f"task {task_id} had already ended ({task.status})", task=task_json(task, now)
            )
        (shown,) = await self._shown([task], now)
        return web.json_response(shown)


def _task_id(request: web.Request) -> int | None:
    """The task id of the path: ASCII digits only, small enough for the database."""
    raw = request.match_info["task_id"]
    return int(raw) if TASK_ID.fullmatch(raw) else None


def _unknown(request: web.Request) -> web.Response:
    return error(404, "unknown task", id=request.match_info["task_id"][:40])


def mount(app: web.Application, services: Services) -> None:
    routes = TaskRoutes(services)
    app.router.add_get("/api/tasks", routes.page)
    app.router.add_post("/api/tasks", routes.create)
    app.router.add_get("/api/tasks/{task_id}", routes.detail)
    app.router.add_delete("/api/tasks/{task_id}", routes.cancel)
