"""A systemd unit whose ExecStart= is ``docker run …`` / ``podman run …`` (``_rununit.py``),
called directly on a small snapshot: the unit becomes the container it starts.

Expected values come from the tools' documentation, written before running:
- docker container run (Docker reference): ``--env-file`` lines first, then ``-e`` (an ``-e``
  wins); ``-e NAME`` alone takes the CLI's own value, and the daemon removes NAME from the
  image's ENV when the CLI has none; an env file is not shell-parsed (quotes are kept);
  ``--entrypoint`` replaces the image's ENTRYPOINT (``--entrypoint=""`` clears it) and the
  words after the image are its arguments; ``-v /host:/ctr[:opts]`` is a bind mount (a first
  part that is no absolute path names a volume); ``--mount type=bind,source|src=…,
  target|destination|dst=…`` likewise, and ``type`` defaults to volume; ``--ipc`` is private by
  default and ``/dev/shm`` 64m; ``-d`` runs detached, its output in ``docker logs``.
- podman-run(1) ENVIRONMENT: ``--env-host`` adds the CLI's whole environment, below the image,
  the env files and ``--env``.
- systemd.exec(5): the unit's Environment= is the environment of the process ExecStart= starts
  (here the CLI); WorkingDirectory= is its working directory ("-" prefix: a missing one is no
  error).
- vLLM's image (docker/Dockerfile, ``vllm-openai`` target): ENTRYPOINT ``vllm serve``.
"""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from agentkit._hostmodel._model import HostModel, Server, Setting
from agentkit._hostmodel._state import State
from agentkit._hostmodel.runtimes._rununit import adopt, contain
from agentkit._sandbox._context import RecipeContext
from agentkit._sandbox._sandbox import Sandbox
from agentkit._types import TaskSpec

from .runtimes_snap import cited, snapshot

UNIT = "/etc/systemd/system/llm.service"
IMAGE = "vllm/vllm-openai:v0.11.0"


def _unit(argv: list[str], env: dict[str, str] | None = None, line: int = 7) -> Server:
    return Server(name="llm.service", path=UNIT, files=[UNIT], argv=argv, argv_source=UNIT,
                  argv_line=line, argv_evidence=["ev-argv"],
                  env={k: Setting(name=k, value=v, source="/etc/llm.env", line=n,
                                  evidence=[f"ev-{k}"], origin="EnvironmentFile")
                       for n, (k, v) in enumerate((env or {}).items(), 1)})


def contained(tmp_path: Path, argv: list[str], env: dict[str, str] | None = None,
              files: dict[str, str] | None = None, workdir: str = "/", line: int = 7,
              model: HostModel | None = None,
              commands: list[tuple[list[str], str, int]] | None = None,
              server: Server | None = None) -> tuple[RecipeContext, HostModel, Server]:
    ctx = RecipeContext(Sandbox(snapshot(tmp_path, files or {}, commands), task_id="t"),
                        TaskSpec(id="t", title="t", objective="o"))
    server, model = server or _unit(argv, env, line), model or HostModel()
    anyio.run(contain, ctx, server, model, workdir)
    return ctx, model, server


def run(*words: str) -> list[str]:
    return ["/usr/bin/docker", "run", *words]


# -- which lines are containers -----------------------------------------------------------

def test_a_unit_that_runs_no_container_is_left_as_it_is(tmp_path: Path) -> None:
    argv = ["/usr/bin/vllm", "serve", "/m"]
    _, model, s = contained(tmp_path, list(argv), env={"NCCL_PROTO": "LL"})
    assert (s.argv, s.runtime, list(s.env), s.notes, s.problems, model.problems) == (
        argv, "systemd", ["NCCL_PROTO"], [], [], [])


