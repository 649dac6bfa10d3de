"""``docker run`` lines (a systemd unit's ExecStart= runs one, most often) read as the Docker
CLI reads them, proved against the real CLI.

The oracle is the installed ``docker`` client talking to a fake daemon on a Unix socket: the
CLI parses the line, reads the env files and sends ``POST /containers/create`` with the image,
the command, the entrypoint and ``Env`` exactly as it would to a real daemon; the fake daemon
records the body and refuses, so nothing runs. Without a ``docker`` client the differential
test skips (said so); the vectors below, written from Docker's reference ("docker container
run": --env, --env-file; docker/cli pkg/kvfile), still run.
"""

from __future__ import annotations

import http.server
import json
import os
import shutil
import socketserver
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from agentkit._hostmodel.runtimes._runline import (
    env_flag,
    final_env,
    parse_env_file,
    run_line,
)

DOCKER = shutil.which("docker")
IMAGE = "vllm/vllm-openai:v0.11.0"


# -- vectors (Docker's documented rules; no CLI needed) -------------------------------------

def test_env_file_lines_are_taken_verbatim() -> None:
    text = "# NCCL for the container\n  NCCL_PROTO=LL \nQ='quoted'\nH=a # not a comment\n" \
           "E=\nFROM_CALLER\nUNSET_HERE\n"
    got, err = parse_env_file(text, {"FROM_CALLER": "v"})
    assert err == ""
    assert [(e.name, e.value) for e in got] == [
        ("NCCL_PROTO", "LL "), ("Q", "'quoted'"), ("H", "a # not a comment"), ("E", ""),
        ("FROM_CALLER", "v")]


def test_env_file_name_with_space_is_an_error() -> None:
    assert parse_env_file("NCCL_PROTO =LL\n", {})[1] == \
        "variable 'NCCL_PROTO ' contains whitespaces"
    assert parse_env_file("=x\n", {})[1].startswith("no variable name")


# docker/cli pkg/kvfile: lines split as bufio.ScanLines does (one trailing \r dropped, the last
# line read without its newline), a UTF-8 BOM dropped from the first line only, Go's
# unicode.IsSpace trimmed from the start (U+001C is no space to Go, though it is to Python).
_FILES = [
    ("A=1", ["A=1"]),
    ("A=1\r\nB=2\r\n", ["A=1", "B=2"]),
    ("\ufeffA=1\n\ufeffB=2\n", ["A=1", "\ufeffB=2"]),
    ("\x1cA=1\n\u00a0\u3000B=2\n", ["\x1cA=1", "B=2"]),
    ("A\tB=1\n", None),
]


@pytest.mark.parametrize(("text", "env"), _FILES)
def test_env_file_lines_as_kvfile_splits_them(text: str, env: list[str] | None) -> None:
    got, error = parse_env_file(text, {})
    assert ([f"{e.name}={e.value}" for e in got] if not error else None) == env
    assert [e.line for e in got] == list(range(1, len(got) + 1))


@pytest.mark.parametrize(("text", "env"), _FILES)
def test_env_file_lines_as_the_cli_splits_them(daemon: tuple[str, _Server], text: str,
                                               env: list[str] | None) -> None:
    scratch, server = daemon
    server.created.clear()
    with open(f"{scratch}/k.env", "w", encoding="utf-8", newline="") as f:
        f.write(text)
    subprocess.run([DOCKER or "docker", "run", "--env-file", f"{scratch}/k.env", IMAGE],
                   capture_output=True, timeout=30, stdin=subprocess.DEVNULL, check=False, env={
                       "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": scratch,
                       "DOCKER_HOST": f"unix://{scratch}/docker.sock"})
    assert (server.created[0].get("Env") if server.created else None) == env


