"""Ask the authority first: ``systemctl show`` / ``systemctl show-environment`` parsed as systemd
prints them, allowed in fixed shapes, redacted, captured by ``agentkit snapshot``, and used by
the host model before the files (the process environment before both).

Expected values come from systemd's source, written before running:
- src/basic/escape.c ``shell_maybe_quote``: an element is left bare unless it holds whitespace,
  a control character, invalid UTF-8 or one of ``"\\`$*?['()<>|&;!``; then it is double-quoted
  with ``"\\`$`` backslash-escaped and control bytes C-escaped; the POSIX form (show-environment)
  is ``$'…'`` escaping ``\\`` and ``'``. The vectors below are test-escape.c's
  ``TEST(shell_maybe_quote)``, ported as data.
- src/shared/bus-print-properties.c: a string array is its elements, each so quoted, joined by
  one space; src/systemctl/systemctl-show.c: ``EnvironmentFiles=PATH (ignore_errors=yes)``,
  ``ExecStart={ path=… ; argv[]=… ; ignore_errors=… ; start_time=[…] ; stop_time=[…] ; pid=… ;
  code=… ; status=… }`` with argv joined by spaces, unquoted.
- systemd.exec(5): the manager's environment comes first, every unit setting wins over it; a
  running process keeps the environment it was started with (daemon-reload changes nothing in
  it); a drop-in is read only at daemon-reload.

A real ``systemctl show`` needs a running service manager, which may not be started here (its
boot clean-up empties /tmp): the differential test against systemd itself is not possible on
this machine, so the vectors and the round trip below stand for it.
"""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentkit import Host, Sandbox
from agentkit._hostmodel._model import Server, Setting
from agentkit._hostmodel.runtimes._systemctl_show import (
    SHOW_ENVIRONMENT,
    parse_show,
    parse_show_environment,
    show_argv,
    split_strv,
    unquote_posix,
)
from agentkit._sandbox._paths import Root
from agentkit._sandbox._programs import Refused, check

from .scenarios import runner

# (value, printed by shell_maybe_quote(value, 0), printed with SHELL_ESCAPE_POSIX)
VECTORS = [
    ("\\", '"\\\\"', "$'\\\\'"),
    ('"', '"\\""', "$'\"'"),
    ("foobar", "foobar", "foobar"),
    ("foo bar", '"foo bar"', "$'foo bar'"),
    ("foo\tbar", '"foo\\tbar"', "$'foo\\tbar'"),
    ("foo\nbar", '"foo\\nbar"', "$'foo\\nbar'"),
    ('foo "bar" waldo', '"foo \\"bar\\" waldo"', "$'foo \"bar\" waldo'"),
    ("foo$bar", '"foo\\$bar"', "$'foo$bar'"),
    ("foo!bar", '"foo!bar"', "$'foo!bar'"),
    ("a\nb\001", '"a\\nb\\001"', "$'a\\nb\\001'"),
    ("głąb", "głąb", "głąb"),
    ("głąb\002\003", '"głąb\\002\\003"', "$'głąb\\002\\003'"),
    ("głąb\002\003rząd", '"głąb\\002\\003rząd"', "$'głąb\\002\\003rząd'"),
]


@pytest.mark.parametrize(("value", "printed", "posix"), VECTORS)
def test_systemd_quoting_vectors_read_back(value: str, printed: str, posix: str) -> None:
    assert split_strv(printed) == [value]
    assert unquote_posix(posix) == value


def test_older_systemd_kept_a_tab_raw_inside_the_quotes() -> None:
    # systemd before the C-escaping of control characters: test-escape.c then expected
    # "\"foo\tbar\"" (a raw tab)
    assert split_strv('"foo\tbar"') == ["foo\tbar"]


def test_invalid_utf8_bytes_come_back_as_replacement_characters() -> None:
    assert split_strv('"\\250\\350"') == ["\ufffd\ufffd"]


# The encoder the test compares against, written from escape.c (flags 0): the parser must
# read back whatever systemd can print.
_NEED_QUOTES = set(' \t\n\r"\\`$*?[\'()<>|&;!')


