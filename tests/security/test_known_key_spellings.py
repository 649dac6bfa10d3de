"""Issue 28, red team rt3 M-A and M-B: the model API key agentkit holds must not reach an
error, stdout, stderr or the trace in any spelling a reader can turn back into the key.

Expected behaviour, written before the fix: agentkit knows the key's value, so every string it
prints or traces is searched for that value as such; as JSON/Python escapes (``\\u004b``,
``\\x4b``, any character of it); percent-encoded; with terminal escapes, controls or
zero-width characters between its characters; and encoded whole (base64 and base64url at any
byte offset in a longer stream, hex in either case). A hit is replaced by
``[REDACTED:api-key]``. Whether a leak happened is judged as the red team judged it: the key,
or any 10-character piece of it, in the text after each of the decodings a reader could apply
(raw, letters and digits only, JSON/percent/HTML unescaped, ANSI removed, base64 and hex runs
decoded).
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import html
import json
import os
import re
import string
import subprocess
import sys
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentkit._llm._messages import Message, ModelError, ModelRequest
from agentkit._llm._openai import OpenAIChatModel
from agentkit._llm._traced import TracedModel
from agentkit._trace import Trace
from agentkit.testing import FakeLLMServer
from agentkit.testing import Reply as FakeReply

KEY = "KLlEunNKq8e1sLmu4tOg"  # the red team's shape: 20 letters and digits


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    """The known keys are the process's: each test starts and ends with none."""
    try:
        from agentkit._trace import _withhold
    except ImportError:  # the code before the fix: nothing to reset
        yield
        return
    _withhold.forget_all()
    yield
    _withhold.forget_all()


_B64RUN = re.compile(r"[A-Za-z0-9+/=_\-\s]{12,}")
_HEXRUN = re.compile(r"(?:[0-9a-fA-F]{2}){8,}")
_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07]*\x07)")


def _readings(text: str) -> Iterator[str]:
    """What a reader can make of ``text`` (the red team's decodings, and the escapes)."""
    yield text
    yield re.sub(r"[^A-Za-z0-9]", "", text)
    unesc = re.sub(r"\\+u([0-9a-fA-F]{4})", lambda m: chr(int(m.group(1), 16)), text)
    for t in (unesc, urllib.parse.unquote(text), html.unescape(text)):
        yield t
        yield _ANSI.sub("", t)
        yield re.sub(r"[^A-Za-z0-9]", "", _ANSI.sub("", t))
    for m in _B64RUN.finditer(text):
        chunk = re.sub(r"\s", "", m.group(0)).replace("-", "+").replace("_", "/")
        for off in range(4):
            c = chunk[off:]
            c = c[: len(c) - len(c) % 4]
            with contextlib.suppress(binascii.Error, ValueError):
                yield base64.b64decode(c).decode("latin-1")
    for m in _HEXRUN.finditer(text):
        yield binascii.unhexlify(m.group(0)).decode("latin-1")


def leaks(key: str, text: str) -> bool:
    pieces = {key[i:i + 10] for i in range(len(key) - 9)}
    return any(p in t for t in _readings(text) for p in pieces)


# ---- the red team's four bodies (M-A), as the fake server sent them

def _bodies(k: str) -> dict[str, tuple[int, bytes]]:
    return {
        "400, first character JSON-escaped":
            (400, ('{"error":{"message":"bad key \\u00' + format(ord(k[0]), "02x") + k[1:]
                   + '"}}').encode()),
        "401, one character percent-encoded":
            (401, json.dumps({"error": {"message": "key " + urllib.parse.quote(k[:5]) + "%"
                                        + format(ord(k[5]), "02X") + k[6:]}}).encode()),
        "401, ANSI escape inside":
            (401, json.dumps({"error": {"message": f"key {k[:6]}\x1b[0m{k[6:]}"}}).encode()),
        "401, base64 of the key":
            (401, json.dumps({"error": {"message": "key " + base64.b64encode(
                k.encode()).decode()}}).encode()),
    }