def test_e_flag_wins_over_env_file_and_bare_name_removes() -> None:
    entries, _ = parse_env_file("NCCL_PROTO=Simple\nNCCL_ALGO=Ring\n", {})
    entries += [env_flag("NCCL_PROTO=LL", {}), env_flag("NCCL_ALGO", {})]
    env = final_env(entries)
    assert env["NCCL_PROTO"].value == "LL"
    assert env["NCCL_ALGO"].value is None  # sent bare: the daemon drops it from the image ENV


def test_run_line_options_image_command() -> None:
    line = run_line(["/usr/bin/docker", "run", "--rm", "-it", "--name", "vllm", "-eA=1",
                     "--gpus=all", "-v", "/m:/models:ro", IMAGE, "--model", "/models/x",
                     "-e", "not-an-option-here"])
    assert line is not None and not line.problem
    assert line.image == IMAGE
    assert line.command == ["--model", "/models/x", "-e", "not-an-option-here"]
    assert line.values("env") == ["A=1"] and line.last("name") == "vllm"
    assert run_line(["docker", "ps"]) is None and run_line(["vllm", "serve"]) is None
    assert run_line(["docker", "run", "--frobnicate", IMAGE]).problem  # type: ignore[union-attr]


# -- the real CLI as oracle ---------------------------------------------------------------

