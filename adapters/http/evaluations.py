"""The lab for operators: `POST /api/evaluations` replays recorded runs with a candidate
configuration (`bot.lab`), `GET /api/evaluations[/{id}]` reports them, side by side, and
`DELETE /api/evaluations/{id}` cancels one (the replays not begun are skipped).

The body is strict: the runs by id (`runs`) or by the runs list's filters (`filter`, with a
`limit`), never both; the candidate `config` takes what an API run's config takes, and
`instructions` in place of the chats' own. The candidate is checked as an API run's config
is (the model served, the tools known), before anything is queued.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field, model_validator

from adapters.http.common import USER
from adapters.http.run_checks import config_problems
from adapters.http.run_query import OUTCOMES
from adapters.web.input import query_number, read_body, refusal
from adapters.web.services import Services
from bot.lab.evaluations import Candidate, Lab
from bot.store.evaluations import Evaluations
from bot.store.replays import ReplaySources
from bot.store.traces import Match
from bot.vocabulary.events import Trigger
from bot.vocabulary.ran_with import HASH_LENGTH
from bot.vocabulary.run_config import Mode, RunConfig

ID = re.compile(r"[0-9a-f]{32}")
MAX_RUNS = 500
MAX_INSTRUCTIONS = 2_000
HASH = rf"^[0-9a-f]{{{HASH_LENGTH}}}$"


class RunFilter(BaseModel):
    """The runs list's filters (`adapters.http.run_query`), and how many of its newest runs."""

    model_config = ConfigDict(extra="forbid", strict=True)

    start: datetime | None = Field(default=None, strict=False)
    end: datetime | None = Field(default=None, strict=False)
    outcome: str | None = Field(default=None, max_length=32)
    platform: str | None = Field(default=None, max_length=32)
    model: str | None = Field(default=None, min_length=1, max_length=200)
    trigger: Trigger | None = Field(default=None, strict=False)
    mode: Mode | None = None
    prompt: str | None = Field(default=None, pattern=HASH)
    tools: str | None = Field(default=None, pattern=HASH)
    q: str | None = Field(default=None, min_length=1, max_length=200)
    limit: int = Field(default=50, ge=1, le=MAX_RUNS)


class CandidateIn(RunConfig):
    instructions: str | None = Field(default=None, max_length=MAX_INSTRUCTIONS)


class EvaluationIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    runs: list[str] | None = Field(default=None, min_length=1, max_length=MAX_RUNS)
    filter: RunFilter | None = None
    config: CandidateIn = Field(default_factory=CandidateIn)
    label: str = Field(default="", max_length=200)
    budget: int | None = Field(default=None, ge=1)  # tokens all its replays may take

    @model_validator(mode="after")
    def _runs_or_filter(self) -> EvaluationIn:
        if (self.runs is None) == (self.filter is None):
            raise ValueError("give the runs to replay by id (runs) or by filter, one of them")
        if self.runs is not None and any(not ID.fullmatch(run) for run in self.runs):
            raise ValueError("a run id is 32 hexadecimal characters")
        return self


class EvaluationRoutes:
    def __init__(self, services: Services) -> None:
        self.services = services
        engine = services.traces.engine
        self.evaluations = Evaluations(engine)
        self.lab = Lab(
            self.evaluations, ReplaySources(engine), services.mailbox, services.settings.lab_lanes
        )

    async def start(self, request: web.Request) -> web.Response:
        """202 with the evaluation's id once its replays are queued."""
        body = await read_body(request, EvaluationIn)
        fields = body.config.model_dump(exclude={"instructions"}, exclude_unset=True)
        config, problems = await config_problems(self.services, RunConfig(**fields))
        if problems:
            raise refusal(web.HTTPUnprocessableEntity, "invalid request", problems=problems)
        runs = body.runs if body.runs is not None else await self._chosen(body.filter)
        if not runs:
            raise refusal(web.HTTPUnprocessableEntity, "no recorded run matches the filter")
        candidate = Candidate(config, body.config.instructions)
        evaluation = await self.lab.start(
            list(dict.fromkeys(runs)), candidate, label=body.label, budget=body.budget,
            by=request[USER],
        )  # fmt: skip
        return web.json_response({"id": evaluation.id, "status": "running"}, status=202)

    async def _chosen(self, chosen: RunFilter | None) -> list[str]:
        """The newest runs the filter matches, the lab's own replays never among them."""
        assert chosen is not None
        end = chosen.end or datetime.now(UTC)
        start = chosen.start or end - timedelta(days=1)
        if chosen.outcome is not None and chosen.outcome not in OUTCOMES:
            raise refusal(
                web.HTTPUnprocessableEntity, f"filter.outcome must be one of {', '.join(OUTCOMES)}"
            )
        match = Match(
            status=OUTCOMES.get(chosen.outcome or ""), platform=chosen.platform,
            model=chosen.model, trigger=chosen.trigger, text=chosen.q, mode=chosen.mode,
            prompt=chosen.prompt, tools=chosen.tools,
        )  # fmt: skip
        if match.trigger == Trigger.REPLAY:
            raise refusal(web.HTTPUnprocessableEntity, "a replay is not replayed again")
        window = await self.services.traces.window(start, end, 0, chosen.limit, match)
        return [str(run["id"]) for run in window.runs]

    async def report(self, request: web.Request) -> web.Response:
        evaluation = await self.evaluations.get(_id(request))
        if evaluation is None:
            raise refusal(web.HTTPNotFound, "unknown evaluation")
        return web.json_response(await self.lab.report(evaluation))

    async def page(self, request: web.Request) -> web.Response:
        offset = query_number(request, "offset", 0, 0, 10**9)
        limit = query_number(request, "limit", 20, 1, 100)
        total, found = await self.evaluations.page(offset, limit)
        # as its report says: running while a replay is neither recorded nor skipped
        waiting = await self.evaluations.unfinished([e.id for e in found if e.status == "running"])
        items: list[dict[str, Any]] = [
            {"id": e.id, "label": e.label,
             "status": "done" if e.status == "running" and e.id not in waiting else e.status,
             "config": e.config, "created_at": e.created_at.isoformat(),
             "created_by": e.created_by}
            for e in found
        ]  # fmt: skip
        return web.json_response({"total": total, "offset": offset, "items": items})

    async def cancel(self, request: web.Request) -> web.Response:
        evaluation_id = _id(request)
        if not await self.evaluations.cancel(evaluation_id):
            raise refusal(web.HTTPNotFound, "unknown evaluation")
        return web.json_response({"id": evaluation_id, "status": "cancelled"})


def _id(request: web.Request) -> str:
    evaluation_id = request.match_info["evaluation_id"]
    if not ID.fullmatch(evaluation_id):
        raise refusal(web.HTTPBadRequest, "an evaluation id is 32 hexadecimal characters")
    return evaluation_id


def mount(app: web.Application, services: Services) -> None:
    routes = EvaluationRoutes(services)
    app.router.add_post("/api/evaluations", routes.start)
    app.router.add_get("/api/evaluations", routes.page)
    app.router.add_get("/api/evaluations/{evaluation_id}", routes.report)
    app.router.add_delete("/api/evaluations/{evaluation_id}", routes.cancel)
