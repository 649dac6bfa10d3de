"""The host model's pure parts, on inputs written for the test: unit state from systemctl and
journal lines, which server is current, and what a start script gives the engine."""

from __future__ import annotations

import pytest

from agentkit._hostmodel._model import HostModel, Server, Setting
from agentkit._hostmodel._select import select_current
from agentkit._hostmodel._shell import Where
from agentkit._hostmodel._shexec import Reading, script_of, strip_env
from agentkit._hostmodel._state import (
    State,
    from_journal,
    from_list_units,
    journal_life,
    parse_list_unit_files,
    parse_list_units,
)
from agentkit._hostmodel._wrapper import read_command

# ---- state ----------------------------------------------------------------------------------


def test_list_units_columns_and_bullets() -> None:
    text = ("● vllm-a.service loaded failed failed vLLM A\n"
            "  vllm-b.service loaded active running vLLM B\n"
            "sshd.socket loaded active listening SSH\n"
            "short.service loaded\n"
            "nodesc.service loaded inactive dead\n")  # no DESCRIPTION column: still a unit
    assert parse_list_units(text) == {"vllm-a.service": ("loaded", "failed", "failed", 1),
                                      "vllm-b.service": ("loaded", "active", "running", 2),
                                      "nodesc.service": ("loaded", "inactive", "dead", 5)}
    # older systemd prints no PRESET column
    assert parse_list_unit_files("a.service enabled enabled\nb.service disabled\n"
                                 "c.timer enabled enabled\nd.service\n") == {
        "a.service": ("enabled", 1), "b.service": ("disabled", 2)}


@pytest.mark.parametrize("active,sub,state", [
    ("active", "running", "running"), ("active", "exited", "running"),
    ("active", "reload", "running"), ("active", "start-post", "active"),
    ("activating", "auto-restart", "crash-looping"), ("deactivating", "auto-restart",
                                                      "crash-looping"),
    ("activating", "start", "starting"), ("failed", "failed", "failed"),
    ("inactive", "dead", "stopped"), ("maintenance", "x", "unknown"),
])
def test_state_from_list_units(active: str, sub: str, state: str) -> None:
    assert from_list_units(active, sub) == state


J = "Nov 20 10:00:{:02d} h systemd[1]: "
V = "Nov 20 10:00:{:02d} h vllm[9]: "


def journal(*lines: str) -> list[str]:
    return [line.format(n) for n, line in enumerate(lines)]


def test_a_crash_loop_is_restarts_without_a_successful_start() -> None:
    lines = journal(J + "Started u.service.", V + "ValueError: bad",
                    J + "u.service: Main process exited, code=exited, status=1/FAILURE",
                    J + "u.service: Failed with result 'exit-code'.",
                    J + "u.service: Scheduled restart job, restart counter is at 1.",
                    J + "Started u.service.",
                    J + "u.service: Failed with result 'exit-code'.",
                    J + "u.service: Scheduled restart job, restart counter is at 2.")
    life = journal_life(lines)
    assert (life.restarts, life.restart_line, life.last_event) == (2, 8, "restarting")
    assert life.failure_line == 7
    assert from_journal(life) == ("crash-looping", "the journal shows restart counter 2 and no "
                                  "successful start after it")


def test_restarts_then_a_healthy_start_is_running() -> None:
    lines = journal(J + "u.service: Scheduled restart job, restart counter is at 1.",
                    J + "u.service: Scheduled restart job, restart counter is at 2.",
                    J + "Started u.service.", V + "INFO:     Application startup complete.")
    life = journal_life(lines)
    assert life.healthy_line == 4 and life.last_event == "started"
    assert from_journal(life) == ("running", "the journal shows it started and came up, with "
                                  "no stop or failure after that (as of the capture)")
    # a restart line and then a healthy start, without systemd's "Started" in the capture
    life = journal_life(journal(J + "u.service: Scheduled restart job, restart counter is at "
                                "1.", V + "INFO:     Application startup complete."))
    assert life.last_event == "restarting" and from_journal(life)[0] == "running"


