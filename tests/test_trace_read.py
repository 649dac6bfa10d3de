"""The trace reader on small traces written by the test: every rule of docs/trace-format.md
that reading enforces, each with the line it names."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentkit._trace import TRACE_FORMAT, TRACE_VERSION
from agentkit._trace._read import TraceError, read_trace, text_line


def event(kind: str, phase: str = "event", seq: int = 0, **data: Any) -> dict[str, Any]:
    return {"v": TRACE_VERSION, "seq": seq, "ts": 1.0 + seq, "kind": kind, "phase": phase,
            "span": None, "parent": None, "task": None, "step": None, "data": data}


HEADER = event("trace", format=TRACE_FORMAT, agentkit="0")
RUN_START = event("run", "start", 1, question="q", root="/")
TOOL_START = event("tool", "start", 2, tool="glob", args={"pattern": "/x"}, index=1)
TOOL_END = event("tool", "end", 3, tool="glob", index=1, ok=True, data={}, evidence=[])
RUN_END = event("run", "end", 4, status="ok")


def write(tmp: Path, *events: dict[str, Any] | str, newline: bool = True) -> Path:
    lines = [e if isinstance(e, str) else json.dumps(e) for e in events]
    path = tmp / "t.jsonl"
    path.write_text("\n".join(lines) + ("\n" if newline else ""))
    return path


def error(path: Path) -> TraceError:
    with pytest.raises(TraceError) as exc:
        read_trace(path)
    return exc.value


def test_a_complete_trace_reads_whole(tmp_path: Path) -> None:
    t = read_trace(write(tmp_path, HEADER, RUN_START, TOOL_START, TOOL_END, RUN_END))
    assert len(t.events) == 5 and t.complete and not t.truncated and t.notes == []
    start = t.first("run", "start")
    assert start is not None and start.seq == 1
    assert t.first("llm", "end") is None and t.first("trace") is not None


def test_no_end_of_run_means_interrupted(tmp_path: Path) -> None:
    t = read_trace(write(tmp_path, HEADER, RUN_START, TOOL_START))
    assert t.truncated and not t.complete
    assert t.notes == ["the trace has no end-of-run event: the run was interrupted"]


def test_only_the_last_line_may_be_cut_off(tmp_path: Path) -> None:
    cut = json.dumps(TOOL_END)[:30]
    t = read_trace(write(tmp_path, HEADER, RUN_START, TOOL_START, cut, newline=False))
    assert t.truncated and [e.seq for e in t.events] == [0, 1, 2]
    assert t.notes[0] == ("line 4 is cut off (the run stopped while writing it); read up to "
                          "line 3")
    # the same cut line *with* its newline is damage, not a crash's cut-off
    assert error(write(tmp_path, HEADER, RUN_START, cut)).line == 3
    # and a damaged middle line stays an error even when the last one is cut off
    e = error(write(tmp_path, HEADER, cut, RUN_START, cut, newline=False))
    assert e.line == 2 and "not JSON" in str(e)


def test_a_first_line_cut_off_is_not_a_trace(tmp_path: Path) -> None:
    e = error(write(tmp_path, json.dumps(HEADER)[:20], newline=False))
    assert e.line == 1 and "not JSON" in str(e)


@pytest.mark.parametrize("header,words", [
    ({"level": "info"}, "no agentkit trace header"),
    (event("run", "start", question="q", root="/"), "no agentkit trace header"),
    (event("trace", format="other"), "no agentkit trace header"),
    ({**HEADER, "v": TRACE_VERSION + 1}, "newer than this agentkit reads"),
    ({**HEADER, "v": 0}, "not a version agentkit ever wrote"),
    ({**HEADER, "v": True}, "not a version agentkit ever wrote"),
    ({**HEADER, "v": "1"}, "not a version agentkit ever wrote"),
    ([1, 2], "no agentkit trace header"),
])
def test_the_header_line(tmp_path: Path, header: Any, words: str) -> None:
    e = error(write(tmp_path, header, RUN_START))
    assert e.line == 1 and words in str(e), str(e)


@pytest.mark.parametrize("kind,phase,field", [
    ("run", "start", "question"), ("run", "start", "root"),
    ("tool", "start", "tool"), ("tool", "start", "args"), ("tool", "start", "index"),
    ("tool", "end", "tool"), ("tool", "end", "index"), ("tool", "end", "ok"),
    ("tool", "end", "data"), ("tool", "end", "evidence"),
    ("synthesize", "end", "answer"),
])
def test_each_required_field_is_named_by_line(tmp_path: Path, kind: str, phase: str,
                                               field: str) -> None:
    full = {("run", "start"): RUN_START, ("tool", "start"): TOOL_START,
            ("tool", "end"): TOOL_END,
            ("synthesize", "end"): event("synthesize", "end", 3, answer={})}[(kind, phase)]
    broken = json.loads(json.dumps(full))
    del broken["data"][field]
    e = error(write(tmp_path, HEADER, RUN_START, broken, RUN_END))
    assert e.line == 3 and str(e).endswith(f"line 3: {kind} {phase} event without {field} "
                                           "in its data")


def test_an_llm_end_needs_a_response_or_an_error(tmp_path: Path) -> None:
    e = error(write(tmp_path, HEADER, RUN_START, event("llm", "end", 2, usage={})))
    assert e.line == 3 and "llm end event without response" in str(e)
    for data in ({"response": {}}, {"error": "x"}):
        assert len(read_trace(write(tmp_path, HEADER, RUN_START,
                                    event("llm", "end", 2, **data))).events) == 3


@pytest.mark.parametrize("edit,words", [
    (lambda e: e.pop("kind"), "not a trace event: kind: Field required"),
    (lambda e: e.update(ts="soon"), "not a trace event: ts"),
    (lambda e: e.update(extra=1), "not a trace event: extra"),
    (lambda e: e.update(data=[1]), "not a trace event: data"),
    (lambda e: e.update(v=TRACE_VERSION + 1), f"is not one this agentkit reads (1 to "
                                              f"{TRACE_VERSION})"),
    (lambda e: e.update(v=False), "trace version False"),
])
def test_malformed_events_are_named_by_line(tmp_path: Path, edit: Any, words: str) -> None:
    broken = json.loads(json.dumps(TOOL_START))
    edit(broken)
    e = error(write(tmp_path, HEADER, RUN_START, broken))
    assert e.line == 3 and words in str(e), str(e)


def test_a_line_that_is_json_but_not_an_object(tmp_path: Path) -> None:
    e = error(write(tmp_path, HEADER, "[1, 2]"))
    assert e.line == 2 and "not a trace event" in str(e)


def test_files_that_are_not_traces(tmp_path: Path) -> None:
    assert "no such file" in str(error(tmp_path / "missing.jsonl"))
    assert error(tmp_path / "missing.jsonl").line == 0
    (tmp_path / "empty.jsonl").write_text(" \n\n")
    e = error(tmp_path / "empty.jsonl")
    assert e.line == 1 and "empty file" in str(e)
    binary = tmp_path / "bin.jsonl"
    binary.write_bytes(json.dumps(HEADER).encode() + b"\n" + b"\xff\xfe\n")
    e = error(binary)
    assert e.line == 2 and "not UTF-8" in str(e)
    (tmp_path / "dir.jsonl").mkdir()
    assert "cannot read" in str(error(tmp_path / "dir.jsonl"))


def test_text_line_counts_from_one(tmp_path: Path) -> None:
    p = tmp_path / "f"
    p.write_bytes(b"a\nb\nc")
    assert [text_line(str(p), o) for o in (0, 1, 2, 4)] == [1, 1, 2, 3]


def test_every_message_in_full(tmp_path: Path) -> None:
    def msg(p: Path) -> str:
        return str(error(p))

    missing = tmp_path / "missing.jsonl"
    assert msg(missing) == f"{missing}: line 0: no such file"
    d = tmp_path / "dir.jsonl"
    d.mkdir()
    assert msg(d) == f"{d}: line 0: cannot read: Is a directory"
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert msg(empty) == f"{empty}: line 1: empty file: not an agentkit trace"
    b = tmp_path / "bin.jsonl"
    b.write_bytes(b"\xff\n")
    assert msg(b) == f"{b}: line 1: not UTF-8 text: not an agentkit trace"
    p = write(tmp_path, {"x": 1})
    assert msg(p) == (f"{p}: line 1: no agentkit trace header: this file was written by "
                      "another program (agentkit traces start with a \"trace\" event)")
    p = write(tmp_path, {**HEADER, "v": 7})
    assert msg(p) == (f"{p}: line 1: trace version 7 is newer than this agentkit reads "
                      f"({TRACE_VERSION}): upgrade agentkit to replay it")
    p = write(tmp_path, {**HEADER, "v": -1})
    assert msg(p) == (f"{p}: line 1: trace version -1 is not a version agentkit ever wrote: "
                      "the file is damaged")
    p = write(tmp_path, HEADER, "{oops")
    assert msg(p) == f"{p}: line 2: not JSON (Expecting property name enclosed in double " \
                     "quotes at column 2)"
    p = write(tmp_path, HEADER, {**RUN_START, "v": 9})
    assert msg(p) == (f"{p}: line 2: trace version 9 is not one this agentkit reads (1 to "
                      f"{TRACE_VERSION})")
    bad = json.loads(json.dumps(TOOL_END))
    del bad["data"]["ok"], bad["data"]["evidence"]
    p = write(tmp_path, HEADER, bad)
    assert msg(p) == f"{p}: line 2: tool end event without ok, evidence in its data"
    p = write(tmp_path, HEADER, [3])
    assert msg(p) == f"{p}: line 2: not a trace event: (line): Input should be a valid " \
                     "dictionary or instance of TraceEvent"
    nested = json.loads(json.dumps(TOOL_START))
    nested["step"] = {"a": 1}
    p = write(tmp_path, HEADER, nested)
    assert msg(p).startswith(f"{p}: line 2: not a trace event: step: ")


def test_a_two_line_trace_whose_last_line_is_cut(tmp_path: Path) -> None:
    t = read_trace(write(tmp_path, HEADER, json.dumps(RUN_START)[:15], newline=False))
    assert t.truncated is True and [e.kind for e in t.events] == ["trace"]
    assert t.notes[0].startswith("line 2 is cut off")
    t = read_trace(write(tmp_path, HEADER, RUN_START, RUN_END))
    assert t.truncated is False and t.path.endswith("t.jsonl")


def test_evidence_is_written_once_and_read_back_whole(tmp_path: Path) -> None:
    import anyio

    from agentkit import Host, Orchestrator, Trace

    from .conftest import EXAMPLES

    path = tmp_path / "t.jsonl"
    listened: list[dict[str, Any]] = []
    trace = Trace(str(path), listener=listened.append)
    orch = Orchestrator.catalog(Host.at(EXAMPLES / "hopper-deepseek"), trace=trace)
    anyio.run(orch.investigate, "Do previous optimizations apply? Would fp8 kv help?")
    trace.close()
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    ends = [e for e in lines if e["kind"] == "task" and e["phase"] == "end"]
    refs = [ev for e in ends for ev in e["data"]["result"]["evidence"] if "ref" in ev]
    assert refs  # the shared host-model evidence is referenced, not repeated
    whole = {ev["id"] for e in lines if e["kind"] == "tool" and e["phase"] == "end"
             for ev in e["data"].get("evidence", []) if "id" in ev}
    whole |= {ev["id"] for e in ends for ev in e["data"]["result"]["evidence"] if "id" in ev}
    assert all(r["ref"] in whole for r in refs)
    back = {e.task: e.data["result"] for e in read_trace(str(path)).events
            if e.kind == "task" and e.phase == "end"}
    heard = {e["task"]: e["data"]["result"] for e in listened
             if e["kind"] == "task" and e["phase"] == "end"}
    assert back.keys() == heard.keys()
    for task, result in heard.items():  # what listeners heard is what the reader gives back
        got = json.loads(json.dumps(back[task], default=str))
        assert got["evidence"] == json.loads(json.dumps(result, default=str))["evidence"]
    # version 3: a repeated tool result is a reference in the file, whole when read back
    assert any("data_ref" in e["data"] for e in lines if e["kind"] == "tool")
    said = {e["seq"]: e["data"] for e in listened if e["kind"] == "tool" and e["phase"] == "end"}
    read = {e.seq: e.data for e in read_trace(str(path)).events
            if e.kind == "tool" and e.phase == "end"}
    assert said.keys() == read.keys()
    for seq, data in said.items():
        assert json.loads(json.dumps(read[seq], default=str)) == json.loads(
            json.dumps(data, default=str)), seq


def test_a_tool_result_referenced_before_it_is_written_is_an_error(tmp_path: Path) -> None:
    p = tmp_path / "t.jsonl"
    end = {**TOOL_START, "phase": "end", "seq": 3, "data": {
        "tool": "glob", "index": 1, "ok": True, "data_ref": 2, "evidence": []}}
    p.write_text("\n".join(json.dumps(e) for e in (HEADER, RUN_START, TOOL_START, end)) + "\n")
    with pytest.raises(TraceError, match="line 4: tool result 2 is referenced before"):
        read_trace(str(p))


def test_a_reference_to_evidence_never_written_is_named(tmp_path: Path) -> None:
    lines = [HEADER, event("run", "start", 1, question="q", root="/", mode="catalog"),
             {**event("task", "end", 2, result={
                 "task_id": "t", "status": "ok", "summary": "", "evidence": [{"ref": "Eabc"}]}),
              "task": "t"}]
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    with pytest.raises(TraceError, match="line 3: evidence 'Eabc' is referenced before"):
        read_trace(str(path))


def test_a_version_1_trace_still_reads(tmp_path: Path) -> None:
    old = [{**e, "v": 1} for e in (HEADER, RUN_START, TOOL_START, TOOL_END)]
    path = tmp_path / "v1.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in old))
    got = read_trace(str(path))
    assert [(e.kind, e.phase) for e in got.events] == [("trace", "event"), ("run", "start"),
                                                     ("tool", "start"), ("tool", "end")]
