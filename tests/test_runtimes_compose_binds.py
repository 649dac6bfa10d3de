"""Bind-mount sources in a Compose file, as compose-go resolves them (written before running,
from compose-spec/compose-go: format/volume.go ``isFilePath``, paths/resolve.go
``absVolumeMount``/``maybeUnixPath``, paths/home.go ``ExpandUser``):
- short syntax ``SRC:DST``: a bind when SRC starts with ``.``, ``/`` or ``~``; else a named
  volume (no host path);
- ``${VAR}`` in the file is interpolated first (the project's ``.env``, the shell);
- a leading ``~`` becomes the home directory of the user running compose (``os.UserHomeDir``:
  ``$HOME``), which a host's files do not show: the host path is not established, said with the
  file and line; the model path inside the container then has no established host path;
- a relative source is joined to the project directory (the compose file's directory);
- long syntax ``type: bind`` resolves ``source`` the same way.
A running container's ``docker inspect`` shows ``Mounts[].Source`` as resolved: the authority
(the compose file then adds nothing).
"""

from __future__ import annotations

from pathlib import Path

from agentkit._hostmodel.runtimes import _compose

from .runtimes_snap import discover, snapshot

SERVE = ("    image: vllm/vllm-openai:v0.11.0\n"
         "    command: --model /models/org/M --tensor-parallel-size 2\n")


def _servers(tmp_path: Path, volumes: str, dotenv: str | None = None) -> dict[str, object]:
    files = {"opt/llm/compose.yaml": "services:\n  vllm:\n" + SERVE + "    volumes:\n" + volumes}
    if dotenv is not None:
        files["opt/llm/.env"] = dotenv
    return discover(_compose, snapshot(tmp_path, files))[2]


def test_a_tilde_source_is_not_established_with_file_and_line(tmp_path: Path) -> None:
    s = _servers(tmp_path, "      - ~/models:/models:ro\n")["llm-vllm-1"]
    assert "/opt/llm/~/models" not in s.mounts  # never the project directory's "~"
    assert not any(h.startswith("/") for h, inside in s.mounts.items() if inside == "/models")
    said = [p for p in s.problems if "/opt/llm/compose.yaml:6" in p and "not established" in p]
    assert said and "~" in said[0] and "home" in said[0], s.problems
    # the model's host path is not a confident guess: not the container's own /models/org/M
    assert s.model_path != "/models/org/M"
    assert not (s.model_path or "").startswith("/")


def test_long_syntax_tilde_likewise(tmp_path: Path) -> None:
    s = _servers(tmp_path, "      - type: bind\n        source: ~/models\n"
                           "        target: /models\n")["llm-vllm-1"]
    assert not any(h.startswith("/") for h, inside in s.mounts.items() if inside == "/models")
    assert [p for p in s.problems if "not established" in p and "~" in p], s.problems


def test_relative_and_interpolated_sources(tmp_path: Path) -> None:
    s = _servers(tmp_path, "      - ./weights/../models:/models:ro\n"
                           "      - ${CACHE_DIR}:/root/.cache\n"
                           "      - ${NCCL_DIR:-/etc/nccl}:/etc/nccl:ro\n",
                 dotenv="CACHE_DIR=/data/cache\n")["llm-vllm-1"]
    assert s.mounts == {"/opt/llm/models": "/models", "/data/cache": "/root/.cache",
                        "/etc/nccl": "/etc/nccl"}
    assert s.model_path == "/opt/llm/models/org/M"


def test_an_unset_variable_in_a_source_is_not_established(tmp_path: Path) -> None:
    s = _servers(tmp_path, "      - ${MODELS}:/models\n")["llm-vllm-1"]
    # unset, compose gives an empty source (a volume spec ":/models", refused) or the shell's
    # value: the mount is not established, never dropped silently
    assert not any(inside == "/models" and h.startswith("/") for h, inside in s.mounts.items())
    assert [p for p in s.problems if "MODELS" in p and "not established" in p], s.problems


def test_an_env_file_under_tilde_is_not_read_from_the_project_directory(tmp_path: Path) -> None:
    # compose-go resolves env_file paths with the same ExpandUser (paths/resolve.go absPath)
    files = {"opt/llm/compose.yaml": "services:\n  vllm:\n" + SERVE +
             "    env_file: ~/nccl.env\n",
             "opt/llm/~/nccl.env": "NCCL_ALGO=Tree\n"}  # a directory literally named "~"
    s = discover(_compose, snapshot(tmp_path, files))[2]["llm-vllm-1"]
    assert "NCCL_ALGO" not in s.env
    said = " ".join(s.notes + s.problems)
    assert "~/nccl.env" in said and "not established" in said and "/opt/llm/~" not in said


def _compose_go(source: str, project: str) -> str | None:
    """compose-go's host path for a short-syntax SRC (format/volume.go isFilePath, then
    paths/unix.go maybeUnixPath with paths/home.go ExpandUser), None for a named volume, "~"
    where the home directory decides it (the home of the user running compose). Absolute
    paths are kept as written by compose-go and resolved by the kernel: compared normalized."""
    import posixpath

    if not source or source[0] not in "./~":
        return None
    if source.startswith("~"):
        return "~"
    if source.startswith("/"):
        return posixpath.normpath(source)
    return posixpath.normpath(posixpath.join(project, source))


def test_short_sources_agree_with_compose_go_s_rules(tmp_path: Path) -> None:
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    part = st.sampled_from(["models", "a", "..", ".", "w-1", "x.y"])
    source = st.one_of(
        st.lists(part, min_size=1, max_size=4).map(lambda p: "/" + "/".join(p)),
        st.lists(part, min_size=1, max_size=4).map(lambda p: "./" + "/".join(p)),
        st.lists(part, min_size=1, max_size=3).map(lambda p: "../" + "/".join(p)),
        st.lists(part, min_size=0, max_size=3).map(lambda p: "/".join(["~", *p])),
        st.sampled_from(["hfcache", "models", "vol_1"]))
    n = iter(range(10**6))

    @settings(max_examples=60, deadline=None,
              suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(source)
    def check(src: str) -> None:
        s = _servers(tmp_path / str(next(n)), f"      - {src}:/models:ro\n")["llm-vllm-1"]
        got = [h for h, inside in s.mounts.items() if inside == "/models"]
        want = _compose_go(src, "/opt/llm")
        if want is None:
            assert got == []
        elif want == "~":
            assert got == [src] and [p for p in s.problems if "not established" in p]
        else:
            assert got == [want]

    check()