STOP = "the journal's last lifecycle line is a stop"
FAIL = "the journal's last lifecycle line is a failure"
RUN = "the journal shows it started, with no stop or failure after that (as of the capture)"


@pytest.mark.parametrize("lines,state,why", [
    ([J + "Started u.service."], "running", RUN),
    ([J + "Started u.service.", J + "Stopped u.service."], "stopped", STOP),
    ([J + "Started u.service.", J + "u.service: Deactivated successfully."], "stopped", STOP),
    ([J + "Started u.service.", J + "u.service: Failed with result 'exit-code'."], "failed",
     FAIL),
    ([J + "u.service: Start request repeated too quickly."], "failed", FAIL),
    ([J + "u.service: Scheduled restart job, restart counter is at 1."], "unknown", ""),
    ([V + "INFO something"], "unknown", ""),
    ([J + "u.service: Scheduled restart job, restart counter is at 3.",
      J + "Stopped u.service."], "stopped", STOP),
])
def test_state_from_the_journal(lines: list[str], state: str, why: str) -> None:
    assert from_journal(journal_life(journal(*lines))) == (state, why)


def test_state_knows_what_is_meant_to_be_up() -> None:
    assert State("running").up_or_meant_to_be and State("crash-looping").up_or_meant_to_be
    assert not State("failed").up_or_meant_to_be and not State().up_or_meant_to_be


# ---- which server is current ---------------------------------------------------------------


def server(name: str, state: str = "unknown", enabled: bool | None = None) -> Server:
    s = Server(name=name, path=f"/etc/systemd/system/{name}", files=[], argv=["vllm", "serve"],
               argv_source="x", argv_line=1, argv_evidence=[f"E{name}"], env={})
    s.state = State(state, enabled=enabled)
    return s


def decide(*servers: Server) -> HostModel:
    m = HostModel(servers=list(servers))
    select_current(m)
    return m


def test_no_server_and_a_single_one() -> None:
    m = decide()
    assert m.current is None and not m.ambiguous and "no systemd unit" in m.decision
    m = decide(server("a.service", "stopped", False))
    assert m.current is not None and m.current.name == "a.service" and "only unit" in m.decision


@pytest.mark.parametrize("states,current", [
    ([("running", False), ("stopped", True)], "a"),
    ([("stopped", True), ("crash-looping", False)], "b"),
    ([("unknown", True), ("unknown", False)], "a"),
    ([("stopped", False), ("failed", True)], "b"),
])
def test_running_beats_enabled_beats_present(states: list[tuple[str, bool]],
                                             current: str) -> None:
    m = decide(server("a", *states[0]), server("b", *states[1]))
    assert m.current is not None and m.current.name == current and not m.ambiguous


@pytest.mark.parametrize("states,candidates", [
    ([("running", True), ("running", True)], ["a", "b"]),
    ([("running", False), ("crash-looping", True), ("stopped", True)], ["a", "b"]),
    ([("unknown", True), ("unknown", True), ("unknown", False)], ["a", "b"]),
    ([("unknown", False), ("stopped", False)], ["a", "b"]),
    ([("unknown", None), ("unknown", None)], ["a", "b"]),
])
def test_ambiguous_names_every_candidate(states: list[tuple[str, bool | None]],
                                         candidates: list[str]) -> None:
    names = "abc"
    m = decide(*(server(names[i], *st) for i, st in enumerate(states)))
    assert m.current is None and m.ambiguous
    assert [s.name for s in m.candidates] == candidates
    for n in names[: len(states)]:
        assert n in m.decision


def test_server_views() -> None:
    s = server("a.service", "running", True)
    s.flags = {"model": "/models/org/name/", "tensor_parallel_size": "4"}
    s.nccl = {"NCCL_PROTO": Setting("NCCL_PROTO", "LL", "/u", 3, ["E1"]),
              "NCCL_DEBUG": Setting("NCCL_DEBUG", "INFO", "/u", 4, ["E2"])}
    assert s.model_path == "/models/org/name" and s.tp == 4
    assert list(s.tuning) == ["NCCL_PROTO"] and s.tuning["NCCL_PROTO"].where == "/u:3"
    assert s.summary()["nccl"] == {"NCCL_PROTO": "LL (/u:3)"}
    s.flags = {"tensor_parallel_size": "x"}
    assert s.tp == 1 and s.model_path is None
    assert Setting("A", "1", "/f", 0, []).where == "/f"


