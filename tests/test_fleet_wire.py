"""The worker's wire format (``_fleet/_wire.py``) called directly: a batch as one JSON document
on the worker's stdin, the results as one JSON line on its stdout (docs/fleet.md, "The remote
side"), and remote output believed only once it is size-capped (64 MiB), parsed and validated
against ``TaskResult``; anything else is the host's failed outcome with the reason (the
worker's own error, a bad exit with the tail of its stderr, a reply that does not parse).
Expected values come from those promises and from RFC 8259 / JSON lines framing."""

from __future__ import annotations

from decimal import Decimal

import orjson
import pytest

from agentkit._fleet import _wire
from agentkit._fleet._outcome import Batch
from agentkit._fleet._wire import MAX_REPLY, MAX_REQUEST, outcome, parse_request, reply, request
from agentkit._types import Fact, TaskResult, TaskSpec
from agentkit._version import __version__

SPEC = TaskSpec(id="gpu", title="GPUs", objective="", template="gpu-inventory")
RESULT = TaskResult(task_id="gpu", status="ok", summary="8 GPUs",
                    facts={"count": Fact(value=8)}, errors=["a note"])


def _reply(**body: object) -> bytes:
    return orjson.dumps({"protocol": 1, "agentkit": "x", "error": "", "results": [], **body})


# ---------------------------------------------------------------- the request


def test_a_request_is_the_protocol_and_the_batch_with_the_hosts_own_root() -> None:
    batch = Batch(question="Is NCCL tuned?", tasks=[SPEC], root="/srv/{host}/snap",
                  deadline_s=42.5)
    body = orjson.loads(request(batch, "gpu07"))
    # protocol 1 is the worker's documented number (worker.py: "... of protocol 1")
    assert set(body) == {"protocol", "batch"} and body["protocol"] == 1
    assert body["batch"]["root"] == "/srv/gpu07/snap"
    assert body["batch"]["question"] == "Is NCCL tuned?" and body["batch"]["deadline_s"] == 42.5
    assert [t["id"] for t in body["batch"]["tasks"]] == ["gpu"]
    # and the worker reads back exactly the batch meant for that host
    assert parse_request(request(batch, "gpu07")) == batch.model_copy(
        update={"root": "/srv/gpu07/snap"})


def test_a_request_leaves_the_callers_batch_as_it_was() -> None:
    batch = Batch(question="q", tasks=[], root="/f/{host}")
    request(batch, "n1")
    assert batch.root == "/f/{host}"  # the same batch goes to every host


# ---------------------------------------------------------------- the reply


def test_a_reply_is_one_json_line_with_the_protocol_version_error_and_results() -> None:
    data = reply([RESULT])
    # JSON lines: one document, one trailing newline, no newline inside
    assert data.endswith(b"\n") and data.count(b"\n") == 1
    body = orjson.loads(data)
    assert body == {"protocol": 1, "agentkit": __version__, "error": "",
                    "results": [RESULT.model_dump(mode="json")]}


def test_a_value_outside_jsons_types_travels_in_its_json_form() -> None:
    # a fact the worker computed as a Decimal is still written (and compared as "1.5")
    odd = TaskResult(task_id="t", status="ok", summary="", facts={"k": Fact(value=Decimal("1.5"))})
    assert orjson.loads(reply([odd]))["results"][0]["facts"]["k"]["value"] == "1.5"
    spec = SPEC.model_copy(update={"inputs": {"since": Decimal("2.5")}})
    body = orjson.loads(request(Batch(question="q", tasks=[spec]), "h"))
    assert body["batch"]["tasks"][0]["inputs"] == {"since": "2.5"}


def test_a_reply_without_results_says_why() -> None:
    body = orjson.loads(reply(error="ValueError: bad batch"))
    assert body["error"] == "ValueError: bad batch" and body["results"] == []
    assert orjson.loads(reply())["results"] == [] and orjson.loads(reply())["error"] == ""