@pytest.mark.parametrize("workdir", ["/opt/app", "-/opt/app"])
def test_compose_up_hands_its_files_to_the_compose_runtime(tmp_path: Path, workdir: str) -> None:
    model = HostModel(compose_units={"/opt/app/compose.yml": "other.service"})
    argv = ["/usr/bin/docker", "compose", "up"]
    _, model, s = contained(tmp_path, list(argv), workdir=workdir, model=model)
    assert model.compose_units == {  # a file another unit claimed first stays that unit's
        "/opt/app/compose.yaml": "llm.service", "/opt/app/compose.yml": "other.service",
        "/opt/app/docker-compose.yaml": "llm.service",
        "/opt/app/docker-compose.yml": "llm.service"}
    assert (s.argv, s.runtime) == (argv, "systemd")


@pytest.mark.parametrize(("line", "where"), [(7, f"{UNIT}:7"), (0, UNIT)])
def test_a_line_not_understood_is_said_and_establishes_nothing(
        tmp_path: Path, line: int, where: str) -> None:
    _, model, s = contained(tmp_path, run("--frobnicate", "x", IMAGE), line=line)
    assert model.problems == [
        f"llm.service ({where}): its `docker run` line is not understood (option "
        "--frobnicate is not one this reading knows): the image, its command and the "
        "container's environment are not established"]
    assert s.argv == [] and s.runtime == "systemd"


# -- the container's environment ----------------------------------------------------------

def test_env_files_then_e_flags_the_last_wins(tmp_path: Path) -> None:
    """Relative --env-file paths open from WorkingDirectory= ('-' taken off); each setting is
    cited at its own file line, or at the ExecStart= line for -e."""
    files = {"srv/llm/a.env": "NCCL_PROTO=Simple\n  NCCL_ALGO=Ring  \nCUDA_HOME=/c\n",
             "srv/etc/b.env": "NCCL_ALGO=Tree\n"}
    ctx, _, s = contained(tmp_path, run("--env-file", "a.env", "-e", "NCCL_PROTO=LL",
                                        "--env-file=../etc/b.env", IMAGE, "--model", "/m"),
                          files=files, workdir="-/srv/llm")
    got = {k: (v.value, v.source, v.line, v.origin) for k, v in s.env.items()}
    assert got == {"NCCL_ALGO": ("Tree", "/srv/etc/b.env", 1, "docker --env-file"),
                   "CUDA_HOME": ("/c", "/srv/llm/a.env", 3, "docker --env-file"),
                   "NCCL_PROTO": ("LL", UNIT, 7, "docker run -e")}
    assert cited(ctx, s.env["NCCL_ALGO"].evidence[0]) == ("/srv/etc/b.env:1", "NCCL_ALGO=Tree")
    assert cited(ctx, s.env["CUDA_HOME"].evidence[0]) == ("/srv/llm/a.env:3", "CUDA_HOME=/c")
    assert s.env["NCCL_PROTO"].evidence == ["ev-argv"]
    assert s.problems == []


@pytest.mark.parametrize("workdir", ["relative", "X/srv", "-"])
def test_a_relative_env_file_without_an_absolute_working_directory_opens_from_root(
        tmp_path: Path, workdir: str) -> None:
    _, _, s = contained(tmp_path, run("--env-file", "x.env", IMAGE),
                        files={"x.env": "NCCL_PROTO=LL\n", "srv/x.env": "NCCL_PROTO=S\n"},
                        workdir=workdir)
    assert s.env["NCCL_PROTO"].source == "/x.env"


def test_names_alone_take_the_units_environment(tmp_path: Path) -> None:
    _, _, s = contained(tmp_path, run("--env-file", "/e.env", "-e", "NCCL_ALGO", IMAGE),
                        env={"NCCL_ALGO": "Ring", "NCCL_PROTO": "LL", "HOME": "/root"},
                        files={"e.env": "NCCL_PROTO\n"})
    got = {k: (v.value, v.source, v.line, v.origin) for k, v in s.env.items()}
    assert got == {
        "NCCL_PROTO": ("LL", "/e.env", 1, "docker --env-file, from the unit's NCCL_PROTO"),
        "NCCL_ALGO": ("Ring", UNIT, 7, "docker run -e, from the unit's NCCL_ALGO")}
    assert s.problems == []  # HOME is not NCCL's: the CLI's own, no problem said