# ---- start scripts and env(1) --------------------------------------------------------------


def is_engine(argv: list[str]) -> bool:
    return any(a.endswith("vllm") for a in argv[:2])


@pytest.mark.parametrize("argv,got", [
    (["/bin/bash", "/opt/start.sh", "a"], ("/opt/start.sh", ["a"])),
    (["bash", "-e", "/opt/start.sh"], ("/opt/start.sh", [])),
    (["/opt/start.sh", "x", "y"], ("/opt/start.sh", ["x", "y"])),
    (["/bin/sh", "-c", "vllm serve m"], None), (["bash"], None), ([], None),
    (["/opt/venv/bin/vllm", "serve"], None),
])
def test_script_of(argv: list[str], got: tuple[str, list[str]] | None) -> None:
    assert script_of(argv) == got


@pytest.mark.parametrize("argv,cmd,pairs,clear", [
    (["/usr/bin/env", "A=1", "B=x=y", "vllm", "serve"], ["vllm", "serve"],
     [("A", "1"), ("B", "x=y")], False),
    (["env", "-i", "A=1", "vllm"], ["vllm"], [("A", "1")], True),
    (["env", "-u", "A", "--unset=B", "--", "vllm"], ["vllm"], [("A", "\0"), ("B", "\0")], False),
    (["env", "-S", "vllm serve"], ["env", "-S", "vllm serve"], [], False),
    (["vllm", "A=1"], ["vllm", "A=1"], [], False),
])
def test_strip_env(argv: list[str], cmd: list[str], pairs: list[tuple[str, str]],
                   clear: bool) -> None:
    assert strip_env(argv) == (cmd, pairs, clear)


def read(text: str, env: dict[str, str] | None = None, args: tuple[str, ...] = (),
         files: dict[str, str | None] | None = None) -> Reading:
    return read_command(["/bin/bash", "/s.sh", *args], env or {},
                        {"/s.sh": text, **(files or {})}, is_engine, Where("/u.service", 9))


def values(r: Reading) -> dict[str, str | None]:
    assert r.launch is not None
    return {k: v.value for k, v in r.launch.env.items()}


def test_a_script_exports_and_execs() -> None:
    text = ("#!/bin/bash\nset -euo pipefail\nexport NCCL_PROTO=LL\nLOCAL=1\nMODEL=/m\n"
            "export MODEL\nexport NCCL_ALGO=\"Ring\"  # comment\n"
            "exec /opt/v/bin/vllm serve \"$MODEL\" \\\n  --tp $TP \"$@\"\n")
    r = read(text, {"TP": "8"}, ("--port", "1"))
    assert r.launch is not None and r.problems == []
    assert r.launch.argv == ["/opt/v/bin/vllm", "serve", "/m", "--tp", "8", "--port", "1"]
    assert r.launch.at.line == 8
    assert values(r) == {"TP": "8", "NCCL_PROTO": "LL", "MODEL": "/m", "NCCL_ALGO": "Ring"}
    assert r.launch.env["MODEL"].at is not None and r.launch.env["MODEL"].at.line == 5
    assert r.launch.env["TP"].at is None  # inherited, untouched: the unit's own setting
    assert list(r.launch.shell_vars) == ["LOCAL"]  # set, never exported


def test_inherited_names_stay_exported_and_set_a_exports() -> None:
    text = ("NCCL_PROTO=Simple\nset -a\nA=1\nset +a\nB=2\nset -o allexport\nC=3\n"
            "set +o allexport\nD=4\nvllm serve m\n")
    assert values(read(text, {"NCCL_PROTO": "LL"})) == {"NCCL_PROTO": "Simple", "A": "1",
                                                        "C": "3"}