def _systemd_quote(s: str) -> str:
    if not any(c in _NEED_QUOTES or ord(c) < 32 or ord(c) == 127 for c in s):
        return s
    out = []
    for c in s:
        if c in '"\\`$':
            out.append("\\" + c)
        elif c in "\a\b\f\n\r\t\v":
            out.append("\\" + "abfnrtv"["\a\b\f\n\r\t\v".index(c)])
        elif ord(c) < 32 or ord(c) == 127:
            out.append(f"\\{ord(c):03o}")
        else:
            out.append(c)
    return '"' + "".join(out) + '"'


_ELEMENT = st.text(alphabet=st.characters(min_codepoint=1, max_codepoint=0x2FF), min_size=1,
                   max_size=20)


@settings(max_examples=1000, deadline=None)
@given(st.lists(st.tuples(st.from_regex(r"[A-Z_][A-Z0-9_]{0,8}", fullmatch=True), _ELEMENT),
                max_size=6))
def test_environment_round_trip(pairs: list[tuple[str, str]]) -> None:
    line = "Environment=" + " ".join(_systemd_quote(f"{k}={v}") for k, v in pairs)
    shown = parse_show("x.service", line)
    assert not shown.problems
    assert shown.environment == pairs


def test_a_full_show_output() -> None:
    text = "\n".join([
        "MainPID=4242",
        "ExecMainStartTimestamp=Tue 2026-12-01 09:12:33 UTC",
        "ExecStart={ path=/bin/bash ; argv[]=/bin/bash -c exec vllm serve /m ; --port 1 ; "
        "ignore_errors=no ; start_time=[Tue 2026-12-01 09:12:33 UTC] ; stop_time=[n/a] ; "
        "pid=4242 ; code=(null) ; status=0/0 }",
        'Environment=NCCL_PROTO=LL "MSG=two words" "P=\\$HOME/x"',
        "EnvironmentFiles=/etc/default/vllm (ignore_errors=yes)",
        "EnvironmentFiles=/etc/vllm/env.d/a b.env (ignore_errors=no)",
        "UnsetEnvironment=NCCL_ALGO NCCL_DEBUG=INFO",
        "User=vllm",
        "ActiveState=active",
        "SubState=running",
        "FragmentPath=/etc/systemd/system/vllm.service",
        "DropInPaths=/usr/lib/systemd/system/vllm.service.d/50-a.conf "
        "/etc/systemd/system/vllm.service.d/override.conf",
    ])
    s = parse_show("vllm.service", text)
    assert not s.problems
    assert s.environment == [("NCCL_PROTO", "LL"), ("MSG", "two words"), ("P", "$HOME/x")]
    assert s.environment_files == [("/etc/default/vllm", True),
                                   ("/etc/vllm/env.d/a b.env", False)]
    assert s.unset == ["NCCL_ALGO", "NCCL_DEBUG=INFO"]
    assert s.dropins == ["/usr/lib/systemd/system/vllm.service.d/50-a.conf",
                         "/etc/systemd/system/vllm.service.d/override.conf"]
    (cmd,) = s.exec_start
    assert cmd.path == "/bin/bash" and cmd.pid == 4242
    assert cmd.argv_text == "/bin/bash -c exec vllm serve /m ; --port 1"  # " ; " inside argv
    assert (s.main_pid, s.user, s.active, s.sub) == (4242, "vllm", "active", "running")
    assert s.started == "Tue 2026-12-01 09:12:33 UTC"


def test_empty_properties_as_printed_with_p() -> None:
    s = parse_show("x.service", "Environment=\nDropInPaths=\nMainPID=0\n"
                                "ExecMainStartTimestamp=\nExecStart=\n")
    assert not s.problems and s.environment == [] and s.dropins == [] and s.started == ""
    assert "DropInPaths" in s.lines  # asked and empty: no drop-ins, not "unknown"


@pytest.mark.parametrize("line", [
    "Environment=FOO=bar [unprintable]",  # systemd < v247: a value with a space
    'Environment="FOO=unterminated',
    'Environment="FOO=a\\qb"',
    "Environment=NOEQUALS",
    "ExecStart={ path=/x ; something else }",
    "EnvironmentFiles=/etc/x",
])
def test_what_cannot_be_read_back_is_named_with_its_line(line: str) -> None:
    s = parse_show("x.service", "MainPID=1\n" + line)
    assert s.problems and "line 2" in s.problems[0]


