"""Replay: exact (byte-identical, no socket, no process), broken traces, interrupted runs,
divergence, drift against a changed host, and the committed example traces."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agentkit.cli import main
from agentkit.testing import FakeLLMServer, cassette

from .conftest import EXAMPLES, REFERENCE_QUESTION, write_tree
from .llm_script import make_script
from .test_llm_pipeline import HOST


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def sealed(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Any socket connection or process start during the test is recorded and refused."""
    attempts: list[object] = []

    def refuse(*args: object, **kwargs: object) -> None:
        attempts.append(args)
        raise AssertionError(f"replay tried to reach out: {args!r}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(subprocess, "Popen", refuse)
    return attempts


@pytest.mark.parametrize("example", ["blackwell-kimi", "hopper-deepseek"])
def test_catalog_record_then_replay_is_byte_identical(
        example: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    trace = tmp_path / "run.jsonl"
    code, recorded, _ = run(capsys, "ask", REFERENCE_QUESTION, "--root", str(EXAMPLES / example),
                            "--json", "-q", "--trace", str(trace))
    assert code == 0
    attempts: list[object] = []
    monkeypatch.setattr(subprocess, "Popen", lambda *a, **k: attempts.append(a))
    monkeypatch.setattr(socket.socket, "connect", lambda *a: attempts.append(a))
    code, replayed, err = run(capsys, "replay", str(trace), "--json")
    assert code == 0, err
    assert replayed == recorded
    assert "identical to the recorded one" in err and attempts == []


def record_llm(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, Path, str]:
    """An LLM-mode investigation against the scripted server: (host root, trace, answer JSON)."""
    root = write_tree(tmp_path / "host", HOST)
    trace = tmp_path / "llm.jsonl"
    with FakeLLMServer(make_script(["unit", "nccl-conf", "model"])) as server:
        code, out, err = run(capsys, "ask", "What is set here?", "--root", str(root),
                             "--base-url", server.base_url, "--model", "fake", "--json", "-q",
                             "--trace", str(trace))
    assert code == 0, err
    return root, trace, out


def test_llm_record_then_replay_without_the_server(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str],
                                                    request: pytest.FixtureRequest) -> None:
    root, trace, recorded = record_llm(tmp_path, capsys)
    shutil.rmtree(root)  # nothing on disk is needed to replay
    sealed = request.getfixturevalue("sealed")
    code, replayed, err = run(capsys, "replay", str(trace), "--json")
    assert code == 0, err
    assert replayed == recorded and json.loads(replayed)["mode"] == "llm"
    assert sealed == []


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines(keepends=True)


@pytest.fixture
def recorded(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    trace = tmp_path / "rec.jsonl"
    assert run(capsys, "ask", REFERENCE_QUESTION, "--root", str(EXAMPLES / "blackwell-kimi"),
               "-q", "--trace", str(trace))[0] == 0
    return trace


def test_corrupted_line_is_named(recorded: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = _lines(recorded)
    lines[6] = lines[6][: len(lines[6]) // 2] + "\n"  # a line cut in the middle of the file
    recorded.write_text("".join(lines))
    code, _, err = run(capsys, "replay", str(recorded))
    assert code == 2 and "line 7: not JSON" in err


def test_event_missing_a_field_is_named(recorded: Path, capsys: pytest.CaptureFixture[str]
                                        ) -> None:
    lines = _lines(recorded)
    ev = json.loads(lines[4])
    del ev["kind"]
    lines[4] = json.dumps(ev) + "\n"
    recorded.write_text("".join(lines))
    code, _, err = run(capsys, "replay", str(recorded))
    assert code == 2 and "line 5: not a trace event: kind" in err


def test_foreign_and_future_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    foreign = tmp_path / "other.jsonl"
    foreign.write_text('{"level": "info", "msg": "hello"}\n')
    code, _, err = run(capsys, "replay", str(foreign))
    assert code == 2 and "line 1: no agentkit trace header" in err
    binary = tmp_path / "bin.jsonl"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\xff\xfe")
    code, _, err = run(capsys, "replay", str(binary))
    assert code == 2 and "not UTF-8" in err
    future = tmp_path / "future.jsonl"
    future.write_text(json.dumps({"v": 99, "seq": 0, "ts": 0, "kind": "trace", "phase": "event",
                                  "span": None, "parent": None, "task": None, "step": None,
                                  "data": {"format": "agentkit-trace"}}) + "\n")
    code, _, err = run(capsys, "replay", str(future))
    assert code == 2 and "newer than this agentkit reads" in err and "upgrade" in err


def test_crash_truncated_trace_replays_to_its_end(recorded: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    lines = _lines(recorded)
    events = [json.loads(line) for line in lines]
    ends = [i for i, e in enumerate(events) if e["kind"] == "task" and e["phase"] == "end"]
    cut = ends[3]  # four tasks finished, the rest were in flight
    recorded.write_text("".join(lines[: cut + 1]) + lines[cut + 1][:40])
    code, out, err = run(capsys, "replay", str(recorded), "--json")
    assert code == 0, err
    assert "is cut off" in err and "interrupted" in err
    answer = json.loads(out)
    finished = {json.loads(lines[i])["task"] for i in ends[:4]}
    assert "incomplete when the recorded run stopped" in err
    incomplete = err.split("incomplete when the recorded run stopped: ")[1].splitlines()[0]
    # A task left unfinished is incomplete when it needs a call of its own that the cut trace
    # lacks; one built wholly from what was recorded (the shared host model) still completes.
    own_calls = {e["task"] for e in events if e["kind"] == "tool"}
    assert set(incomplete.split(", ")) == (set(answer["tasks"]) - finished) & own_calls
    assert all(answer["tasks"][t] == "ok" for t in finished)


def test_divergence_is_reported_with_task_and_step(recorded: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    lines = _lines(recorded)
    i = next(i for i, line in enumerate(lines)
             if (e := json.loads(line))["kind"] == "tool" and e["phase"] == "start"
             and e["task"] == "host-model" and "/etc/nccl.conf" in line)
    ev = json.loads(lines[i])
    ev["data"]["args"]["path"] = "/etc/other.conf"
    lines[i] = json.dumps(ev) + "\n"
    recorded.write_text("".join(lines))
    code, _, err = run(capsys, "replay", str(recorded))
    assert code == 6
    assert f"diverged at task host-model step {ev['step']}" in err


def test_drift_names_the_changed_setting_and_its_findings(
        recorded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    copy = tmp_path / "host"
    shutil.copytree(EXAMPLES / "blackwell-kimi", copy)
    unit = copy / "etc/systemd/system/vllm-kimi.service"
    unit.write_text(unit.read_text().replace("NCCL_PROTO=LL", "NCCL_PROTO=Simple"))
    code, out, err = run(capsys, "replay", str(recorded), "--live-tools", "--root", str(copy),
                         "--json")
    assert code == 0, err
    drift = json.loads(out)["drift"]
    assert drift["changed"] and not drift["gone"]
    assert {c["locator"].split(" ")[0] for c in drift["changed"]} == {
        "/etc/systemd/system/vllm-kimi.service:15"}
    assert all("NCCL_PROTO=Simple" in c["now"] for c in drift["changed"])
    assert any("NCCL_PROTO=LL (/etc/systemd/system/vllm-kimi.service:15)" in f
               for f in drift["findings_on_changed_evidence"])
    new_answer = json.loads(out)["answer"]
    assert "NCCL_PROTO=Simple" in new_answer["bottom_line"][0]["text"]
    code, out, _ = run(capsys, "replay", str(recorded), "--live-tools", "--root",
                       str(EXAMPLES / "blackwell-kimi"))
    assert code == 0 and "No recorded evidence changed." in out


@pytest.mark.parametrize("example", ["blackwell-kimi", "hopper-deepseek"])
def test_committed_example_traces_still_replay(example: str,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "replay", str(EXAMPLES / "traces" / f"{example}.jsonl"))
    assert code == 0, err
    assert "identical to the recorded one" in err


def test_trace_show(recorded: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "trace", "show", str(recorded))
    assert code == 0
    assert "kv-cache-dtype-support" in out and "recipe nccl-env" in out
    assert "tool parse_config" in out


def test_cassette_records_once_then_replays(tmp_path: Path, sealed: list[object],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "cassettes" / "nccl.jsonl"
    first = cassette(path, "Is NCCL tuned?", root=str(EXAMPLES / "blackwell-kimi"))
    again = cassette(path, "Is NCCL tuned?")
    assert again.model_dump_json() == first.model_dump_json()
    with pytest.raises(ValueError, match="recorded 'Is NCCL tuned\\?'"):
        cassette(path, "Something else?")
    _: Any = monkeypatch


@pytest.mark.parametrize("edit,words", [
    (lambda ev: ev.update(v=0), "line 3: trace version 0"),
    (lambda ev: ev.update(v="x"), "line 3: trace version 'x'"),
    (lambda ev: ev["data"].clear() if ev["kind"] == "run" else None, "line 2: run start"),
])
def test_damaged_events_are_named_by_line(recorded: Path, capsys: pytest.CaptureFixture[str],
                                          edit: Any, words: str) -> None:
    lines = _lines(recorded)
    target = 1 if "run start" in words else 2
    ev = json.loads(lines[target])
    edit(ev)
    lines[target] = json.dumps(ev) + "\n"
    recorded.write_text("".join(lines))
    code, _, err = run(capsys, "replay", str(recorded))
    assert code == 2 and words in err and "Traceback" not in err


def test_missing_and_empty_trace_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                       ) -> None:
    code, _, err = run(capsys, "replay", str(tmp_path / "nope.jsonl"))
    assert code == 2 and "no such file" in err
    (tmp_path / "empty.jsonl").write_text("")
    code, _, err = run(capsys, "replay", str(tmp_path / "empty.jsonl"))
    assert code == 2 and "empty file" in err


def test_truncated_trace_says_there_was_no_answer_to_compare(
        recorded: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = _lines(recorded)
    recorded.write_text("".join(lines[: len(lines) // 2]))
    code, _, err = run(capsys, "replay", str(recorded))
    assert code == 0 and "no answer was recorded to compare with" in err
    assert "DIFFERENT" not in err


def test_llm_drift_names_task_findings_and_stale_model_steps(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root, trace, _ = record_llm(tmp_path, capsys)
    (root / "etc/nccl.conf").write_text("NCCL_DEBUG=INFO\n")
    code, out, err = run(capsys, "replay", str(trace), "--live-tools", "--json")
    assert code == 0, err
    drift = json.loads(out)["drift"]
    assert [c["locator"] for c in drift["changed"]] == ["/etc/nccl.conf:1"]
    assert "[nccl-conf] /etc/nccl.conf sets NCCL_DEBUG=WARN." in (
        drift["findings_on_changed_evidence"])
    # the synthesizer saw ids and locators only, which did not change: not stale
    assert drift["stale_model_steps"] == ["task nccl-conf step 2"]
    assert "stale" in err


def test_a_corrupt_middle_line_is_an_error_even_when_the_file_ends_cut_off(
        recorded: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Only the *last* line may be a crash's cut-off: a damaged line before it is named.
    lines = _lines(recorded)
    lines[5] = lines[5][: len(lines[5]) // 2] + "\n"
    text = "".join(lines)
    recorded.write_text(text[:-25])  # and the last line cut off, without its newline
    code, _, err = run(capsys, "replay", str(recorded))
    assert code == 2 and "line 6: not JSON" in err


@pytest.mark.parametrize("drop", ["tool", "args", "index"])
def test_a_tool_start_event_without_its_fields_is_named_by_line(
        recorded: Path, capsys: pytest.CaptureFixture[str], drop: str) -> None:
    lines = _lines(recorded)
    i = next(i for i, line in enumerate(lines)
             if (e := json.loads(line))["kind"] == "tool" and e["phase"] == "start")
    ev = json.loads(lines[i])
    del ev["data"][drop]
    lines[i] = json.dumps(ev) + "\n"
    recorded.write_text("".join(lines))
    code, _, err = run(capsys, "replay", str(recorded))
    assert code == 2 and f"line {i + 1}: tool start event without {drop}" in err
    assert "Traceback" not in err


def test_a_tampered_llm_trace_does_not_replay_as_identical(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # A recorded tool result changed by hand changes what the model would have been shown:
    # the request no longer hashes to the recorded one, and exact replay says so.
    _, trace, _ = record_llm(tmp_path, capsys)
    lines = _lines(trace)
    i = next(i for i, line in enumerate(lines)
             if (e := json.loads(line))["kind"] == "tool" and e["phase"] == "end"
             and e["data"]["ok"] and e["task"] == "nccl-conf")
    ev = json.loads(lines[i])
    ev["data"]["data"]["tampered"] = True
    lines[i] = json.dumps(ev) + "\n"
    trace.write_text("".join(lines))
    code, _, err = run(capsys, "replay", str(trace))
    assert code == 6, err
    assert f"diverged at task nccl-conf step {ev['step'] + 1}" in err
    assert "model request differs from the recorded one" in err
    assert "identical" not in err


def test_replay_restores_the_recorded_tasks_limits_and_settings(tmp_path: Path) -> None:
    # A run asked for two named tasks with a task cap and a deadline: the replay must run the
    # same tasks under the same limits (a plan of its own would not be the recorded answer).
    import anyio

    from agentkit import Host, Limits, Orchestrator
    from agentkit._replay import replay_trace
    from agentkit._trace import Trace

    path = tmp_path / "named.jsonl"
    orch = Orchestrator.catalog(Host.at(EXAMPLES / "blackwell-kimi"), trace=Trace(path))
    orch.config = {"concurrency": 3, "max_tasks": 5, "task_dirs": []}
    recorded = anyio.run(lambda: orch.investigate(
        "What GPUs are here?", tasks=["gpu-topology", "nccl-env"],
        limits=Limits(max_tasks=1, deadline_s=60)))
    orch.trace.close()
    assert list(recorded.tasks) == ["gpu-topology"]  # cut to one by the limit
    got = anyio.run(replay_trace, path)
    assert got.identical and got.answer is not None
    assert list(got.answer.tasks) == ["gpu-topology"] and got.tasks == {"gpu-topology": "ok"}
    assert got.incomplete == [] and got.drift is None and got.recorded is not None
    events = [json.loads(line) for line in path.read_text().splitlines()]
    run_start = next(e for e in events if e["kind"] == "run" and e["phase"] == "start")
    assert run_start["data"]["tasks"] == ["gpu-topology", "nccl-env"]
    assert run_start["data"]["limits"]["max_tasks"] == 1


def test_a_recorded_model_error_replays_as_the_same_error(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]
                                                          ) -> None:
    import anyio

    from agentkit._llm._messages import ModelError, ModelRequest
    from agentkit._replay import Recording, ReplayDiverged, ReplayModel
    from agentkit._trace._read import read_trace

    _, trace, _ = record_llm(tmp_path, capsys)
    rec = Recording(read_trace(trace))
    key = next(iter(rec.llm))
    rec.llm[key] = {"error": "ModelError: model server answered HTTP 503: busy: try later"}
    rec.llm_hash[key] = ""
    req = ModelRequest(messages=[], task=key[0], step=key[1])
    with pytest.raises(ModelError) as err:
        anyio.run(ReplayModel(rec).complete, req)
    assert str(err.value) == "model server answered HTTP 503: busy: try later"
    with pytest.raises(ReplayDiverged, match="diverged at task nope step 9 \\(model call\\)"):
        anyio.run(ReplayModel(rec).complete, ModelRequest(messages=[], task="nope", step=9))


def test_live_tool_drift_reports_stale_model_steps_in_the_notes(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import anyio

    from agentkit._replay import replay_trace

    root, trace, _ = record_llm(tmp_path, capsys)
    (root / "etc/nccl.conf").write_text("NCCL_DEBUG=INFO\n")
    got = anyio.run(lambda: replay_trace(trace, live_tools=True))
    assert got.drift is not None and got.drift.any and not got.identical
    assert got.drift.stale_steps and all(s.startswith("task ") for s in got.drift.stale_steps)
    stale = [n for n in got.notes if n.startswith("recorded model answers reused")]
    assert stale == ["recorded model answers reused although what the model was shown has "
                     f"changed (stale): {'; '.join(got.drift.stale_steps)}"]


def test_replay_loads_the_task_directories_the_run_used(tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]
                                                        ) -> None:
    # A user template answered the recorded run; the replay must load the same directory
    # (from the trace's config), or the template is unknown and nothing replays.
    tasks = tmp_path / "mytasks"
    tasks.mkdir()
    (tasks / "kernel.yaml").write_text(
        "name: kernel\ntitle: Kernel version\ndescription: The running kernel.\n"
        "triggers: {keywords: [kernel]}\ntools: [run_command]\nsteps:\n"
        "  - tool: run_command\n    args: {argv: [uname, -r]}\n    save: uname\n"
        "  - fact: kernel\n    value: \"vars.uname.stdout.strip()\"\n    cite: [uname]\n"
        "findings:\n  - claim: \"Kernel {{ facts.kernel.value }}.\"\n    cite: [kernel]\n"
        "    headline: true\n")
    trace = tmp_path / "k.jsonl"
    code, recorded, err = run(capsys, "ask", "Which kernel runs here?", "--root",
                              str(EXAMPLES / "blackwell-kimi"), "--tasks-dir", str(tasks),
                              "--json", "-q", "--trace", str(trace))
    assert code == 0, err
    assert "Kernel 6.8.0-87-generic." in recorded
    code, replayed, err = run(capsys, "replay", str(trace), "--json")
    assert code == 0, err
    assert replayed == recorded and "identical to the recorded one" in err


def test_an_llm_trace_without_request_hashes_still_replays(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]
                                                           ) -> None:
    # Hashes are a check, not a key: a trace written without them replays on (task, step).
    _, trace, recorded = record_llm(tmp_path, capsys)
    lines = []
    for line in _lines(trace):
        ev = json.loads(line)
        if ev["kind"] == "llm" and ev["phase"] == "start":
            ev["data"].pop("request_hash", None)
        lines.append(json.dumps(ev) + "\n")
    trace.write_text("".join(lines))
    code, replayed, err = run(capsys, "replay", str(trace), "--json")
    assert code == 0, err
    assert replayed == recorded


def test_a_replay_writes_its_own_trace_with_the_recorded_tool_outcomes(
        recorded: Path, tmp_path: Path) -> None:
    import anyio

    from agentkit._replay import replay_trace

    out = tmp_path / "again.jsonl"
    got = anyio.run(lambda: replay_trace(recorded, trace_out=str(out)))
    assert got.identical

    def outcomes(path: Path) -> dict[tuple[str, int, int], tuple[bool, str]]:
        evs = [json.loads(line) for line in path.read_text().splitlines()]
        return {(e["task"], e["step"], e["data"]["index"]): (e["data"]["ok"], e["data"]["error"])
                for e in evs if e["kind"] == "tool" and e["phase"] == "end"}

    before, after = outcomes(recorded), outcomes(out)
    assert after == before and any(not ok for ok, _ in before.values())


def test_a_trace_without_a_run_is_refused_by_name(tmp_path: Path) -> None:
    from agentkit._replay import Recording, ReplayDiverged
    from agentkit._trace._read import read_trace
    from agentkit._trace._write import TRACE_FORMAT

    path = tmp_path / "norun.jsonl"
    path.write_text(json.dumps({"v": 1, "seq": 0, "ts": 1.0, "kind": "trace", "phase": "event",
                                "span": None, "parent": None, "task": None, "step": None,
                                "data": {"format": TRACE_FORMAT}}) + "\n")
    with pytest.raises(ReplayDiverged) as exc:
        Recording(read_trace(path))
    assert str(exc.value) == f"{path}: the trace has no run-start event; nothing to replay"


def test_replay_rebuilds_the_recorded_settings(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    import anyio

    import agentkit._replay as replay_mod
    from agentkit import Host, Orchestrator
    from agentkit._trace import Trace

    path = tmp_path / "cfg.jsonl"
    orch = Orchestrator.catalog(Host.at(EXAMPLES / "blackwell-kimi"), trace=Trace(path))
    orch.config = {"task_dirs": [], "max_tasks": 5, "max_steps": 7, "task_deadline_s": 30.0,
                   "concurrency": 3, "model": "m-1", "provider": "anthropic",
                   "base_url": "http://127.0.0.1:9/v1", "unused": None}
    anyio.run(lambda: orch.investigate("Is NCCL tuned?", tasks=["nccl-env"]))
    orch.trace.close()
    seen: list[Any] = []
    real = replay_mod.build_orchestrator

    def spy(settings: Any, host: Any, **kw: Any) -> Any:
        seen.append((settings, kw))
        return real(settings, host, **kw)

    monkeypatch.setattr(replay_mod, "build_orchestrator", spy)
    got = anyio.run(replay_mod.replay_trace, path)
    assert got.identical
    (settings, kw), = seen
    assert (settings.max_tasks, settings.max_steps, settings.task_deadline_s,
            settings.concurrency, settings.model, settings.provider) == (
        5, 7, 30.0, 3, "m-1", "anthropic")
    assert settings.base_url != "http://127.0.0.1:9/v1"  # never a recorded endpoint
    assert kw["catalog_only"] is True and kw["model"] is None