def test_bash_c_plain_assignment_does_not_reach_the_engine() -> None:
    text = "NCCL_P2P_LEVEL=SYS; exec vllm serve m"
    r = read_command(["/bin/bash", "-c", text], {"NCCL_PROTO": "LL"}, {}, is_engine,
                     Where("/u.service", 9))
    assert values(r) == {"NCCL_PROTO": "LL"}
    assert r.launch is not None and list(r.launch.shell_vars) == ["NCCL_P2P_LEVEL"]
    at = r.launch.shell_vars["NCCL_P2P_LEVEL"].at
    assert at is not None and (at.path, at.line) == ("/u.service (bash -c)", 1)


def test_source_inline_with_set_a_and_semicolons() -> None:
    text = "set -a; source /etc/n.env; set +a\nX=1 && vllm serve m\n"
    r = read(text, files={"/etc/n.env": "# c\nNCCL_PROTO=LL\nexport NCCL_ALGO=Tree\n"})
    assert r.launch is not None
    got = {k: (v.value, v.at.path, v.at.line) for k, v in r.launch.env.items() if v.at}
    assert got == {"NCCL_PROTO": ("LL", "/etc/n.env", 2), "NCCL_ALGO": ("Tree", "/etc/n.env", 3)}
    assert r.read == ["/s.sh", "/etc/n.env"] and r.launch.argv == ["vllm", "serve", "m"]
    missing = read(". /nope\nvllm serve m\n")
    assert missing.wanted == ["/nope"]  # asked for; until read, nothing after it is certain
    assert missing.launch is not None and missing.launch.wild is not None


def test_command_prefix_assignments_reach_the_engine() -> None:
    r = read("NCCL_PROTO=LL exec env NCCL_ALGO=Ring vllm serve m\n")
    assert r.launch is not None and r.launch.argv == ["vllm", "serve", "m"]
    assert values(r) == {"NCCL_PROTO": "LL", "NCCL_ALGO": "Ring"}


def test_an_unset_variable_expands_to_nothing_and_a_computed_one_is_not_established() -> None:
    r = read("vllm serve $NOPE\n")  # bash: an unset variable is empty, the word goes away
    assert r.launch is not None and r.launch.argv == ["vllm", "serve"]
    r = read("X=$(hostname)\nvllm serve $X\n")
    assert r.launch is not None and r.launch.argv is None
    assert "command substitution" in r.launch.why and r.launch.probe[:2] == ["vllm", "serve"]
    assert read("echo hi\n").launch is None


def test_the_decision_says_why_in_full() -> None:
    assert decide().decision == "no systemd unit starts vLLM, SGLang or TensorRT-LLM"
    a, b = server("a", "running", True), server("b", "stopped", False)
    assert decide(a, b).decision == ("a is the only one of a (running, enabled), b (stopped, "
                                     "disabled) that is running or trying to run")
    a, b = server("a", "unknown", True), server("b", "unknown", None)
    assert decide(a, b).decision == ("a is the only enabled one of a (unknown, enabled), b "
                                     "(unknown, enablement unknown); none is shown running")
    a, b = server("a", "running", True), server("b", "crash-looping", True)
    assert decide(a, b).decision == ("more than one server is up: a (running, enabled), b "
                                     "(crash-looping, enabled)")
    a, b = server("a", "stopped", True), server("b", "stopped", True)
    assert decide(a, b).decision == ("the host does not say which one serves: a (stopped, "
                                     "enabled), b (stopped, enabled)")
    a, b = server("a", "stopped", False), server("b", "unknown", None)
    assert decide(a, b).decision == (
        "the host does not say which one serves: a (stopped, disabled), b (unknown, enablement "
        "unknown); none is enabled or shown running")