def test_a_reply_reads_back_as_the_same_results() -> None:
    got = outcome("gpu07", reply([RESULT, RESULT.model_copy(update={"task_id": "b"})]), b"",
                  0, 1.5)
    assert got.host == "gpu07" and got.status == "ok" and got.error == ""
    assert got.results == [RESULT, RESULT.model_copy(update={"task_id": "b"})]
    assert got.wall_s == 1.5


# ---------------------------------------------------------------- the outcome


def test_the_workers_own_error_fails_the_host_with_that_error() -> None:
    got = outcome("h", _reply(error="FileNotFoundError: /srv/h", results=[
        RESULT.model_dump(mode="json")]), b"", 0, 2.0)
    assert got.status == "failed" and got.error == "FileNotFoundError: /srv/h"
    assert got.results == [] and got.wall_s == 2.0 and got.host == "h"


def test_a_workers_error_is_cut_at_2000_characters() -> None:
    # remote output is untrusted: a megabyte "error" does not become a megabyte answer line
    got = outcome("h", _reply(error="é" * 1999 + "XY" + "E" * 1_000_000), b"", 0, 0)
    assert got.status == "failed" and got.error == "é" * 1999 + "X"  # characters, not bytes
    assert outcome("h", _reply(error="E" * 2000), b"", 0, 0).error == "E" * 2000


def test_an_empty_error_is_no_error_and_null_results_are_none() -> None:
    got = outcome("h", _reply(error="", results=None), b"", 0, 0)
    assert got.status == "ok" and got.results == []


@pytest.mark.parametrize("stdout", [
    b"", b"  \n", b"not json", b"\xff\xfe", b"[1, 2]", b'"protocol"', b"1",
    b'{"results": []}', b'{"protocol": 2, "error": "", "results": []}',
    b'{"protocol": "1", "error": "", "results": []}', b'{"protocol": 1.5}',
])
def test_output_that_is_not_a_protocol_1_reply_fails_the_host(stdout: bytes) -> None:
    got = outcome("h", stdout, b"", 127, 3.0)
    assert got.status == "failed" and got.results == [] and got.wall_s == 3.0
    # what failed (no reply, the exit status) and what to check (the worker's command)
    assert got.error == ("no worker reply (exit 127); is agentkit installed on the host? "
                         "(python3 -m agentkit._fleet.worker)")


def test_a_bad_exit_is_said_with_the_tail_of_stderr() -> None:
    stderr = b"line one\nline two\nTraceback (most recent call last):\nImportError: no orjson\n"
    got = outcome("h", b"", stderr, 1, 0)
    # the last three lines, on one line of the answer
    assert got.error.startswith("no worker reply (exit 1: line two Traceback (most recent call "
                                "last): ImportError: no orjson); ")
    assert "line one" not in got.error


def _tail(stderr: bytes, exit_code: int | None = 1) -> str:
    error = outcome("h", b"", stderr, exit_code, 0).error
    assert error.endswith("); is agentkit installed on the host? (python3 -m "
                          "agentkit._fleet.worker)")
    seen = error.removeprefix("no worker reply (").rpartition("); is agentkit")[0]
    return seen.removeprefix(f"exit {exit_code}").removeprefix(": ")


def test_the_tail_of_a_long_stderr_is_its_last_500_characters() -> None:
    # docs/fleet.md: the last three lines of stderr's last 2,000 bytes, at most 500 characters
    assert _tail(b"x" * 100_000 + b"\nthe last words\n", None) == "x" * 485 + " the last words"
    assert _tail(b"y" * 100 + b"z" * 500) == "z" * 500
    assert _tail(b"z" * 500) == "z" * 500


def test_the_tail_is_read_from_the_last_2000_bytes_of_stderr() -> None:
    # a long run of blank lines after the last words: only 2,000 bytes are looked at
    assert _tail(b"early" + b"Z" + b"\n" * 1999) == "Z"
    assert _tail(b"Z" + b"\n" * 2000) == ""  # nothing but blank lines in the window