def _model(status: int, body: bytes) -> OpenAIChatModel:
    def reply(request: httpx.Request) -> httpx.Response:
        return httpx.Response(status, content=body, headers={"content-type": "application/json"})

    client = httpx.AsyncClient(transport=httpx.MockTransport(reply))
    return OpenAIChatModel("http://127.0.0.1:9/v1", "m", api_key=KEY, client=client)


def _request() -> ModelRequest:
    return ModelRequest(messages=[Message(role="user", content="what GPUs?")], task="plan")


@pytest.mark.parametrize("case", list(_bodies(KEY)))
def test_an_echoed_key_in_any_spelling_is_not_in_the_error_nor_the_trace(
        case: str, tmp_path: object) -> None:
    status, body = _bodies(KEY)[case]
    assert leaks(KEY, body.decode()), "the oracle must see the key in the body it is sent"
    path = f"{tmp_path}/t.jsonl"
    trace = Trace(path)
    model = TracedModel(_model(status, body), trace)

    async def go() -> ModelError:
        try:
            await model.complete(_request())
        except ModelError as exc:
            return exc
        raise AssertionError("an error status must raise")

    exc = anyio.run(go)
    trace.close()
    assert not leaks(KEY, str(exc)), str(exc)
    assert f"HTTP {status}" in str(exc)
    written = Path(path).read_text(encoding="utf-8")
    assert "[REDACTED:api-key]" in written
    assert not leaks(KEY, written), written


