"""How the model backends send a request: one small interface, two implementations.

The default posts with aiohttp directly. Measured in benchmarks/ (docs/benchmarks.md):
httpcore's pool scans every connection on each request, so with hundreds of concurrent
subagents its CPU per call grows with the number of connections; and even over aiohttp's
pool, httpx's request and response models cost more per call than everything else agentkit
does. A caller who brings an ``httpx.AsyncClient`` still gets it used, through the same
interface.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import httpx

from .._backend import on_asyncio
from .._trace._withhold import withhold
from ._json import loads
from ._limiter import RequestLimiter
from ._messages import ModelError
from ._retry import error_for_status

MAX_CONNECTIONS = 4096


@dataclass
class Reply:
    status: int
    # case-insensitive (httpx.Headers, aiohttp's CIMultiDictProxy): used as they come, since
    # rebuilding one per response was a measurable share of the hot path
    headers: Mapping[str, str]
    body: bytes

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", errors="replace")


class Poster(Protocol):
    async def post(self, url: str, body: bytes, headers: dict[str, str]) -> Reply: ...

    async def aclose(self) -> None: ...


class AiohttpPoster:
    """POSTs over one aiohttp session, created lazily inside the running event loop."""

    def __init__(self, timeout_s: float, connect_s: float = 10.0) -> None:
        self.timeout_s = timeout_s
        self.connect_s = connect_s
        self._session: Any = None

    def _open(self) -> Any:
        import aiohttp

        connector = aiohttp.TCPConnector(limit=MAX_CONNECTIONS, limit_per_host=0)
        timeout = aiohttp.ClientTimeout(total=None, sock_connect=self.connect_s,
                                        sock_read=self.timeout_s)
        self._session = aiohttp.ClientSession(connector=connector, timeout=timeout,
                                              auto_decompress=True, cookie_jar=_NoCookies())
        return self._session

    async def post(self, url: str, body: bytes, headers: dict[str, str]) -> Reply:
        import aiohttp

        session = self._session or self._open()
        try:
            async with session.post(url, data=body, headers=headers) as resp:
                data = await resp.read()
                return Reply(resp.status, resp.headers, data)
        except (TimeoutError, aiohttp.ClientError, OSError) as exc:
            raise ModelError(f"cannot reach the model server at {url}: "
                             f"{type(exc).__name__}: {exc}", retryable=True) from None

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None


class HttpxPoster:
    """POSTs through a caller's ``httpx.AsyncClient`` (their transport, auth, proxies)."""

    def __init__(self, client: httpx.AsyncClient) -> None:
        self.client = client

    async def post(self, url: str, body: bytes, headers: dict[str, str]) -> Reply:
        try:
            resp = await self.client.post(url, content=body, headers=headers)
        except httpx.TransportError as exc:
            raise ModelError(f"cannot reach the model server at {url}: "
                             f"{type(exc).__name__}: {exc}", retryable=True) from None
        return Reply(resp.status_code, resp.headers, resp.content)

    async def aclose(self) -> None:  # the caller owns their client
        return None


class _NoCookies:
    """A cookie jar that keeps nothing: model APIs do not use cookies, and per-response
    cookie bookkeeping is pure overhead on the hot path."""

    def __new__(cls) -> Any:
        import aiohttp

        return aiohttp.DummyCookieJar()


_KEY_HEADERS = ("authorization", "x-api-key", "api-key")


def without_keys(text: str, headers: dict[str, str]) -> str:
    """An error body with the credentials this request sent taken out, in any spelling (a
    server that answers 401 by echoing the key, escaped, percent-encoded or in base64, would
    put it on stderr and into the trace; issue 28). A key a backend was made with is known
    to :mod:`.._trace._withhold` already; one a caller put in the headers is added here."""
    keys = [value.split(None, 1)[-1] if name.lower() == "authorization" else value
            for name, value in headers.items() if name.lower() in _KEY_HEADERS]
    return withhold(text, keys)


async def post_json(poster: Poster, limiter: RequestLimiter, url: str, body: bytes,
                    headers: dict[str, str]) -> Any:
    """One attempt: within the shared budget, POST, and return the decoded JSON body, or
    raise a :class:`ModelError` that says whether retrying could help."""
    async with limiter.slot():
        resp = await poster.post(url, body, headers)
    if resp.status >= 400:
        raise error_for_status(resp.status, resp.headers, without_keys(resp.text, headers))
    try:
        return loads(resp.body)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        from ._sse import is_stream, parse_stream

        if is_stream(resp.body):  # streamed although not asked to: read it as it came
            return parse_stream(resp.body)
        raise ModelError(f"model server sent a body that is not JSON: {exc}",
                         retryable=True) from None



class AnyLoopPoster:
    """The default: aiohttp on asyncio (the fast path), and an httpx client of its own on any
    other anyio backend (trio), where aiohttp cannot run. Chosen at the first request, in the
    loop that makes it."""

    def __init__(self, timeout_s: float) -> None:
        self.timeout_s = timeout_s
        self._inner: Poster | None = None
        self._owned: httpx.AsyncClient | None = None

    def _pick(self) -> Poster:
        if on_asyncio():
            return AiohttpPoster(self.timeout_s)
        self._owned = httpx.AsyncClient(timeout=httpx.Timeout(self.timeout_s, connect=10.0),
                                        limits=httpx.Limits(max_connections=MAX_CONNECTIONS))
        return HttpxPoster(self._owned)

    async def post(self, url: str, body: bytes, headers: dict[str, str]) -> Reply:
        if self._inner is None:
            self._inner = self._pick()
        return await self._inner.post(url, body, headers)

    async def aclose(self) -> None:
        if self._inner is not None:
            await self._inner.aclose()
        if self._owned is not None:
            await self._owned.aclose()
            self._owned = None


def make_poster(client: httpx.AsyncClient | None, timeout_s: float) -> Poster:
    return HttpxPoster(client) if client is not None else AnyLoopPoster(timeout_s)
