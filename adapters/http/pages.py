"""The pages, the web chat at `/` and the operators' dashboard at `/admin` (`static/admin.*`:
runs with filters, each run's trace and what it ran with, charts of the runs over time, the
runs grouped by model, mode, prompt or tool set, and a form that starts an evaluation of the
runs shown) with its lab at `/admin/lab` (`static/lab.html`, `static/admin-lab.js`: the
evaluations, each one's recorded runs beside their replays, two traces side by side) and its
people page at `/admin/people` (`static/people.html`, `static/admin-people.js`: whose
memories are kept, each one's memories and digests, forgetting them) and its tasks page at
`/admin/tasks` (`static/tasks.html`, `static/admin-tasks.js`: the scheduled tasks and
check-ins, what each spent today against its cap, cancelling one), and their files at
`/static/`.

The pages hold no data, so they are public like their files; everything they show comes from
the API, which needs the token they ask for (kept in the browser under one key, so one token
serves them all). All are sent with the same Content-Security-Policy, which lets them load and
call only this server: no inline script, no other origin, no framing (images also from
`blob:`, the web chat's thumbnails of the files a person sends, made in the page, and sound
from `blob:` alone, a voice reply's bytes fetched with the token).

Their browser libraries (marked, DOMPurify, highlight.js, Chart.js) are not kept in git:
`web/vendor.sh` copies the files `vendor.txt` lists out of npm's packages, at the versions
web/package-lock.json pins, into `static/vendor/`. `make assets` and the Docker image's build
run it, and a wheel is not built without them (`hatch_build.py`). A process that still lacks
them would serve pages that break in the browser with nothing in its own log, so the web
process logs one error at start naming what is missing, and a page that needs a missing file
says so in its own text.
"""

from __future__ import annotations

import html
import logging
import re
from pathlib import Path, PurePosixPath

from aiohttp import web

log = logging.getLogger(__name__)
HERE = Path(__file__).parent
STATIC = HERE / "static"
VENDOR = STATIC / "vendor"
VENDOR_LIST = HERE / "vendor.txt"
CHAT, ADMIN, PEOPLE = HERE / "chat.html", STATIC / "admin.html", STATIC / "people.html"
LAB, TASKS = STATIC / "lab.html", STATIC / "tasks.html"
POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; "
    "media-src blob:; connect-src 'self'; form-action 'none'; base-uri 'none'; "
    "frame-ancestors 'none'"
)
HEADERS = {
    "Content-Security-Policy": POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}
USES = re.compile(r"""["']/static/vendor/([^"'?#]+)""")  # a library a page loads
BODY = re.compile(r"<body[^>]*>")
NOTICE = (
    '<link rel="stylesheet" href="/static/notice.css">'
    '<p id="missing-assets" role="alert">This page cannot work: this server lacks the '
    "browser libraries it loads ({files}). Whoever runs Parley installs them with "
    "<code>make assets</code>; the Docker image and a built wheel include them.</p>"
)


def vendor_files(listing: Path = VENDOR_LIST) -> list[str]:
    """The names `static/vendor/` serves, one for each path `vendor.txt` lists."""
    lines = (line.strip() for line in listing.read_text(encoding="utf-8").splitlines())
    return [PurePosixPath(line).name for line in lines if line and not line.startswith("#")]


def missing(vendor: Path = VENDOR) -> list[str]:
    """The listed libraries absent from `vendor`."""
    return [name for name in vendor_files() if not (vendor / name).is_file()]


class Page:
    """One page, sent with `HEADERS`; while a library it loads is absent, with a notice
    naming it at the top of its body (checked on every request: a few `stat` calls)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.uses = USES.findall(path.read_text(encoding="utf-8"))

    def absent(self) -> list[str]:
        return [name for name in self.uses if not (VENDOR / name).is_file()]

    async def serve(self, request: web.Request) -> web.StreamResponse:
        absent = self.absent()
        if not absent:
            return web.FileResponse(self.path, headers=HEADERS)
        notice = NOTICE.format(files=html.escape(", ".join(absent)))
        text = BODY.sub(lambda body: body[0] + notice, self.path.read_text("utf-8"), count=1)
        return web.Response(text=text, content_type="text/html", headers=HEADERS)


def mount(app: web.Application, public: set[str]) -> None:
    """Serve the pages and `/static/`; `public` (the app's paths served without the token)
    then includes the pages. Logs one error now if libraries are missing."""
    if absent := missing():
        log.error(
            "the pages' browser libraries are missing from %s: %s; / and /admin cannot work "
            "without them (make assets installs them)",
            VENDOR,
            ", ".join(absent),
        )
    app.router.add_get("/", Page(CHAT).serve)
    app.router.add_get("/admin", Page(ADMIN).serve)
    app.router.add_get("/admin/people", Page(PEOPLE).serve)
    app.router.add_get("/admin/lab", Page(LAB).serve)
    app.router.add_get("/admin/tasks", Page(TASKS).serve)
    app.router.add_static("/static/", STATIC)
    public.update({"/", "/admin", "/admin/people", "/admin/lab", "/admin/tasks"})