def test_the_units_nccl_settings_do_not_reach_the_container_by_themselves(
        tmp_path: Path) -> None:
    _, _, s = contained(tmp_path, run(IMAGE), env={"NCCL_PROTO": "LL", "NCCL_ALGO": "Ring",
                                                   "CUDA_HOME": "/c"})
    assert s.env == {}
    assert s.problems == [
        f"{n}={v} (/etc/llm.env:{line}) is in the environment of the `docker` CLI only: `docker "
        f"run` does not pass it into the container (no -e {n})"
        for n, v, line in (("NCCL_ALGO", "Ring", 2), ("NCCL_PROTO", "LL", 1))]


def test_a_bare_e_name_the_unit_lacks_removes_it(tmp_path: Path) -> None:
    _, _, s = contained(tmp_path, run("-e", "NCCL_PROTO", "-e", "OMP_NUM_THREADS", IMAGE))
    assert s.env == {}
    said = (f"-e {{n}} ({UNIT}:7): {{n}} is not set in the unit's environment, so the container "
            "does not get it (an image's value is removed)")
    assert s.problems == [said.format(n="NCCL_PROTO")]  # NCCL's: a problem; others: a note
    assert [n for n in s.notes if "not set" in n] == [said.format(n="OMP_NUM_THREADS")]


def test_podman_passes_nothing_for_a_name_it_lacks(tmp_path: Path) -> None:
    """podman-run(1) --env: a name without a value is set only when podman's own environment
    has it (the image's value stays otherwise); ``NAME*`` takes every variable that starts
    with NAME. Docker, above, sends the name bare instead."""
    _, _, s = contained(tmp_path, ["podman", "run", "--env-file", "/p.env", "-e", "NCCL_PROTO",
                                   "-e", "OMP_NUM_THREADS", "-e", "NCCL_IB_*", IMAGE],
                        env={"NCCL_IB_HCA": "mlx5", "NCCL_IB_GID_INDEX": "3", "NCCL_ALGO": "Ring",
                             "NCCL_IBEXT_DISABLE": "1"},
                        files={"p.env": "NCCL_PROTO=Simple\n"})
    got = {k: (v.value, v.source, v.origin) for k, v in s.env.items()}
    assert got == {"NCCL_PROTO": ("Simple", "/p.env", "podman --env-file"),
                   "NCCL_IB_HCA": ("mlx5", UNIT, "podman run -e, from the unit's NCCL_IB_HCA"),
                   "NCCL_IB_GID_INDEX": ("3", UNIT,
                                         "podman run -e, from the unit's NCCL_IB_GID_INDEX")}
    said = (f"-e {{n}} ({UNIT}:7): {{n}} is not set in the unit's environment, so podman passes "
            "nothing for it (the image's value, if it has one, stays)")
    assert s.problems == [said.format(n="NCCL_PROTO"), *(
        f"{n}={v} (/etc/llm.env:{line}) is in the environment of the `podman` CLI only: "
        f"`podman run` does not pass it into the container (no -e {n})"
        for n, v, line in (("NCCL_ALGO", "Ring", 3), ("NCCL_IBEXT_DISABLE", "1", 4)))]
    assert [n for n in s.notes if "not set" in n] == [said.format(n="OMP_NUM_THREADS")]


@pytest.mark.parametrize(("value", "quoted"), [
    ("'LL'", True), ('"LL"', True), ('"', False), ("'LL\"", False), ("L'", False),
    ("''", True), ("LL", False), ("XLLX", False)])
def test_quotes_in_an_env_file_are_kept_and_said_for_nccl(
        tmp_path: Path, value: str, quoted: bool) -> None:
    _, _, s = contained(tmp_path, run("--env-file", "/n.env", "-e", f"NCCL_ALGO={value}",
                                      IMAGE), files={"n.env": f"NCCL_PROTO={value}\nQ={value}\n"})
    assert s.env["NCCL_PROTO"].value == value and s.env["Q"].value == value
    want = [f"NCCL_PROTO={value} (/n.env:1): `docker run --env-file` keeps quotes (no shell "
            f"parsing), so the process gets the quote characters too; write "
            f"NCCL_PROTO={value[1:-1]}"] if quoted else []
    assert s.problems == want  # not for -e: its word is what systemd already unquoted