def test_show_environment_posix_form() -> None:
    env, problems = parse_show_environment(
        "LANG=C.UTF-8\nNCCL_IB_DISABLE=1\nMOTD=$'hello world\\n'\nbad line\n")
    assert env == {"LANG": "C.UTF-8", "NCCL_IB_DISABLE": "1", "MOTD": "hello world\n"}
    assert problems == ["line 4: not NAME=value"]


def test_the_fixed_shapes_are_allowed_and_nothing_around_them() -> None:
    assert check(show_argv("vllm-kimi.service")).argv[:3] == ["systemctl", "--no-pager", "show"]
    assert check(SHOW_ENVIRONMENT).argv == ["systemctl", "--no-pager", "show-environment"]
    assert check(["crictl", "inspect", "0123abcd"]).argv == ["crictl", "inspect", "0123abcd"]
    assert check(["crictl", "ps", "-a", "-o", "json"]).argv[1] == "ps"
    for argv in (["systemctl", "show-environment", "x"], ["systemctl", "show-environment",
                                                         "--all"],
                 ["crictl", "exec", "abc", "sh"], ["crictl", "-r", "unix:///x.sock", "ps"],
                 ["crictl", "inspect", "-o", "yaml", "abc"], ["crictl", "rm", "abc"],
                 ["crictl", "logs", "-f", "abc"], ["crictl", "inspect", "../x"]):
        with pytest.raises(Refused):
            check(argv)


def _snapshot_with(tmp_path: Path, captures: dict[str, list[str]]) -> Host:
    root = tmp_path / "snap"
    (root / ".agentkit/commands").mkdir(parents=True)
    commands = []
    for n, (text, argv) in enumerate(captures.items()):
        (root / f".agentkit/commands/{n}.txt").write_text(text)
        commands.append({"argv": argv, "stdout": f"commands/{n}.txt", "exit_code": 0})
    (root / ".agentkit/snapshot.json").write_text(json.dumps(
        {"format": "agentkit-snapshot", "version": 1, "commands": commands}))
    return Host.at(root)


def test_secrets_in_environment_are_redacted_and_nccl_kept(tmp_path: Path) -> None:
    token = "hf_abcdefghijklmnopqrstuvwxyz0123456789"
    show = (f'Environment=HF_TOKEN={token} NCCL_PROTO=LL "VLLM_API_KEY=sk-live 12345abcdef"\n'
            "MainPID=4242\n")
    host = _snapshot_with(tmp_path, {show: show_argv("vllm.service"),
                                     f"HF_TOKEN={token}\nNCCL_ALGO=Ring\n": SHOW_ENVIRONMENT})
    box = Sandbox(host, task_id="t")
    got = anyio.run(box.call, "run_command", {"argv": show_argv("vllm.service")})
    assert got.ok, got.error
    out = got.data["stdout"]
    assert token not in out and "sk-live" not in out and "12345abcdef" not in out
    shown = parse_show("vllm.service", out)
    assert ("NCCL_PROTO", "LL") in shown.environment and not shown.problems
    env = anyio.run(box.call, "run_command", {"argv": SHOW_ENVIRONMENT}).data["stdout"]
    assert token not in env and parse_show_environment(env)[0]["NCCL_ALGO"] == "Ring"