def test_script_variables_keep_their_line_and_text() -> None:
    text = ("# start\nexport A=1\n  B=two  \nexport B\nexport INHERITED\nexport UNKNOWN\n"
            "vllm serve m\n")
    r = read(text, {"INHERITED": "from-unit"})
    assert r.launch is not None
    env = r.launch.env
    assert env["A"].at == Where("/s.sh", 2, "export A=1") and env["A"].value == "1"
    assert env["B"].at is not None and (env["B"].value, env["B"].at.line) == ("two", 3)
    assert env["INHERITED"].value == "from-unit" and env["INHERITED"].at is None
    assert "UNKNOWN" not in env  # export of an unset name puts nothing in the environment
    assert (r.launch.at.line, r.launch.at.text) == (7, "vllm serve m")


@pytest.mark.parametrize("opts,exported", [
    ("set -a", True), ("set -ae", True), ("set -ea", True), ("set -o allexport", True),
    ("set -e", False), ("set -o pipefail", False), ("set -a; set +a", False),
    ("set -a; set +o allexport", False), ("set -a; set +eu", True), ("set -o errexit", False),
])
def test_allexport_switches(opts: str, exported: bool) -> None:
    assert ("X" in values(read(f"{opts}\nX=1\nvllm serve m\n"))) is exported


def test_values_expand_from_what_is_known_so_far() -> None:
    text = "export A=$BASE/x\nexport B=${NOPE:-dflt}\nexport C=$NOPE/y\nvllm serve m\n"
    got = values(read(text, {"BASE": "/opt"}))
    assert [got[k] for k in "ABC"] == ["/opt/x", "dflt", "/y"]


def test_source_reads_nested_files_and_says_what_it_could_not_read() -> None:
    text = "source /a.env\nvllm serve m\n"
    srcs: dict[str, str | None] = {"/a.env": "export A=1\n. /b.env\n",
                                   "/b.env": "export B=2\nsource /c.env\n", "/c.env": None}
    r = read(text, files=srcs)
    assert r.read == ["/s.sh", "/a.env", "/b.env"] and r.launch is not None
    assert r.launch.wild == Where("/b.env", 2, "source /c.env")
    assert not r.launch.env["A"].settled  # /c.env may change anything
    deep: dict[str, str | None] = {f"/{i}.env": f"export V{i}=1\nsource /{i + 1}.env\n"
                                   for i in range(20)}
    r = read("source /0.env\nvllm serve m\n", files=deep)
    assert r.launch is not None and r.launch.wild is not None  # too deep: said, not guessed


def test_the_first_engine_command_is_the_one_that_runs() -> None:
    # bash waits for a foreground command: the server started first is the one running
    text = "vllm serve first\nFLAGS='--tp 4'\nexec vllm serve last $FLAGS \"$@\"\n"
    r = read(text, args=("--a", "b c"))
    assert r.launch is not None and r.launch.argv == ["vllm", "serve", "first"]
    r = read("FLAGS='--tp 4'\nexec vllm serve last $FLAGS \"$@\"\n", args=("--a", "b c"))
    assert r.launch is not None
    assert r.launch.argv == ["vllm", "serve", "last", "--tp", "4", "--a", "b c"]


def test_conditions_make_what_they_change_not_established() -> None:
    text = ("if [ -f /etc/fast ]; then export NCCL_PROTO=LL; fi\n"
            "[ -e /x ] && export NCCL_ALGO=Ring\nexport NCCL_P2P_LEVEL=SYS\nvllm serve m\n")
    r = read(text)
    assert r.launch is not None
    assert r.launch.env["NCCL_P2P_LEVEL"].settled
    for name, line in (("NCCL_PROTO", 1), ("NCCL_ALGO", 2)):
        var = r.launch.env[name]
        assert not var.settled and var.at is not None and var.at.line == line