def test_an_unreadable_env_file_is_said(tmp_path: Path) -> None:
    _, _, s = contained(tmp_path, run("--env-file", "/missing.env", "--env-file", "/gone.env",
                                      "-e", "A=1", IMAGE))
    assert s.problems == [f"{UNIT}:7: --env-file /{n}.env could not be read: `docker run` "
                          "fails without it, and the container's variables are not established"
                          for n in ("missing", "gone")]  # each file that fails is named
    assert s.env["A"].value == "1"


def test_an_env_file_docker_refuses_is_said(tmp_path: Path) -> None:
    _, _, s = contained(tmp_path, run("--env-file", "/bad.env", IMAGE),
                        files={"bad.env": "NCCL_PROTO=LL\nNCCL ALGO=Ring\n"})
    assert s.env == {}
    assert s.problems == ["/bad.env: variable 'NCCL ALGO' contains whitespaces: `docker run` "
                          "refuses this env file (the container does not start)"]


def test_podman_env_host_passes_the_units_environment_below_the_rest(tmp_path: Path) -> None:
    _, _, s = contained(tmp_path, ["/usr/bin/podman", "run", "--env-host", "--env-file",
                                   "/p.env", "-e", "NCCL_ALGO=Tree", IMAGE],
                        env={"NCCL_ALGO": "Ring", "NCCL_PROTO": "LL", "NCCL_IB_HCA": "mlx5"},
                        files={"p.env": "NCCL_IB_HCA=mlx5_0\n"})
    got = {k: (v.value, v.source, v.line, v.origin, v.evidence) for k, v in s.env.items()}
    assert got["NCCL_PROTO"] == ("LL", "/etc/llm.env", 2,
                                 "podman --env-host (the unit's environment)", ["ev-NCCL_PROTO"])
    assert got["NCCL_ALGO"][:4] == ("Tree", UNIT, 7, "podman run -e")
    assert got["NCCL_IB_HCA"][:4] == ("mlx5_0", "/p.env", 1, "podman --env-file")
    assert s.problems == [] and s.runtime == "podman"
    assert s.notes[1] == ("`podman run --env-host`: the image's own ENV is above the unit's "
                          "environment (podman-run(1) ENVIRONMENT), so a name it sets may not "
                          "have the unit's value")


def test_a_quoted_value_from_env_host_is_no_env_file_quote(tmp_path: Path) -> None:
    """Quotes left in a unit's Environment= value are the value's own (systemd.exec(5) took
    the syntactic ones off): --env-host passes them as they are, no env file is involved."""
    _, _, s = contained(tmp_path, ["podman", "run", "--env-host", IMAGE],
                        env={"NCCL_PROTO": "'LL'"})
    assert s.env["NCCL_PROTO"].value == "'LL'" and s.problems == []


@pytest.mark.parametrize("flag", ["--env-host=false", "--env-host=0"])
def test_podman_env_host_turned_off(tmp_path: Path, flag: str) -> None:
    _, _, s = contained(tmp_path, ["podman", "run", flag, IMAGE], env={"NCCL_PROTO": "LL"})
    assert s.env == {} and "no -e NCCL_PROTO" in s.problems[0]


# -- the container's command, name, log and host options ---------------------------------

_SAID = "my/image's ENTRYPOINT is not shown here"
_OPEN = "whether it starts the engine is not established"