def test_a_live_show_environment_is_redacted(tmp_path: Path) -> None:
    """A fake systemctl in a trusted directory (as the docker tests do): the live path runs it
    for real, under the same rules, and its output is redacted."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    fake = bindir / "systemctl"
    fake.write_text("#!/bin/sh\n"
                    '[ "$*" = "--no-pager show-environment" ] || { echo "unexpected: $*" >&2; '
                    "exit 2; }\n"
                    "echo HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz0123456789\n"
                    "echo NCCL_PROTO=LL\n")
    fake.chmod(0o755)
    from agentkit._sandbox._host import TRUSTED_BIN_DIRS

    host = Host(root=Root("/", allow=(str(tmp_path),)), command_timeout_s=10.0,
                trusted_bin_dirs=(str(bindir), *TRUSTED_BIN_DIRS))
    got = anyio.run(Sandbox(host, task_id="t").call, "run_command", {"argv": SHOW_ENVIRONMENT})
    assert got.ok, got.error
    assert "hf_abcdefghij" not in got.data["stdout"]
    assert "NCCL_PROTO=LL" in got.data["stdout"]


def _variant(name: str, tmp_path: Path, **changes: object) -> runner.Outcome:
    sc = runner.load(name)
    spec = {**sc.spec, **changes}
    root = runner.build(runner.Scenario(name, spec), tmp_path)
    return runner.investigate(root, sc.question, ["service-unit", "nccl-env"])


def test_the_process_is_bound_by_mainpid_and_its_environment_named(tmp_path: Path) -> None:
    """The process capture does not say which unit started it (its cgroup unreadable): the
    manager's MainPID does, and the answer names what differs from the files, and why."""
    sc = runner.load("a-process-env-dropin-after-start")
    procs = [{**p, "started_by": {}} for p in sc.spec["processes"]]
    out = _variant(sc.name, tmp_path, processes=procs)
    host = out.results["service-unit"].facts["host"].value
    assert [s["name"] for s in host["servers"]] == ["vllm-kimi.service"]  # no "pid 2211"
    facts = out.results["nccl-env"].facts
    tuning = {r["name"]: (r["value"], r["where"]) for r in facts["nccl_tuning"].value}
    assert tuning["NCCL_PROTO"] == ("LL", "process 2211 environment")
    assert tuning["NCCL_IB_DISABLE"] == ("1", "systemctl show-environment")
    drift = " ".join(facts["nccl_running_differs"].value)
    assert ("NCCL_PROTO=LL (process 2211's environment); the unit files say Simple "
            "(/etc/systemd/system/vllm-kimi.service.d/20-nccl.conf:2): changed since the last "
            "restart (started Fri 2026-11-20 13:54:58 UTC)") in drift
    assert "NCCL_ALGO=Ring (process 2211's environment); the unit files do not set it: set " \
           "somewhere the files do not show" in drift
    assert not facts["unit_loaded_differs"].value  # the drop-in was loaded: DropInPaths has it


def test_dropins_loaded_and_on_disk_are_compared(tmp_path: Path) -> None:
    out = _variant("a-dropin-not-loaded-runtime-override", tmp_path)
    facts = out.results["nccl-env"].facts
    differs = facts["unit_loaded_differs"].value
    loaded_only = [d for d in differs if d.startswith("the manager loaded drop-in")]
    on_disk_only = [d for d in differs if d.startswith("drop-in ")]
    assert len(loaded_only) == 1 and "/run/systemd/system/vllm-kimi.service.d/override.conf" \
        in loaded_only[0]
    assert len(on_disk_only) == 1 and "/etc/systemd/system/vllm-kimi.service.d/30-nccl.conf" \
        in on_disk_only[0]
    assert not any("10-limits.conf" in d for d in differs)  # both sides show it
    tuning = {r["name"]: r["value"] for r in facts["nccl_tuning"].value}
    assert tuning == {"NCCL_PROTO": "LL", "NCCL_P2P_LEVEL": "SYS", "NCCL_ALGO": "Ring"}


def test_without_the_authority_the_files_alone_answer(tmp_path: Path) -> None:
    sc = runner.load("a-dropin-not-loaded-runtime-override")
    out = _variant(sc.name, tmp_path, commands=[])
    facts = out.results["nccl-env"].facts
    assert not facts["unit_loaded_differs"].value
    tuning = {r["name"]: r["value"] for r in facts["nccl_tuning"].value}
    assert tuning["NCCL_PROTO"] == "LL128"  # what the files say, nothing says otherwise
    notes = " ".join(out.results["service-unit"].facts["unit"].value["notes"])
    assert "no `systemctl show` here" in notes


def test_a_snapshot_carries_the_authority(tmp_path: Path) -> None:
    """`agentkit snapshot` records every command the investigations ran: taken from a host
    that answers `systemctl show`, it carries them (and the process capture) for offline use."""
    from agentkit._snapshot import take_snapshot

    sc = runner.load("a-process-env-dropin-after-start")
    src = runner.build(sc, tmp_path / "src")
    snap = tmp_path / "snap"
    anyio.run(take_snapshot, Host.at(src), snap)
    manifest = json.loads((snap / ".agentkit/snapshot.json").read_text())
    argvs = [c["argv"] for c in manifest["commands"]]
    assert show_argv("vllm-kimi.service") in argvs and SHOW_ENVIRONMENT in argvs
    assert manifest["processes"] == "processes.json"
    again = runner.investigate(snap, sc.question, ["service-unit", "nccl-env"])
    drift = again.results["nccl-env"].facts["nccl_running_differs"].value
    assert any("changed since the last restart" in d for d in drift)