def test_env_options() -> None:
    assert strip_env(["/usr/local/bin/env", "--ignore-environment", "vllm"]) == (
        ["vllm"], [], True)
    assert strip_env(["env", "-", "vllm"]) == (["vllm"], [], True)
    assert strip_env(["env", "--unset", "A", "vllm"]) == (["vllm"], [("A", "\0")], False)
    assert strip_env(["env", "--unset=A=B", "vllm"]) == (["vllm"], [("A=B", "\0")], False)
    assert strip_env(["env", "A=1"]) == ([], [("A", "1")], False)
    assert strip_env(["env", "-u"]) == (["env", "-u"], [], False)  # -u without a name
    assert strip_env(["/a/b/env", "A=1", "x"]) == (["x"], [("A", "1")], False)
    assert strip_env(["/a/env/vllm", "serve"]) == (["/a/env/vllm", "serve"], [], False)
    assert script_of(["/a/bin/bash", "/s.sh"]) == ("/s.sh", [])
    assert script_of(["/a/bash/vllm"]) is None


def served(name: str, model: str, state: str = "running", enabled: bool = True) -> Server:
    s = server(name, state, enabled)
    s.flags = {"model": model}
    return s


def test_the_question_can_name_a_server() -> None:
    from agentkit._hostmodel._select import named

    glm = served("vllm-glm5.service", "/models/zai-org/GLM-5")
    kimi = served("vllm-kimi.service", "/models/nvidia/Kimi-K2.5-NVFP4/")
    both = [glm, kimi]
    assert named("Is NCCL tuned for the glm server?", both) == [glm]
    assert named("IS NCCL TUNED FOR THE GLM SERVER", both) == [glm]
    assert named("what about glm5x?", both) == [glm]  # a longer word that begins with a name
    assert named("and the kim one?", both) == [kimi]  # a name that begins with the word
    assert named("Is the vllm server tuned?", both) == []  # generic words name nobody
    assert named("Is k2 or 5 tuned?", both) == []  # short and numeric words neither
    assert named("compare glm and kimi", both) == [glm, kimi]
    assert named("the nvfp4 one", both) == []


def test_a_named_server_is_current_and_the_decision_says_so() -> None:
    glm = served("vllm-glm5.service", "/models/zai-org/GLM-5")
    kimi = served("vllm-kimi.service", "/models/nvidia/Kimi-K2.5-NVFP4")
    m = HostModel(servers=[glm, kimi])
    select_current(m, "Is NCCL tuned for the glm server?")
    assert m.current is glm and not m.ambiguous
    assert m.decision == ("the question names vllm-glm5.service (one of vllm-glm5.service "
                          "(running, enabled), vllm-kimi.service (running, enabled))")
    m = HostModel(servers=[glm, kimi])
    select_current(m, "compare glm and kimi")  # both named: the host decides, or nobody
    assert m.current is None and m.ambiguous
    m = HostModel(servers=[served("vllm-kimi.service", "/models/k/Kimi")])
    select_current(m, "is the glm server tuned?")  # one server: it is the one, named or not
    assert m.current is not None and "only unit" in m.decision


def test_three_letter_names_and_a_single_named_server() -> None:
    from agentkit._hostmodel._select import named

    a = served("vllm-a.service", "/m/GLM-5")  # its only distinctive word has three letters
    b = served("vllm-b.service", "/m/Qwen3-8B")
    assert named("the glm one", [a, b]) == [a] and named("the glm one", [b]) == []
    m = HostModel(servers=[served("vllm-kimi.service", "/models/k/Kimi")])
    select_current(m, "is the kimi server tuned?")  # a single server needs no naming
    assert m.decision == "vllm-kimi.service is the only unit that starts an inference server"


def test_start_limit_after_restarts_is_failed_not_crash_looping() -> None:
    """systemd.unit(5) StartLimitBurst=: once the start limit is hit ("Start request repeated
    too quickly") no restart is scheduled any more and the unit stays failed; before that, a
    rising restart counter is a crash loop."""
    restarts = [J + f"u.service: Scheduled restart job, restart counter is at {n}."
                for n in (4, 5)]
    gave_up = [J + "u.service: Start request repeated too quickly.",
               J + "u.service: Failed with result 'exit-code'."]
    state, why = from_journal(journal_life(journal(*restarts, *gave_up)))
    assert state == "failed" and "repeated too quickly" in why and "5" in why
    assert from_journal(journal_life(journal(*restarts)))[0] == "crash-looping"