# Docker's run reference: the words after the image replace its CMD and are passed to its
# ENTRYPOINT (unless --entrypoint, whose empty value clears it). The ENTRYPOINT is in the
# image's config, which nothing here shows; vllm/vllm-openai's has been `python3 -m
# vllm.entrypoints.openai.api_server` (whose parser takes flags only) and later `vllm serve`
# (whose parser adds a positional model tag).
@pytest.mark.parametrize(("options", "image", "command", "argv", "note", "problem"), [
    # flags alone: the same to both vLLM entrypoints
    ([], IMAGE, ["--model", "/m", "--tp", "2"], ["vllm", "serve", "--model", "/m", "--tp", "2"],
     "not shown which: both run vLLM's OpenAI server", None),
    # a positional model: `vllm serve` takes it, the api_server refuses it
    ([], IMAGE, ["/models/m", "--tp", "2"], ["vllm", "serve", "/models/m", "--tp", "2"], None,
     "is not established"),
    # a program after either vLLM entrypoint is refused; as written only without one
    ([], IMAGE, ["vllm", "serve", "/m"], ["vllm", "serve", "/m"], None, _OPEN),
    (["--entrypoint", "python3"], IMAGE, ["-m", "vllm.entrypoints.openai.api_server"],
     ["python3", "-m", "vllm.entrypoints.openai.api_server"], None, None),
    (["--entrypoint="], "my/image", ["vllm", "serve", "/m"], ["vllm", "serve", "/m"], None,
     None),
    ([], "my/image", ["vllm", "serve", "/m"], ["vllm", "serve", "/m"], None, _OPEN),
    ([], "my/image", ["/bin/bash", "-c", "x"], ["/bin/bash", "-c", "x"], None, _OPEN),
    ([], "my/image", ["sh", "-c", "x"], ["sh", "-c", "x"], None, _OPEN),
    ([], "my/image", ["python3", "s.py"], ["python3", "s.py"], None, _OPEN),
    ([], "my/image", ["/m"], ["/m"], _SAID, None),
    ([], "my/image", ["bash-x", "s.py"], ["bash-x", "s.py"], _SAID, None),
    ([], "my/image", [], [], _SAID, None),
])
def test_the_containers_command(tmp_path: Path, options: list[str], image: str,
                                command: list[str], argv: list[str], note: str | None,
                                problem: str | None) -> None:
    _, _, s = contained(tmp_path, run("--rm", *options, image, *command))
    assert s.argv == argv
    assert s.notes[0] == (f"started by systemd (llm.service): `docker run` of image {image}; "
                          "the image's own ENV (below these) is not visible here")
    assert "IPC mode private, /dev/shm 64m (Docker default)" in s.notes
    extra = [n for n in s.notes[1:] if not n.startswith("IPC mode")]
    assert (len(extra), note is None or note in extra[0]) == (0 if note is None else 1, True)
    assert (len(s.argv_problems), problem is None or problem in s.argv_problems[0]) == (
        0 if problem is None else 1, True)
    assert not s.refused  # nothing here shows which ENTRYPOINT: never said to be refused


@pytest.mark.parametrize(("words", "name", "logs"), [
    (["-d", "--name", "a", "--name", "llm"], "llm", True),
    (["--detach", "--name=llm"], "llm", True),
    (["--name", "llm"], "llm", False),
    (["--detach=false", "--name", "llm"], "llm", False),
    (["-d"], "", False),
])
def test_name_and_where_a_detached_containers_output_goes(
        tmp_path: Path, words: list[str], name: str, logs: bool) -> None:
    _, _, s = contained(tmp_path, run(*words, IMAGE))
    assert s.container_name == name and s.runtime == "docker"
    assert s.log_argv == (["docker", "logs", "--tail", "2000", "--timestamps", name]
                          if logs else None)


def test_mounts_gpus_ipc_and_shm(tmp_path: Path) -> None:
    _, _, s = contained(tmp_path, run(
        "-v", "/data/models:/models:ro", "-v", "cache:/root/.cache", "-v", "/anon",
        "--volume=/etc/nccl.conf:/etc/nccl.conf",
        "--mount", "type=bind,source=/a,target=/ca", "--mount", "type=bind,src=/b,dst=/cb",
        "--mount", "type=bind,source=/c,destination=/cc,readonly",
        "--mount", "source=vol,target=/v", "--mount", "type=volume,src=/d,dst=/cd",
        "--mount", "type=tmpfs,target=/t", "--mount", "type=bind,source=/e",
        "--mount", "type=bind,target=/f", "--mount", "type=bind,source=/g=1,target=/cg",
        "--device", "/dev/nvidia0", "--device=/dev/fuse", "--device", "/dev/nvidiactl",
        "--ipc=host", "--shm-size", "16g", IMAGE))
    assert s.mounts == {"/data/models": "/models", "/etc/nccl.conf": "/etc/nccl.conf",
                        "/a": "/ca", "/b": "/cb", "/c": "/cc", "/g=1": "/cg"}
    assert s.gpus == "/dev/nvidia0; /dev/nvidiactl"
    assert "IPC mode host, /dev/shm 16g" in s.notes