class _Daemon(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def address_string(self) -> str:
        return "unix"

    def log_message(self, *args: Any) -> None:
        pass

    def _send(self, code: int, body: bytes) -> None:
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Api-Version", "1.43")
        self.send_header("Ostype", "linux")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_HEAD(self) -> None:
        self._send(200, b"")

    def do_GET(self) -> None:
        self._send(200, b"OK" if "_ping" in self.path else b"{}")

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if "/containers/create" in self.path:
            self.server.created.append(json.loads(body))  # type: ignore[attr-defined]
        self._send(500, b'{"message": "recorded by the test oracle"}')


class _Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True
    created: list[dict[str, Any]]


@pytest.fixture(scope="module")
def daemon() -> Iterator[tuple[str, _Server]]:
    if DOCKER is None:
        pytest.skip("no docker client installed: the CLI oracle cannot run (vectors above ran)")
    scratch = tempfile.mkdtemp(prefix="runline-")
    server = _Server(f"{scratch}/docker.sock", _Daemon)
    server.created = []
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield scratch, server
    server.shutdown()
    shutil.rmtree(scratch, ignore_errors=True)


_NAMES = ["A", "NCCL_PROTO", "NCCL_P2P_LEVEL", "lower.dot", "N-dash"]
_VALUES = st.sampled_from(["LL", "", " spaced ", "'q'", '"dq"', "a#b", "x # c", "$HOME",
                           "a=b", "LL128\\", "é"])
_ENV_LINE = st.one_of(
    st.builds(lambda n, v, lead: f"{lead}{n}={v}", st.sampled_from(_NAMES), _VALUES,
              st.sampled_from(["", "  ", "\t"])),
    st.builds(lambda n, lead: f"{lead}{n}", st.sampled_from(_NAMES), st.sampled_from(["", " "])),
    st.sampled_from(["# comment", "   # indented", "", "   ", "NAME =bad", "=novar",
                     "export A=1", "A B=1"]),
)
_OPTION = st.sampled_from([["-d"], ["-i"], ["--rm"], ["-di"], ["--name", "vllm"],
                           ["--name=x2"], ["--ipc=host"], ["--shm-size", "1g"],
                           ["-v", "/data:/models:ro"], ["--volume=/a:/b"], ["--gpus", "all"],
                           ["--network", "host"], ["-p", "8000:8000"], ["-w", "/w"],
                           ["--entrypoint", "python3"], ["--entrypoint="], ["-u", "1000"],
                           ["--restart=no"], ["--init"], ["--privileged"]])


@st.composite
def _case(draw: Any) -> dict[str, Any]:
    files = draw(st.lists(st.lists(_ENV_LINE, max_size=6), max_size=2))
    crlf = draw(st.booleans())
    flags = draw(st.lists(st.tuples(st.sampled_from(["-e", "--env", "--env=", "-e="]),
                                    st.sampled_from(_NAMES), st.one_of(st.none(), _VALUES)),
                          max_size=4))
    # each option once: the CLI refuses some repeated (`--network host` twice), a check on
    # options this reading does not model (the line's image, command and env are the point)
    options = draw(st.lists(_OPTION, max_size=4, unique_by=lambda o: o[0].split("=")[0]))
    caller = draw(st.dictionaries(st.sampled_from(_NAMES), _VALUES, max_size=3))
    command = draw(st.lists(st.sampled_from(["serve", "/models/x", "--tp", "8", "-e", "A=1",
                                             "--env-file", "x y"]), max_size=5))
    return {"files": files, "crlf": crlf, "flags": flags, "options": options,
            "caller": caller, "command": command}


def _flag_words(kind: str, name: str, value: str | None) -> list[str]:
    text = name if value is None else f"{name}={value}"
    if kind.endswith("="):
        return [f"{kind[:-1]}{text}"] if kind == "-e=" else [f"--env={text}"]
    return [kind, text]


@settings(max_examples=1000, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(case=_case())
def test_docker_run_matches_the_cli(daemon: tuple[str, _Server], case: dict[str, Any]) -> None:
    _matches_the_cli(daemon, case)


# The same check on a fixed sample, not shrunk: the mutation target rt-runline runs this one
# (the 1000 cases above cost minutes per surviving mutant).
@settings(max_examples=60, deadline=None, derandomize=True,
          phases=[Phase.explicit, Phase.generate],
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(case=_case())
def test_a_sample_of_docker_run_lines_matches_the_cli(daemon: tuple[str, _Server],
                                                      case: dict[str, Any]) -> None:
    _matches_the_cli(daemon, case)


def _matches_the_cli(daemon: tuple[str, _Server], case: dict[str, Any]) -> None:
    scratch, server = daemon
    argv = ["docker", "run"]
    texts = []
    for n, lines in enumerate(case["files"]):
        text = ("\r\n" if case["crlf"] else "\n").join(lines) + ("\n" if lines else "")
        path = f"{scratch}/f{n}.env"
        with open(path, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        texts.append(text)
        argv += ["--env-file", path]
    for kind, name, value in case["flags"]:
        argv += _flag_words(kind, name, value)
    for opt in case["options"]:
        argv += opt
    argv += [IMAGE, *case["command"]]
    server.created.clear()
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": scratch,
           "DOCKER_HOST": f"unix://{scratch}/docker.sock", "DOCKER_CLI_HINTS": "false",
           **case["caller"]}
    done = subprocess.run([DOCKER or "docker", *argv[1:]], env=env, capture_output=True,
                          text=True, timeout=30, stdin=subprocess.DEVNULL)
    # ours
    line = run_line(argv)
    assert line is not None and not line.problem, line
    entries, error = [], ""
    for text in texts:
        got, error = parse_env_file(text, case["caller"])
        if error:
            break
        entries += got
    if not error:
        entries += [env_flag(v, case["caller"]) for v in line.values("env")]
    if error:
        assert not server.created, (argv, done.stderr)
        assert "contains whitespaces" in done.stderr or "no variable name" in done.stderr
        return
    assert server.created, (argv, done.stderr)
    body = server.created[0]
    sent = body.get("Env") or []
    from_files = [e.name if e.value is None else f"{e.name}={e.value}" for e in entries
                  if e.line]
    # The CLI sends the env-file lines first, in order; the -e values go through a map
    # (run.go: ConvertKVStringsToMapWithNil), so their order is Go's map order, one per name.
    assert sent[: len(from_files)] == from_files, (argv, texts)
    theirs = {k: (v if eq else None) for k, eq, v in (x.partition("=") for x in sent)}
    assert theirs == {k: e.value for k, e in final_env(entries).items()}, (argv, texts)
    assert body["Image"] == line.image
    assert (body.get("Cmd") or []) == line.command
    want_ep = None if line.entrypoint is None else (line.entrypoint or [""])
    assert body.get("Entrypoint") == want_ep


# (words before the image, with SOCK for the oracle's socket; the env the line sends; the
# container's command). docker --help: -D/--debug, -l/--log-level, -H/--host, --config,
# --tls* are the CLI's own options before `run`; `docker container run` is `docker run`.
# pflag: booleans combine (-itd), a value option takes the rest of its word (-eA=1, -e=A=1)
# or else the next word; `--` ends the options.
_LINES = [
    (["--debug", "run"], [], ["/m"]),
    (["-D", "container", "run"], [], ["/m"]),
    (["--log-level", "warn", "--debug", "run", "-i"], [], ["/m"]),
    (["--log-level=warn", "-l", "info", "-lwarn", "run"], [], ["/m"]),
    (["-H", "SOCK", "run"], [], ["/m"]),
    (["--host=SOCK", "run", "-d"], [], ["/m"]),
    (["-HSOCK", "run"], [], ["/m"]),
    (["run", "-itd", "-eA=1", "-e=B=2", "-ie", "C=3", "-tieD=4"], ["A=1", "B=2", "C=3", "D=4"],
     ["/m"]),
    (["run", "-u1000", "-w", "/w", "-e", "A", "--"], ["A"], ["/m"]),
    (["run", "--env", "A=1", "--env=B=2", "--rm=false"], ["A=1", "B=2"], ["/m"]),
]


@pytest.mark.parametrize(("before", "env", "command"), _LINES)
def test_options_before_the_image(before: list[str], env: list[str], command: list[str]
                                  ) -> None:
    line = run_line(["docker", *[w.replace("SOCK", "unix:///s") for w in before], IMAGE,
                     *command])
    assert line is not None and not line.problem, line
    assert (line.image, line.command, line.values("env")) == (IMAGE, command, env)


@pytest.mark.parametrize(("before", "env", "command"), _LINES)
def test_options_before_the_image_as_the_cli_reads_them(
        daemon: tuple[str, _Server], before: list[str], env: list[str], command: list[str]
        ) -> None:
    scratch, server = daemon
    server.created.clear()
    words = [w.replace("SOCK", f"unix://{scratch}/docker.sock") for w in before]
    done = subprocess.run([DOCKER or "docker", *words, IMAGE, *command], capture_output=True,
                          text=True, timeout=30, stdin=subprocess.DEVNULL, env={
                              "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": scratch,
                              "DOCKER_HOST": f"unix://{scratch}/docker.sock"})
    assert server.created, done.stderr
    body = server.created[0]
    assert (body["Image"], body.get("Cmd") or [], sorted(body.get("Env") or [])) == (
        IMAGE, command, env)


def test_a_short_global_option_takes_the_rest_of_its_word() -> None:
    """pflag: ``-lw`` is ``-l w`` (the CLI then refuses the level ``w`` when it starts, which
    is no part of reading the line)."""
    line = run_line(["docker", "-lw", "run", IMAGE, "x"])
    assert line is not None and (line.image, line.command) == (IMAGE, ["x"])


@pytest.mark.parametrize(("argv", "problem"), [
    (["docker", "run", "-e"], "-e has no value"),
    (["docker", "run", "--name"], "--name has no value"),
    (["docker", "run", "-x", IMAGE], "option -x is not one this reading knows"),
    (["docker", "run", "-ix", IMAGE], "option -x is not one this reading knows"),
    (["docker", "run", "--rm"], "no image after the options"),
    (["docker", "run", "--name", "x"], "no image after the options"),
    (["docker", "run", "-e", "A=1"], "no image after the options"),
    (["docker", "run", "--rm=yes", "--frob", IMAGE], "--rm=yes is no boolean the CLI reads "
     "(it refuses the line)"),
    (["docker", "run"], "no image after the options"),
])
def test_lines_the_cli_refuses_are_not_understood(argv: list[str], problem: str) -> None:
    line = run_line(argv)
    assert line is not None and line.problem == problem
    assert (line.image, line.command) == ("", [])


@pytest.mark.parametrize("argv", [
    ["docker", "--frob", "run", IMAGE], ["docker", "-x", "run", IMAGE], ["docker", "ps"],
    ["docker", "container", "ls"], ["docker"], ["docker", "--debug"], ["/usr/bin/dockerd"],
    [], ["nerdctl", "run", IMAGE], ["docker", "--log-level"], ["docker", "--Xdebug", "run", IMAGE],
    ["docker", "--frob", "x", "run", IMAGE], ["docker", "-x", "y", "run", IMAGE]])
def test_no_run_line(argv: list[str]) -> None:
    assert run_line(argv) is None


# Go's strconv.ParseBool (pflag reads `--rm=VALUE` with it): these twelve, any other refused
_GO_BOOLS = {**dict.fromkeys(["1", "t", "T", "TRUE", "true", "True"], True),
             **dict.fromkeys(["0", "f", "F", "FALSE", "false", "False"], False)}
_NOT_BOOLS = ["yes", "no", "fAlSe", "tRUE", "", "2", "on"]


def test_a_boolean_options_value_is_read_as_go_reads_it() -> None:
    for value, want in _GO_BOOLS.items():
        line = run_line(["podman", "run", f"--env-host={value}", f"--detach={value}", IMAGE])
        assert line is not None and not line.problem
        assert (line.flag("env-host"), line.flag("detach")) == (want, want), value
    for value in _NOT_BOOLS:
        line = run_line(["docker", "run", f"--rm={value}", IMAGE])
        assert line is not None and line.problem == \
            f"--rm={value} is no boolean the CLI reads (it refuses the line)"
    line = run_line(["docker", "run", "--rm", IMAGE])
    assert line is not None and line.flag("rm") and not line.flag("detach")


def test_boolean_values_match_the_cli(daemon: tuple[str, _Server]) -> None:
    scratch, server = daemon
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": scratch,
           "DOCKER_HOST": f"unix://{scratch}/docker.sock", "DOCKER_CLI_HINTS": "false"}
    for value in [*_GO_BOOLS, *_NOT_BOOLS]:
        server.created.clear()
        subprocess.run([DOCKER or "docker", "run", f"--rm={value}", IMAGE], env=env,
                       capture_output=True, timeout=30, stdin=subprocess.DEVNULL, check=False)
        line = run_line(["docker", "run", f"--rm={value}", IMAGE])
        assert line is not None
        if not server.created:  # the CLI refused the value
            assert line.problem, value
            continue
        assert not line.problem and server.created[0]["HostConfig"]["AutoRemove"] == \
            line.flag("rm"), value


def test_compose_up_lines_name_their_files() -> None:
    """`docker compose` reads -f files (relative to the working directory), else the first of
    compose.yaml, compose.yml, docker-compose.yaml, docker-compose.yml in the project
    directory (Compose reference, "docker compose" -f and --project-directory)."""
    from agentkit._hostmodel.runtimes._runline import compose_files

    assert compose_files(["/usr/bin/docker", "compose", "-f", "a.yml", "--file=/x/b.yml", "up",
                          "-d"], "/srv/app") == ["/srv/app/a.yml", "/x/b.yml"]
    assert compose_files(["docker-compose", "--project-directory", "/etc/llm", "up"], "/") == [
        "/etc/llm/compose.yaml", "/etc/llm/compose.yml", "/etc/llm/docker-compose.yaml",
        "/etc/llm/docker-compose.yml"]
    assert compose_files(["docker", "compose", "-p", "x", "up"], "/opt/a")[0] == \
        "/opt/a/compose.yaml"  # type: ignore[index]
    assert compose_files(["docker", "compose", "down"], "/") is None
    assert compose_files(["docker", "run", "img"], "/") is None


_DEFAULTS = ("compose.yaml", "compose.yml", "docker-compose.yaml", "docker-compose.yml")


@pytest.mark.parametrize(("argv", "workdir", "files"), [
    # options Compose takes before the subcommand: without a value, or with one (either form)
    (["docker", "compose", "--verbose", "--dry-run", "-p", "x", "--file", "a.yml", "up"],
     "/srv", ["/srv/a.yml"]),
    (["docker", "compose", "--verbose", "-f", "a.yml", "--project-name=x", "up"], "/srv",
     ["/srv/a.yml"]),
    (["/usr/local/bin/docker-compose", "--project-directory=/p", "up", "-d"], "/srv",
     [f"/p/{n}" for n in _DEFAULTS]),
    (["podman", "compose", "up"], "/srv", [f"/srv/{n}" for n in _DEFAULTS]),
    # a relative project directory or file is read from the working directory (the CLI's)
    (["docker", "compose", "--project-directory", "app", "up"], "/", [f"/app/{n}"
                                                                      for n in _DEFAULTS]),
    (["docker", "compose", "--project-directory", "app", "up"], "/srv/",
     [f"/srv/app/{n}" for n in _DEFAULTS]),
    (["docker", "compose", "-f", "a.yml", "-f", "../b.yml", "up"], "/srv/app/",
     ["/srv/app/a.yml", "/srv/b.yml"]),
    (["docker", "compose", "up"], "/", [f"/{n}" for n in _DEFAULTS]),
    # -f is from the working directory even with --project-directory (compose-go #145, #147)
    (["docker", "compose", "--project-directory", "/p", "-f", "a.yml", "up"], "/srv",
     ["/srv/a.yml"]),
    # no `up`: no Compose project is started
    (["docker", "compose", "--verbose"], "/", None),
    (["docker", "compose", "-f"], "/", None),
    (["docker", "compose", "-f", "a.yml"], "/", None),
    (["docker", "compose"], "/", None),
    (["echo", "compose", "up"], "/", None),
    ([], "/", None),
])
def test_compose_files_as_compose_reads_its_options(argv: list[str], workdir: str,
                                                    files: list[str] | None) -> None:
    """Compose reference ("docker compose"): -f/--file (repeatable), -p/--project-name,
    --project-directory, --env-file, --profile take a value, as ``--opt value`` or
    ``--opt=value``; relative paths are from the working directory."""
    from agentkit._hostmodel.runtimes._runline import compose_files

    assert compose_files(argv, workdir) == files


def test_units_running_containers(tmp_path: Path) -> None:
    """A redis container is no server; a line with an option this reading does not know is
    said, not guessed; a relative --env-file is opened from the unit's WorkingDirectory= (the
    CLI's working directory)."""
    from agentkit import Host

    from .test_runtimes_live import investigate

    units = tmp_path / "host/etc/systemd/system"
    units.mkdir(parents=True)
    (units / "redis.service").write_text(
        "[Service]\nExecStart=/usr/bin/docker run --rm --name redis redis:7\n")
    (units / "odd.service").write_text(
        "[Service]\nExecStart=/usr/bin/docker run --frobnicate x " + IMAGE + " /m\n")
    (units / "vllm.service").write_text(
        "[Service]\nWorkingDirectory=/srv/llm\nExecStart=/usr/bin/docker run --rm "
        "--env-file nccl.env " + IMAGE + " /models/m --tensor-parallel-size 2\n")
    (tmp_path / "host/srv/llm").mkdir(parents=True)
    (tmp_path / "host/srv/llm/nccl.env").write_text("NCCL_PROTO=LL\n")
    out = investigate(Host.at(tmp_path / "host"), "Is NCCL tuned?", ["service-unit", "nccl-env"])
    host = out.results["service-unit"].facts["host"].value
    assert [s["name"] for s in host["servers"]] == ["vllm.service"]
    assert any("odd.service" in p and "--frobnicate" in p for p in host["problems"])
    rows = out.results["nccl-env"].facts["nccl_tuning"].value
    assert {r["name"]: (r["value"], r["where"]) for r in rows} == {
        "NCCL_PROTO": ("LL", "/srv/llm/nccl.env:1")}
