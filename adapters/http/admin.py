"""The operators' dashboard at `/admin`: runs with filters, each run's trace as a graph and a
timeline, and charts of the runs over time (`static/admin.*`).

The page holds no data, so it is public like the chat page and the static files; everything it
shows comes from `/api/traces` and `/api/metrics/*`, which need the API token it asks for
(kept in the browser under the same key as the chat page's, so one token serves both). It
is sent with a Content-Security-Policy that lets it load and call only this server: no
inline script, no other origin, no framing.
"""

from __future__ import annotations

from pathlib import Path

from aiohttp import web

PAGE = Path(__file__).with_name("static") / "admin.html"
PATH = "/admin"
POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'"
)
HEADERS = {
    "Content-Security-Policy": POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}


async def page(request: web.Request) -> web.FileResponse:
    return web.FileResponse(PAGE, headers=HEADERS)


def mount(app: web.Application, public: set[str]) -> None:
    """Serve the dashboard at `/admin`, which `public` (the app's paths served without the
    token) then includes."""
    app.router.add_get(PATH, page)
    public.add(PATH)