def test_host_option_defaults(tmp_path: Path) -> None:
    _, _, s = contained(tmp_path, run("--gpus", "device=0,1", IMAGE))
    assert (s.mounts, s.gpus) == ({}, "--gpus device=0,1")
    assert "IPC mode private, /dev/shm 64m (Docker default)" in s.notes
    _, _, s = contained(tmp_path / "b", run(IMAGE))
    assert s.gpus == ""


# -- adopt: the running container is the authority ----------------------------------------

def _setting(name: str, value: str, source: str = UNIT, line: int = 3) -> Setting:
    return Setting(name=name, value=value, source=source, line=line, evidence=[f"e-{name}"])


def _pair(unit_env: dict[str, str], running_env: dict[str, str], same_argv: bool = True
          ) -> tuple[Server, Server]:
    unit = _unit(run(IMAGE))
    unit.argv, unit.runtime = ["vllm", "serve", "/m"], "docker"
    unit.env = {k: _setting(k, v) for k, v in unit_env.items()}
    unit.mounts, unit.gpus = {"/u": "/u"}, "--gpus all"
    inspected = Server(name="llm", path="$ docker inspect llm", files=[],
                       argv=["vllm", "serve", "/m" if same_argv else "/other"],
                       argv_source="inspect", argv_line=0, argv_evidence=["ev-inspect"],
                       env={k: _setting(k, v, "inspect", 0) for k, v in running_env.items()},
                       engine="vllm", flags={"model": "/m"}, container_id="c" * 64,
                       rootfs="/var/lib/docker/overlay2/x/merged")
    inspected.state = State(value="running")
    return unit, inspected


def test_adopt_names_each_nccl_difference_in_name_order(tmp_path: Path) -> None:
    unit, running = _pair({"NCCL_ALGO": "Ring", "NCCL_PROTO": "LL", "NCCL_DEBUG": "INFO",
                           "NCCL_SOCKET_IFNAME": "eth0", "PATH": "/a"},
                          {"NCCL_PROTO": "Simple", "NCCL_IB_HCA": "mlx5", "NCCL_ALGO": "Ring",
                           "NCCL_DEBUG": "WARN", "PATH": "/b"})
    adopt(unit, running)
    assert unit.problems == [
        "NCCL_IB_HCA=mlx5 is in the running container llm but not on llm.service's `docker "
        "run` line (the image sets it, or the line changed since): it is in effect now",
        f"NCCL_PROTO: the running container llm has 'Simple' ($ docker inspect llm), while "
        f"llm.service's `docker run` line declares 'LL' ({UNIT}:3); the line's value takes "
        "effect only when systemd starts the unit again",
        f"NCCL_SOCKET_IFNAME: the running container llm has it unset ($ docker inspect llm), "
        f"while llm.service's `docker run` line declares 'eth0' ({UNIT}:3); the line's value "
        "takes effect only when systemd starts the unit again"]
    assert unit.env is running.env


def test_adopt_takes_the_running_containers_facts() -> None:
    unit, running = _pair({}, {}, same_argv=False)
    adopt(unit, running)
    assert unit.problems == ["the running container llm runs `vllm serve /other`, not what "
                             "llm.service's line now says: the line takes effect only at the "
                             "next start"]
    assert (unit.argv, unit.flags, unit.engine) == (["vllm", "serve", "/other"],
                                                    {"model": "/m"}, "vllm")
    assert unit.argv_evidence == ["ev-inspect", "ev-argv"]
    assert (unit.container_id, unit.rootfs) == ("c" * 64, "/var/lib/docker/overlay2/x/merged")
    assert (unit.mounts, unit.gpus) == ({"/u": "/u"}, "--gpus all")  # inspect showed none
    assert unit.notes == ["the container's environment and command are read from $ docker "
                          "inspect llm (the authority while it exists)"]
    assert unit.state.value == "running"