def test_crictl_inspect_environment_is_redacted_in_both_forms(tmp_path: Path) -> None:
    """crictl inspect prints a container's environment twice: the OCI spec's "K=V" strings and
    the CRI config's KeyValue objects ({"key": K, "value": V}, cri-api's ContainerConfig.envs).
    Both hide a credential and keep NCCL tuning."""
    inspect = json.dumps({"status": {"id": "0123abcd"}, "info": {
        "config": {"envs": [{"key": "HF_TOKEN", "value": "plainvalue123"},
                            {"key": "VLLM_API_KEY", "value": "abcdef0123456789xyz"},
                            {"key": "NCCL_PROTO", "value": "LL"}]},
        "runtimeSpec": {"process": {"env": ["HF_TOKEN=plainvalue123", "NCCL_PROTO=LL"]}}}},
        indent=2)
    argv = ["crictl", "inspect", "0123abcd"]
    host = _snapshot_with(tmp_path, {inspect: argv})
    got = anyio.run(Sandbox(host, task_id="t").call, "run_command", {"argv": argv})
    assert got.ok, got.error
    out = got.data["stdout"]
    assert "plainvalue123" not in out and "abcdef0123456789xyz" not in out
    data = json.loads(out)
    assert {"key": "NCCL_PROTO", "value": "LL"} in data["info"]["config"]["envs"]
    assert "NCCL_PROTO=LL" in data["info"]["runtimeSpec"]["process"]["env"]


@pytest.mark.parametrize(("printed", "secret_parts"), [
    # systemd quotes an element holding quotes: the tail after an escaped quote is the secret's
    ('Environment="SECRET=a \\"b\\" tail-word" NCCL_PROTO=LL', ["tail-word"]),
    ('Environment="MYSQL_PWD=two words" NCCL_PROTO=LL', ["two words"]),
    ("Environment=HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz0123 NCCL_PROTO=LL", ["hf_abcdefghij"]),
    ('Environment="API_KEY=x\\$y9" NCCL_PROTO=LL', ["x\\$y9", "x$y9"]),
])
def test_show_environment_lines_are_redacted_per_variable(tmp_path: Path, printed: str,
                                                         secret_parts: list[str]) -> None:
    host = _snapshot_with(tmp_path, {printed + "\n": show_argv("vllm.service")})
    got = anyio.run(Sandbox(host, task_id="t").call, "run_command",
                    {"argv": show_argv("vllm.service")})
    out = got.data["stdout"]
    assert not any(p in out for p in secret_parts), out
    shown = parse_show("vllm.service", out)
    assert not shown.problems and shown.env_map["NCCL_PROTO"] == "LL"


def test_an_environment_line_that_cannot_be_read_back_is_withheld(tmp_path: Path) -> None:
    host = _snapshot_with(tmp_path, {'Environment="SECRET=unterminated NCCL_PROTO=LL\n':
                                     show_argv("vllm.service")})
    out = anyio.run(Sandbox(host, task_id="t").call, "run_command",
                    {"argv": show_argv("vllm.service")}).data["stdout"]
    assert "unterminated" not in out
    assert parse_show("vllm.service", out).problems  # said, not guessed


def test_quote_is_systemds_on_its_own_vectors() -> None:
    from agentkit._sandbox._systemd_quote import quote

    for value, printed, posix in VECTORS:
        assert quote(value) == printed and quote(value, posix=True) == posix


# NCCL's own variable names (every one its runtime reads, extracted from its source into
# nccl_params.json): a made-up NCCL_PW or NCCL_X_TOKEN is a secret's name by the redactor's
# key rule, and no NCCL variable is named so
_NCCL_PARAMS = json.loads((Path(__file__).parents[1] / "agentkit" / "_hostmodel"
                           / "nccl_params.json").read_text())
