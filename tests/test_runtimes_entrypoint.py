"""The ENTRYPOINT rule itself (``runtimes/_entrypoint.py``), called directly. Expected from
Docker's documented semantics, written before running:
- Dockerfile reference, "Understand how CMD and ENTRYPOINT interact": with an exec-form
  ENTRYPOINT the container runs ENTRYPOINT followed by the command given (``docker run IMAGE
  ARGS…``, Compose's ``command``, a Pod's ``args``), or by the image's CMD when none is given;
  with no ENTRYPOINT the command (or CMD) is the whole command line.
- ``docker inspect --type image IMAGE`` and ``docker image inspect IMAGE`` print a JSON list
  with one object per image; its ``Config.Entrypoint`` and ``Config.Cmd`` are lists or null.
  Podman's ``podman image inspect`` prints the same shape.
- vllm/vllm-openai's ENTRYPOINT: ``python3 -m vllm.entrypoints.openai.api_server`` (flags only:
  its parser has no positional argument) through mid-2025, then ``vllm serve`` (a positional
  model tag, then flags). Either one given a program name (``vllm serve``, ``python3``,
  ``bash``) as arguments exits with "unrecognized arguments"; so does ``vllm serve`` given
  more than one positional, whatever flags its ENTRYPOINT adds after ``serve``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from agentkit._hostmodel.runtimes._entrypoint import (
    VLLM_IMAGE,
    _is_vllm_entry,
    image_config,
    starts_program,
    with_entrypoint,
)
from agentkit._sandbox._context import RecipeContext
from agentkit._sandbox._sandbox import Sandbox
from agentkit._types import TaskSpec

from .runtimes_snap import snapshot

API = ["python3", "-m", "vllm.entrypoints.openai.api_server"]
SERVE = ["vllm", "serve"]
WHERE = "/opt/llm/compose.yaml:4"


def _inspect(config: Any, n: int = 1) -> str:
    return json.dumps([{"Id": f"sha256:{i}" + "b" * 63, "RepoTags": ["x"], "Config": config}
                       for i in range(n)], indent=4)


def _config(tmp_path: Path, image: str,
            captures: list[tuple[list[str], str, int]], cli: str = "docker"
            ) -> dict[str, Any] | None:
    host = snapshot(tmp_path, {}, captures)
    ctx = RecipeContext(Sandbox(host, task_id="t"), TaskSpec(id="t", title="t", objective="o"))
    return anyio.run(image_config, ctx, image, cli)


def _typed(image: str, cli: str = "docker") -> list[str]:
    return [cli, "inspect", "--type", "image", image]


def _plain(image: str, cli: str = "docker") -> list[str]:
    return [cli, "image", "inspect", image]


# --- image_config -----------------------------------------------------------------------

def test_image_config_reads_config_from_either_spelling(tmp_path: Path) -> None:
    img = "vllm/vllm-openai:v0.11.0"
    cfg = {"Entrypoint": SERVE, "Cmd": None, "Env": ["PATH=/usr/bin"]}
    assert _config(tmp_path / "a", img, [(_typed(img), _inspect(cfg), 0)]) == cfg
    assert _config(tmp_path / "b", img, [(_plain(img), _inspect(cfg), 0)]) == cfg
    # the typed spelling failing (an older client: exit 1), the other one answers
    other = {"Entrypoint": API, "Cmd": None}
    assert _config(tmp_path / "c", img, [(_typed(img), "", 1),
                                         (_plain(img), _inspect(other), 0)]) == other
    # the typed one answering is what is read, the other not asked
    assert _config(tmp_path / "d", img, [(_typed(img), _inspect(cfg), 0),
                                         (_plain(img), _inspect(other), 0)]) == cfg


def test_image_config_with_podman(tmp_path: Path) -> None:
    img = "docker.io/vllm/vllm-openai:v0.11.0"
    cfg = {"Entrypoint": SERVE, "Cmd": ["--help"]}
    assert _config(tmp_path / "a", img, [(_typed(img, "podman"), _inspect(cfg), 0)],
                   "podman") == cfg
    assert _config(tmp_path / "b", img, [(_plain(img, "podman"), _inspect(cfg), 0)],
                   "podman") == cfg
    # a docker capture says nothing of podman's image store
    assert _config(tmp_path / "c", img, [(_typed(img), _inspect(cfg), 0)], "podman") is None


def test_image_config_is_none_where_nothing_shows_it(tmp_path: Path) -> None:
    img = "registry.local/llm:7"
    cfg = {"Entrypoint": None, "Cmd": ["bash"]}
    assert _config(tmp_path / "a", img, []) is None
    assert _config(tmp_path / "b", "", [(_typed(""), _inspect(cfg), 0)]) is None
    # both failed (no such image: exit 1, an error on stderr and `[]` on stdout)
    assert _config(tmp_path / "c", img, [(_typed(img), "[]\n", 1),
                                         (_plain(img), "[]\n", 1)]) is None
    assert _config(tmp_path / "d", img, [(_typed(img), _inspect(cfg), 1)]) is None
    assert _config(tmp_path / "e", img, [(_plain(img), _inspect(cfg), 2)]) is None
    # another image's capture does not answer for this one
    assert _config(tmp_path / "f", img, [(_typed("other:1"), _inspect(cfg), 0)]) is None


@pytest.mark.parametrize("stdout", [
    "not json", "[]", "{}", "7", "null", '"vllm"',  # not a list of objects
    json.dumps({"Config": {"Entrypoint": SERVE}}),
    json.dumps([None]), json.dumps([{"Id": "x"}]),  # no Config
    json.dumps([{"Config": None}]), json.dumps([{"Config": ["vllm"]}]),
])
def test_image_config_is_none_for_output_of_another_shape(tmp_path: Path, stdout: str) -> None:
    img = "registry.local/llm:7"
    assert _config(tmp_path, img, [(_typed(img), stdout, 0)]) is None


def test_image_config_of_several_images_is_none(tmp_path: Path) -> None:
    # one name answered by two objects: which one is meant is not shown
    img = "registry.local/llm:7"
    two = _inspect({"Entrypoint": None, "Cmd": ["bash"]}, 2)
    assert _config(tmp_path, img, [(_typed(img), two, 0)]) is None
    # what is not an object is no image
    cfg = {"Entrypoint": None, "Cmd": ["bash"]}
    mixed = json.dumps([7, {"Config": cfg}])
    assert _config(tmp_path / "b", img, [(_typed(img), mixed, 0)]) == cfg


# --- starts_program ---------------------------------------------------------------------

@pytest.mark.parametrize("command", [
    ["vllm", "serve", "/models/m"], ["/opt/venv/bin/vllm", "serve", "m"],
    ["python3", "-m", "vllm.entrypoints.openai.api_server"], ["python", "x.py"],
    ["/usr/bin/python3", "x.py"], ["bash", "-c", "vllm serve m"], ["/bin/sh", "-c", "x"],
    ["sh", "-c", "x"], ["env", "A=1", "x"], ["/usr/bin/env", "x"],
    ["/usr/local/bin/bash"],
])
def test_a_program_first_starts_a_program(command: list[str]) -> None:
    assert starts_program(command)


@pytest.mark.parametrize("command", [
    [], ["--model", "/models/m"], ["/models/m", "-tp", "2"], ["Qwen/Qwen3-8B"],
    ["serve", "m"], ["/models/python3x"], ["bashful"], ["-c", "bash"],
])
def test_arguments_first_start_no_program(command: list[str]) -> None:
    assert not starts_program(command)


# --- _is_vllm_entry ---------------------------------------------------------------------

@pytest.mark.parametrize("entry", [
    SERVE, ["/usr/local/bin/vllm", "serve"], API, ["/usr/bin/python3", "-m",
                                                     "vllm.entrypoints.openai.api_server"],
    [*API, "--port", "8000"], ["vllm", "serve", "--port", "8000"],
    ["/usr/bin/env", "vllm", "serve"],
])
def test_vllm_entrypoints(entry: list[str]) -> None:
    assert _is_vllm_entry(entry)


@pytest.mark.parametrize("entry", [
    [], ["vllm"], ["serve"], ["/docker-entrypoint.sh"], ["bash", "-c", "vllm serve"],
    ["python3", "-m", "sglang.launch_server"], ["vllm", "bench", "serve"],
    ["serve", "vllm"],
])
def test_other_entrypoints(entry: list[str]) -> None:
    assert not _is_vllm_entry(entry)


# --- with_entrypoint, the image's config shown ------------------------------------------

def test_the_command_follows_the_entrypoint() -> None:
    e = with_entrypoint("img:1", ["--model", "m"], WHERE, {"Entrypoint": API, "Cmd": ["-h"]})
    assert e.argv == [*API, "--model", "m"]
    assert not e.problems and not e.refused
    assert any("docker inspect --type image img:1" in n for n in e.notes)


def test_without_a_command_the_image_s_cmd_follows_the_entrypoint() -> None:
    e = with_entrypoint("img:1", [], WHERE, {"Entrypoint": ["/entry.sh"], "Cmd": ["a", "b"]})
    assert e.argv == ["/entry.sh", "a", "b"]
    e = with_entrypoint("img:1", [], WHERE, {"Entrypoint": None, "Cmd": ["bash"]})
    assert e.argv == ["bash"]
    e = with_entrypoint("img:1", [], WHERE, {"Entrypoint": ["/entry.sh"], "Cmd": None})
    assert e.argv == ["/entry.sh"]
    e = with_entrypoint("img:1", [], WHERE, {})
    assert e.argv == [] and not e.problems and not e.refused


def test_no_entrypoint_makes_the_command_the_whole_line() -> None:
    for entry in (None, []):
        e = with_entrypoint("vllm/vllm-openai:x", ["vllm", "serve", "m"], WHERE,
                            {"Entrypoint": entry, "Cmd": ["bash"]})
        assert e.argv == ["vllm", "serve", "m"]
        assert not e.problems and not e.refused
        assert [n for n in e.notes if "ENTRYPOINT none" in n], e.notes


def test_the_note_names_the_entrypoint_read() -> None:
    e = with_entrypoint("img:1", ["m"], WHERE, {"Entrypoint": ["/entry.sh"]})
    assert [n for n in e.notes if "/entry.sh" in n and "none" not in n], e.notes


@pytest.mark.parametrize("entry", [SERVE, API, ["/opt/venv/bin/vllm", "serve"],
                                   ["vllm", "serve", "--port", "8000"]])
@pytest.mark.parametrize("command", [["vllm", "serve", "m"], ["python3", "-m", "x"],
                                     ["bash", "-c", "vllm serve m"]])
def test_a_program_after_a_vllm_entrypoint_is_refused(entry: list[str],
                                                      command: list[str]) -> None:
    e = with_entrypoint("vllm/vllm-openai:x", command, WHERE, {"Entrypoint": entry})
    assert e.argv == [*entry, *command]
    # cited: where the command is, the ENTRYPOINT, what Docker runs, vLLM's (argparse's) error
    assert WHERE in e.refused and f"`{' '.join(entry)}`" in e.refused, e.refused
    assert f"`{' '.join([*entry, *command[:2]])} …`" in e.refused, e.refused
    assert "unrecognized arguments" in e.refused
    assert e.refused.endswith("the container exits at start"), e.refused
    assert not e.problems


def test_a_program_in_the_image_s_cmd_after_a_vllm_entrypoint_is_refused() -> None:
    e = with_entrypoint("img:1", [], WHERE, {"Entrypoint": SERVE, "Cmd": ["bash"]})
    assert e.argv == [*SERVE, "bash"] and WHERE in e.refused


def test_a_positional_is_refused_after_the_api_server_only() -> None:
    e = with_entrypoint("vllm/vllm-openai:x", ["/models/m", "-tp", "2"], WHERE,
                        {"Entrypoint": API})
    assert e.argv == [*API, "/models/m", "-tp", "2"] and WHERE in e.refused
    e = with_entrypoint("vllm/vllm-openai:x", ["/models/m", "-tp", "2"], WHERE,
                        {"Entrypoint": SERVE})
    assert e.argv == [*SERVE, "/models/m", "-tp", "2"] and not e.refused


def test_flags_after_either_vllm_entrypoint_run() -> None:
    for entry in (SERVE, API):
        e = with_entrypoint("vllm/vllm-openai:x", ["--model", "m"], WHERE, {"Entrypoint": entry})
        assert e.argv == [*entry, "--model", "m"] and not e.refused and not e.problems


def test_another_entrypoint_refuses_nothing() -> None:
    for entry in (["/docker-entrypoint.sh"], ["bash", "-c"], ["python3", "-m", "x"]):
        for command in (["vllm", "serve", "m"], ["/models/m"]):
            e = with_entrypoint("img:1", command, WHERE, {"Entrypoint": entry})
            assert e.argv == [*entry, *command] and not e.refused and not e.problems


# --- with_entrypoint, nothing shows the image's config ----------------------------------

@pytest.mark.parametrize("image", ["vllm/vllm-openai:v0.11.0", "vllm/vllm-openai",
                                   "docker.io/vllm/vllm-openai:latest",
                                   "vllm/vllm-openai@sha256:" + "a" * 64, "vllm-openai:1"])
def test_vllm_images(image: str) -> None:
    assert VLLM_IMAGE.search(image)


@pytest.mark.parametrize("image", ["vllm/vllm-openai-rocm:1", "myvllm-openai:1",
                                   "registry.local/llm:7", "vllm/vllm-openaix"])
def test_other_images(image: str) -> None:
    assert not VLLM_IMAGE.search(image)


def _unestablished(e: Any) -> list[str]:
    # what is missing is named: an inspect of the image or of a container would show it
    return [p for p in e.problems if WHERE in p and "not established" in p
            and "ENTRYPOINT" in p and "(no `docker inspect` of the image or of a container)" in p]


def test_a_program_on_the_vllm_image_is_not_established() -> None:
    cmd = ["vllm", "serve", "/models/m", "-tp", "8"]
    e = with_entrypoint("vllm/vllm-openai:v0.11.0", cmd, WHERE)
    assert e.argv == cmd and not e.refused
    said = _unestablished(e)
    assert said and "vllm serve …" in said[0] and "api_server" in said[0], e.problems


def test_a_positional_on_the_vllm_image_is_not_established() -> None:
    e = with_entrypoint("vllm/vllm-openai:latest", ["/models/m", "-tp", "2"], WHERE)
    assert e.argv == ["vllm", "serve", "/models/m", "-tp", "2"] and not e.refused
    said = _unestablished(e)
    assert said and "/models/m" in said[0] and "positional" in said[0], e.problems
    # why: the earlier ENTRYPOINT's parser takes flags only; the reading chosen is said
    assert ("ENTRYPOINT (`python3 -m vllm.entrypoints.openai.api_server`, whose parser takes "
            "no positional argument)") in said[0], said
    assert said[0].endswith("(read as `vllm serve`)"), said


def test_flags_on_the_vllm_image_run_vllm_s_server() -> None:
    e = with_entrypoint("vllm/vllm-openai:latest", ["--model", "m"], WHERE)
    assert e.argv == ["vllm", "serve", "--model", "m"]
    assert not e.problems and not e.refused
    notes = " ".join(e.notes)
    assert "vllm/vllm-openai:latest" in notes and "vllm serve" in notes
    assert "vllm.entrypoints.openai.api_server" in notes
    e = with_entrypoint("vllm/vllm-openai:latest", [], WHERE)
    assert e.argv == ["vllm", "serve"] and not e.problems and not e.refused


def test_a_program_on_another_image_is_not_established() -> None:
    cmd = ["python3", "-m", "sglang.launch_server", "--tp", "2"]
    e = with_entrypoint("registry.local/llm:7", cmd, WHERE)
    assert e.argv == cmd and not e.refused
    said = _unestablished(e)
    assert said and "registry.local/llm:7" in said[0] and "python3 -m …" in said[0], e.problems


def test_arguments_on_another_image_are_the_command_line() -> None:
    # flags first are no program (Docker would fail to exec `--model`): they can only be the
    # arguments of an ENTRYPOINT nothing here shows, so what runs is not known
    e = with_entrypoint("registry.local/llm:7", ["--model", "m"], WHERE)
    assert e.argv == ["--model", "m"] and not e.problems and not e.refused
    assert [n for n in e.notes if "registry.local/llm:7" in n
            and n.endswith(": these are its arguments, so what it runs is not known")], e.notes
    e = with_entrypoint("registry.local/llm:7", ["serve.py"], WHERE)
    assert [n for n in e.notes if "registry.local/llm:7" in n
            and n.endswith(": the command is read as the whole command line")], e.notes
    e = with_entrypoint("registry.local/llm:7", [], WHERE)
    assert e.argv == [] and not e.problems and not e.refused
    assert [n for n in e.notes if "registry.local/llm:7" in n
            and n.endswith(": what it runs is not known")], e.notes


def test_a_second_positional_after_an_entrypoint_naming_its_model_is_refused() -> None:
    # `vllm serve`'s parser has one positional (the model tag): an ENTRYPOINT that names the
    # model already leaves a positional command to argparse's "unrecognized arguments"
    for entry in (["vllm", "serve", "/models/baked", "--port", "8000"],
                  ["/opt/venv/bin/vllm", "serve", "/models/baked"]):
        e = with_entrypoint("img:1", ["/models/m", "-tp", "2"], WHERE, {"Entrypoint": entry})
        assert e.argv == [*entry, "/models/m", "-tp", "2"] and WHERE in e.refused, e
    # flags after it run; so does a positional after a flag's value (`--port 8000` is no model)
    e = with_entrypoint("img:1", ["-tp", "2"], WHERE, {"Entrypoint": entry})
    assert not e.refused and not e.problems
    e = with_entrypoint("img:1", ["/models/m"], WHERE,
                        {"Entrypoint": ["vllm", "serve", "--port", "8000"]})
    assert not e.refused and not e.problems