def test_adopt_keeps_the_units_own_state_and_takes_shown_mounts() -> None:
    unit, running = _pair({"NCCL_PROTO": "LL"}, {"NCCL_PROTO": "LL"})
    unit.state = State(value="crash-looping")
    running.mounts, running.gpus = {"/r": "/r"}, "all"
    adopt(unit, running)
    assert unit.problems == []
    assert (unit.state.value, unit.mounts, unit.gpus) == ("crash-looping", {"/r": "/r"}, "all")


# -- the image's ENTRYPOINT, when a capture of the image's config shows it ----------------
# Docker's run reference: the words after the image are the ENTRYPOINT's arguments. `docker
# inspect --type image IMAGE` (podman: the same verb) prints a list of one object whose
# Config.Entrypoint is that ENTRYPOINT. vLLM's `vllm serve` parser refuses a second program
# name (`vllm serve vllm serve /m`: unrecognized arguments): the container exits at start.

def _image_config(cli: str, image: str, entry: list[str]) -> tuple[list[str], str, int]:
    config = [{"Id": "sha256:" + "a" * 64, "Config": {"Entrypoint": entry, "Cmd": None}}]
    return [cli, "inspect", "--type", "image", image], json.dumps(config), 0


@pytest.mark.parametrize("cli", ["docker", "podman"])
def test_the_images_entrypoint_from_its_captured_config(tmp_path: Path, cli: str) -> None:
    _, _, s = contained(tmp_path, [f"/usr/bin/{cli}", "run", "my/image", "/m", "--tp", "2"],
                        commands=[_image_config(cli, "my/image", ["vllm", "serve"])])
    assert s.argv == ["vllm", "serve", "/m", "--tp", "2"]
    assert (s.argv_problems, s.refused) == ([], "")
    assert any("from `docker inspect --type image my/image`" in n for n in s.notes)


def test_a_command_the_images_vllm_entrypoint_refuses_means_it_cannot_run(
        tmp_path: Path) -> None:
    before = Server(name="llm.service", path=UNIT, files=[UNIT],
                    argv=run("my/image", "vllm", "serve", "/m"), argv_source=UNIT, argv_line=7,
                    argv_evidence=["ev-argv"], env={})
    before.argv_problems = ["an earlier reader's doubt"]  # kept: the step adds to it
    _, _, s = contained(tmp_path, [], server=before,
                        commands=[_image_config("docker", "my/image", ["vllm", "serve"])])
    assert s.argv == ["vllm", "serve", "vllm", "serve", "/m"]
    assert f"{UNIT}:7" in s.refused and "unrecognized arguments" in s.refused
    assert s.argv_problems == ["an earlier reader's doubt"]


def test_an_unseen_entrypoint_is_said_with_the_units_line(tmp_path: Path) -> None:
    _, _, s = contained(tmp_path, run("my/image", "vllm", "serve", "/m"), line=9)
    [said] = s.argv_problems
    assert said.startswith(f"{UNIT}:9: ") and "not established" in said and not s.refused


def test_adopt_moves_the_lines_entrypoint_doubt_and_refusal_to_its_next_start() -> None:
    # a container of the unit runs now (inspect is the authority): what the line's
    # ENTRYPOINT left open, or refuses, is about the next start, not what runs
    unit, running = _pair({}, {})
    unit.argv_problems, unit.refused = ["open: which ENTRYPOINT"], "vLLM refuses the line"
    adopt(unit, running)
    assert (unit.argv_problems, unit.refused) == ([], "")
    assert unit.problems == ["open: which ENTRYPOINT",
                             "at its next start: vLLM refuses the line"]