def test_an_empty_or_blank_stderr_is_just_the_exit_status() -> None:
    for stderr in (b"", b"  \n\n \t\n"):
        assert outcome("h", b"", stderr, 3, 0).error.startswith("no worker reply (exit 3); ")


def test_a_stderr_that_is_not_utf8_is_read_with_replacements() -> None:
    got = outcome("h", b"", b"caf\xe9 \xff", 2, 0)
    assert "(exit 2: caf\ufffd \ufffd)" in got.error


def test_results_that_do_not_validate_fail_the_host_saying_so() -> None:
    bad = RESULT.model_dump(mode="json") | {"status": "splendid"}
    got = outcome("h", _reply(results=[RESULT.model_dump(mode="json"), bad]), b"", 0, 0)
    assert got.status == "failed" and got.results == []
    assert got.error.startswith("the worker's results do not validate: ")
    assert "ok" in got.error.removeprefix("the worker's results do not validate: ")


@pytest.mark.parametrize("results", [5, True, "ab", {"task_id": "gpu"}])
def test_results_that_are_not_a_list_fail_the_host_saying_so(results: object) -> None:
    # never an exception out of the parser: on Ray, whose transport calls it in its own
    # loop, one host's malformed reply would fail every host not yet heard from
    got = outcome("h", _reply(results=results), b"", 0, 0)
    assert got.status == "failed" and got.results == []
    assert got.error == "the worker's results do not validate: Input should be a valid list"


def test_the_reply_cap_is_64_mib_and_a_reply_of_exactly_that_size_is_read() -> None:
    assert MAX_REPLY == 64 * 1024 * 1024  # docs/fleet.md: "size-capped (64 MiB)"
    good = reply([RESULT])
    exact = good + b" " * (MAX_REPLY - len(good))  # JSON allows trailing whitespace
    assert len(exact) == MAX_REPLY
    assert outcome("h", exact, b"", 0, 0).status == "ok"
    over = outcome("h", exact + b" ", b"", 0, 0.5)
    assert over.status == "failed" and over.wall_s == 0.5
    assert over.error == f"the worker's reply is over {MAX_REPLY} bytes; not read"


# ---------------------------------------------------------------- the worker's side


@pytest.mark.parametrize("data, why", [
    (b"[]", "not an agentkit fleet request of protocol 1"),
    (b'"x"', "not an agentkit fleet request of protocol 1"),
    (b"{}", "not an agentkit fleet request of protocol 1"),
    (b'{"protocol": 2, "batch": {"question": "q", "tasks": []}}',
     "not an agentkit fleet request of protocol 1"),
    (b'{"protocol": 1}', "bad batch: "),
    (b'{"protocol": 1, "batch": {"question": "q"}}', "bad batch: Field required"),
    (b'{"protocol": 1, "batch": {"question": "q", "tasks": [], "deadline_s": 0}}',
     "bad batch: Input should be greater than 0"),
    (b'{"protocol": 1, "batch": {"question": "q", "tasks": [], "shell": "sh"}}',
     "bad batch: Extra inputs are not permitted"),
])
def test_a_request_that_is_not_a_batch_is_refused_saying_why(data: bytes, why: str) -> None:
    with pytest.raises(ValueError) as err:
        parse_request(data)
    assert str(err.value).startswith(why) and "\n" not in str(err.value)


def test_a_request_that_does_not_parse_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        parse_request(b"{not json")


def test_the_request_cap_is_4_mib_and_a_request_of_exactly_that_size_is_read() -> None:
    assert MAX_REQUEST == 4 * 1024 * 1024  # the worker reads MAX_REQUEST + 1 bytes
    good = request(Batch(question="q", tasks=[SPEC]), "h")
    exact = good + b" " * (MAX_REQUEST - len(good))
    assert parse_request(exact).tasks == [SPEC]
    with pytest.raises(ValueError, match=f"^the request is over {MAX_REQUEST} bytes$"):
        parse_request(exact + b" ")


def test_the_wire_protocol_number_is_1() -> None:
    assert _wire.PROTOCOL == 1
