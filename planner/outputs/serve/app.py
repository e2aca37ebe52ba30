"""``planner serve``'s web application: Starlette for the routes, uvicorn to listen (the only home of
both, installed with the ``serve`` extra).

Starlette and uvicorn are small, typed and maintained by the same people (Encode); Starlette's test
client drives the routes without a socket. The application serves exactly two files, the page and its
script (shipped in this package, read once), and a JSON API; no path of the request names a file, so
nothing outside them (the plan's folder included) can be read. Every other path is a 404.

Requests that change something (all POSTs) must be JSON (``application/json``): a page on another
site cannot send one to 127.0.0.1 without the browser asking first (CORS), which this server never
allows; and the ``Host`` header must name the address it listens on (no DNS rebinding).
"""

from __future__ import annotations

import socket
from importlib.resources import files
from typing import Optional

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from .live import Session

LOOPBACK = ("127.0.0.1", "localhost", "::1")
SECURITY_HEADERS = {
    # the page's own script only: no inline script, nothing from another origin
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; "
                               "frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


def _asset(name: str) -> bytes:
    return files(__package__).joinpath(name).read_bytes()


def create_app(session: Session, hosts=LOOPBACK) -> Starlette:
    """The application for one served plan; ``hosts``: the names the ``Host`` header may give."""
    page, script = _asset("page.html"), _asset("page.js")

    def _json(data: dict, status: int = 200) -> JSONResponse:
        return JSONResponse(data, status_code=status, headers=SECURITY_HEADERS)

    async def index(request: Request) -> Response:
        return Response(page, media_type="text/html; charset=utf-8", headers=SECURITY_HEADERS)

    async def page_js(request: Request) -> Response:
        return Response(script, media_type="text/javascript; charset=utf-8", headers=SECURITY_HEADERS)

    async def body(request: Request) -> Optional[dict]:
        if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
            return None
        try:
            data = await request.json()
        except ValueError:
            return None
        return data if isinstance(data, dict) and isinstance(data.get("edits", {}), dict) else None

    def refused() -> JSONResponse:
        return _json({"error": "send a JSON object: {\"scenario\": NAME or null, \"edits\": {INPUT: VALUE}}"}, 400)

    def plan(request: Request) -> JSONResponse:
        return _json(session.describe())

    def version(request: Request) -> JSONResponse:
        return _json({"version": session.refresh(), "error": session.error})

    def posted(method):
        async def endpoint(request: Request) -> JSONResponse:
            data = await body(request)
            if data is None:
                return refused()
            # the compute runs off the event loop (Starlette's thread pool); Session serialises the plan's use
            from starlette.concurrency import run_in_threadpool

            return _json(await run_in_threadpool(method, data))
        return endpoint

    routes = [
        Route("/", index),
        Route("/page.js", page_js),
        Route("/api/plan", plan),
        Route("/api/version", version),
        Route("/api/compute", posted(lambda d: session.compute(d.get("scenario"), d.get("edits") or {})),
              methods=["POST"]),
        Route("/api/charts", posted(lambda d: session.charts(d.get("edits") or {})), methods=["POST"]),
        Route("/api/simulate", posted(lambda d: session.simulate(d.get("scenario"), d.get("edits") or {})),
              methods=["POST"]),
        Route("/api/write", posted(lambda d: session.write(d.get("scenario"), d.get("edits") or {})),
              methods=["POST"]),
    ]
    return Starlette(routes=routes, middleware=[Middleware(TrustedHostMiddleware, allowed_hosts=list(hosts))])


def hosts_for(host: str) -> list[str]:
    """The names a request's ``Host`` may give: the loopback names, and the address listened on; on every
    address (``0.0.0.0``, ``::``), any name (the machine's names are not known here)."""
    if host in ("0.0.0.0", "::", ""):
        return ["*"]
    return list(LOOPBACK) if host in LOOPBACK else [*LOOPBACK, host]


def listen(host: str, port: int) -> socket.socket:
    """A listening socket on ``host``:``port`` (0: a free port)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # each answer at once: uvicorn writes a response's head and body apart, and with Nagle's algorithm the
    # body waits for the client's delayed acknowledgement of the head (40 ms a request, measured)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind((host, port))
    sock.listen(64)
    return sock


def serve(session: Session, host: str = "127.0.0.1", port: int = 8765, ready=None) -> None:
    """Listen until interrupted; ``ready(url)`` once listening."""
    import uvicorn

    sock = listen(host, port)
    config = uvicorn.Config(create_app(session, hosts_for(host)), log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    if ready is not None:
        ready(url_of(sock))
    server.run(sockets=[sock])


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"