_NCCL_NAMES = sorted({*_NCCL_PARAMS["variables"], *_NCCL_PARAMS["no_longer_read"]})


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(_NCCL_NAMES),
                          # not a value that starts as a short flag (-kV): the generic
                          # password-flag rule withholds `-k000000Aa` by design (below)
                          st.from_regex(r"(?!-[A-Za-z])[A-Za-z0-9^,. _-]{0,12}",
                                        fullmatch=True)),
                min_size=1, max_size=5),
       st.sampled_from(["HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz0123", 'PASSWORD=a "b" c',
                        "MY_SECRET=x$y z"]))
def test_redaction_keeps_every_nccl_variable(pairs: list[tuple[str, str]], secret: str) -> None:
    from agentkit._sandbox._redact import redact
    from agentkit._sandbox._systemd_quote import quote, redact_systemctl

    items = [f"{k}={v}" for k, v in pairs]
    line = "Environment=" + " ".join(quote(i) for i in [*items[:1], secret, *items[1:]])
    out = redact(redact_systemctl(show_argv("u.service"), line + "\n", redact))
    shown = parse_show("u.service", out)
    assert not shown.problems
    assert {k: v for k, v in shown.environment if k.startswith("NCCL_")} == dict(pairs)
    assert secret.split("=", 1)[1] not in out


def test_a_value_that_starts_as_a_password_flag_is_withheld_by_design() -> None:
    # The trade-off the property above leaves out, stated: `-k`/`-p` with an attached value
    # that can only be a credential (8+ characters mixing cases and digits) is withheld
    # wherever it stands, an assignment's value included (OPTS=-pS3cretPass1 is a password
    # on a MySQL-style command line); no NCCL variable documents a value of that shape.
    from agentkit._sandbox._redact import redact

    assert redact("Environment=NCCL_X=-k000000Aa") == "Environment=NCCL_X=-k[REDACTED:secret]"
    assert redact("Environment=NCCL_X=-1 NCCL_Y=^lo,docker0") == (
        "Environment=NCCL_X=-1 NCCL_Y=^lo,docker0")


def test_an_environment_file_in_a_d_directory_is_not_taken_for_a_drop_in() -> None:
    from agentkit._hostmodel._authority import _dropin_differences

    s = Server(name="x.service", path="/etc/systemd/system/x.service",
               files=["/etc/systemd/system/x.service", "/etc/vllm/env.d/nccl.conf",
                      "/usr/lib/systemd/system/service.d/10-all.conf",
                      "/etc/systemd/system/x.service.d/10.conf"],
               argv=[], argv_source="", argv_line=0, argv_evidence=[], env={})
    shown = parse_show("x.service", "DropInPaths=/usr/lib/systemd/system/service.d/10-all.conf "
                                    "/etc/systemd/system/x.service.d/10.conf")
    assert _dropin_differences(s, shown) == []


def _server_with(env: dict[str, str], removed: dict[str, str] | None = None) -> Server:
    unit = "/etc/systemd/system/x.service"
    s = Server(name="x.service", path=unit, files=[unit], argv=[], argv_source=unit,
               argv_line=0, argv_evidence=[],
               env={k: Setting(k, v, unit, 3, ["e"], origin="unit") for k, v in env.items()})
    for k, v in (removed or {}).items():
        s.removed[k] = Setting(k, v, unit + ".d/90.conf", 2, ["e"], origin="UnsetEnvironment")
    return s


def test_a_running_unit_has_the_unset_the_manager_loaded_not_the_files() -> None:
    """systemd.exec(5): UnsetEnvironment= is applied at exec from the loaded configuration.
    A drop-in's UnsetEnvironment= not yet loaded removes nothing from the running server; a
    loaded one the files do not show does."""
    from agentkit._hostmodel._authority import _loaded_in_effect

    s = _server_with({"NCCL_P2P_LEVEL": "SYS"}, removed={"NCCL_PROTO": "LL"})
    shown = parse_show("x.service", "Environment=NCCL_PROTO=LL NCCL_P2P_LEVEL=SYS\n"
                                    "UnsetEnvironment=NCCL_P2P_LEVEL\nActiveState=active")
    _loaded_in_effect(s, shown, "ev")
    assert {k: v.value for k, v in s.env.items()} == {"NCCL_PROTO": "LL"}
    assert not s.removed
    said = " ".join(s.loaded_differs)
    assert "UnsetEnvironment=NCCL_PROTO" in said and "NCCL_P2P_LEVEL=SYS is removed" in said