def test_a_reply_quoting_the_key_is_not_traced_verbatim(tmp_path: object) -> None:
    """M-B: a 200 reply whose content holds the key (and a terminal escape)."""
    reply = {"id": "x", "object": "chat.completion", "created": 1, "model": "m",
             "choices": [{"index": 0, "finish_reason": "stop", "message": {
                 "role": "assistant",
                 "content": f"I cannot plan. Your key is {KEY}. \x1b]52;c;ZWNobw==\x07"}}],
             "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}
    path = f"{tmp_path}/t.jsonl"
    trace = Trace(path)
    model = TracedModel(_model(200, json.dumps(reply).encode()), trace)
    anyio.run(model.complete, _request())
    trace.close()
    written = Path(path).read_text(encoding="utf-8")
    assert "I cannot plan. Your key is [REDACTED:api-key]." in written
    assert not leaks(KEY, written)


# ---- the property: any spelling, anywhere in any text

_ALPHABET = string.ascii_letters + string.digits + "-_."
keys = st.text(_ALPHABET, min_size=16, max_size=64).filter(
    lambda k: len(set(k)) > 8)  # a key, not a run of one character
context = st.text(string.printable, max_size=40)


def _json_escape(k: str, which: list[bool]) -> str:
    return "".join(f"\\u{ord(c):04x}" if w else c for c, w in zip(k, which, strict=False))


def _percent(k: str, which: list[bool]) -> str:
    return "".join(f"%{ord(c):02X}" if w else c for c, w in zip(k, which, strict=False))


def _junk(k: str, which: list[bool]) -> str:
    bits = ["\x1b[0m", "\x1b[1;31m", "\u200b", "\r", "\\u001b[0m", "\x1b]8;;\x07"]
    return "".join(c + (bits[i % len(bits)] if w else "")
                   for i, (c, w) in enumerate(zip(k, which, strict=False)))


def _b64(k: str, which: list[bool]) -> str:
    lead = bytes(sum(which[:2]))  # 0..2 bytes before: the three alignments
    enc = base64.b64encode(lead + k.encode() + b"!").decode()
    return enc.replace("+", "-").replace("/", "_") if which[-1] else enc


def _hex(k: str, which: list[bool]) -> str:
    h = k.encode().hex()
    return h.upper() if which[0] else h


SPELLINGS = [_json_escape, _percent, _junk, _b64, _hex]


@settings(max_examples=80, deadline=None)
@given(key=keys, spell=st.sampled_from(SPELLINGS), before=context, after=context,
       which=st.lists(st.booleans(), min_size=64, max_size=64))
def test_a_known_key_is_withheld_in_every_spelling(key: str, spell: object, before: str,
                                                   after: str, which: list[bool]) -> None:
    from agentkit._trace import _withhold

    _withhold.remember(key)
    spelled = spell(key, which)  # type: ignore[operator]
    text = f"{before} {spelled} {after}"
    assert not leaks(key, _withhold.withhold(text)), (spelled, _withhold.withhold(text))


@settings(max_examples=40, deadline=None)
@given(key=keys, text=st.text(max_size=200))
def test_text_without_the_key_is_unchanged(key: str, text: str) -> None:
    from agentkit._trace import _withhold

    _withhold.remember(key)
    if not leaks(key, text):
        assert _withhold.withhold(text) == text


def test_nothing_is_withheld_before_a_key_is_known() -> None:
    from agentkit._trace import _withhold

    assert _withhold.withhold_data({"a": [KEY]}) == {"a": [KEY]}


# ---- the red team's own route: `agentkit ask` against a server that echoes the key

REPO = Path(__file__).resolve().parents[2]


def _reply_with_key(k: str) -> bytes:
    return json.dumps({"id": "x", "object": "chat.completion", "created": 1, "model": "m",
                       "choices": [{"index": 0, "finish_reason": "stop", "message": {
                           "role": "assistant", "content": f"I cannot plan. Your key is {k}."}}],
                       "usage": {"prompt_tokens": 1, "completion_tokens": 1,
                                 "total_tokens": 2}}).encode()


@pytest.mark.parametrize("case", [*_bodies(KEY), "200, the reply quotes the key"])
def test_ask_prints_and_traces_no_spelling_of_an_echoed_key(case: str, tmp_path: Path) -> None:
    status, body = _bodies(KEY).get(case) or (200, _reply_with_key(KEY))
    trace = tmp_path / "t.jsonl"
    with FakeLLMServer(lambda _body: FakeReply(status=status, raw=body)) as server:
        proc = subprocess.run(
            [sys.executable, "-m", "agentkit", "ask", "what GPUs?", "--root",
             str(REPO / "examples" / "blackwell-kimi"), "--base-url", server.base_url,
             "--model", "m", "--provider", "openai", "--api-key-env", "RTKEY",
             "--trace", str(trace), "-v"],
            capture_output=True, text=True, timeout=120, cwd=REPO,
            env={**os.environ, "RTKEY": KEY})
    for name, text in (("stdout", proc.stdout), ("stderr", proc.stderr),
                       ("trace", trace.read_text(encoding="utf-8"))):
        assert not leaks(KEY, text), (name, text[-2000:])
    assert "Traceback" not in proc.stderr


@settings(max_examples=60, deadline=None)
@given(key=keys, cut=st.integers(0, 64), before=context, between=context, after=context)
def test_a_key_split_in_pieces_is_withheld_piece_by_piece(key: str, cut: int, before: str,
                                                           between: str, after: str) -> None:
    """Red team 4 (content_split_halves): a reply quoting the key in two halves put both in
    the trace. Any run of 12 or more of the key's characters is the key's, not a word."""
    from agentkit._trace import _withhold

    _withhold.remember(key)
    at = max(12, min(len(key) - 12, cut))
    if len(key) < 24:
        at = len(key) // 2
    text = f"{before}{key[:at]}{between}{key[at:]}{after}"
    out = _withhold.withhold(text)
    for piece in (key[:at], key[at:]):
        if len(piece) >= 12:
            assert piece not in out, (piece, out)


def test_a_fragment_shorter_than_twelve_is_kept() -> None:
    from agentkit._trace import _withhold

    key = "sk-proj-Q7wErTy8UiOp9AsDfGh"
    _withhold.remember(key)
    text = "keys start with sk-proj- and the docs say so"
    assert _withhold.withhold(text) == text
