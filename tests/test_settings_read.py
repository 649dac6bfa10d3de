"""The command line's settings reader (``_settings.read_settings``, no pydantic-settings) gives
what ``agentkit.load_settings`` (pydantic-settings' ``BaseSettings``) gives: the same values,
or the same ConfigError, on generated environments, config files and flags.

pydantic-settings is the reference here: ``load_settings`` is public and stays built on it,
and the reader exists only so that ``agentkit ask`` does not import it (docs/benchmarks.md,
"Start-up")."""

from __future__ import annotations

import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from agentkit._config import ConfigError, Settings, load_settings
from agentkit._settings import SettingsValues, read_settings

FIELDS = list(SettingsValues.model_fields)

# values as a variable, a flag or a config file may hold them: numbers in and out of bounds,
# words pydantic's lax mode reads as numbers or booleans, paths, JSON that is not decoded
_WORDS = st.sampled_from([
    "", " ", "0", "1", "-1", "7", "1e3", "2.5", "0.0", "-0.5", "inf", "nan", "1_000", " 12 ",
    "true", "false", "yes", "no", "on", "off", "openai", "anthropic", "OpenAI", "bedrock",
    "http://127.0.0.1:8000/v1", "https://h/v1", "ftp://h", "http://", "m", "/a:/b", "a::b:",
    ":", '["x", "y"]', "{}", "null", "None", "\u00e9", "a b"])
_SCALARS = st.one_of(
    _WORDS, st.text(max_size=8), st.integers(-3, 200), st.booleans(),
    st.floats(allow_nan=True, allow_infinity=True, width=32))
_VALUES = st.one_of(_SCALARS, st.lists(_SCALARS, max_size=3),
                    st.dictionaries(st.sampled_from(["a", "b"]), _SCALARS, max_size=2))
_NAMES = st.sampled_from([*FIELDS, "bogus"])
# a value each field accepts, so that whole settings validate and the layers' order shows
_VALID: dict[str, list[Any]] = {
    "base_url": ["http://127.0.0.1:8000/v1", "https://h/v1"], "model": ["m", "my-model"],
    "provider": ["openai", "anthropic"], "api_key_env": ["MY_KEY", "K"],
    "timeout_s": ["2.5", 3, 0.5], "task_deadline_s": [9, "1e2"], "rps": ["0.5", 2],
    "max_retries": ["3", 2], "concurrency": [7, "4"], "max_tasks": [1, "9"],
    "max_steps": ["2", 5], "task_dirs": ["/a:/b", ["/c"], "/d"], "max_in_flight": [4, "3"],
    "stream": ["true", False, "0"], "bogus": [1]}


def _value(name: str, anything: st.SearchStrategy[Any]) -> st.SearchStrategy[tuple[str, Any]]:
    return st.tuples(st.just(name), st.sampled_from(_VALID[name]) | anything)


def _layer(anything: st.SearchStrategy[Any], size: int) -> st.SearchStrategy[dict[str, Any]]:
    return st.lists(_NAMES.flatmap(lambda n: _value(n, anything)), max_size=size).map(dict)


def _spellings(name: str) -> st.SearchStrategy[str]:
    var = f"AGENTKIT_{name.upper()}"
    return st.sampled_from([var, var.lower(), var.title(), var[:9] + name])


_ENV = _layer(_WORDS | st.text(max_size=6), 6).flatmap(
    lambda found: st.tuples(*[st.tuples(_spellings(k), st.just(str(v))) for k, v in
                              found.items()]).map(list))
_FILE = st.one_of(st.none(), st.just("not = valid = toml"), _layer(_VALUES, 5))
_FLAGS = _layer(st.none() | _VALUES, 4)


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return "nan" if math.isnan(value) else ("inf" if value == math.inf else
                                                "-inf" if value == -math.inf else repr(value))
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value)  # a TOML basic string: the same escapes
    if isinstance(value, list):
        return "[" + ", ".join(map(_toml, value)) + "]"
    return "{" + ", ".join(f"{k} = {_toml(v)}" for k, v in value.items()) + "}"


def _outcome(read: Any, *args: Any) -> tuple[str, Any]:
    try:
        got = read(*args)
    except ConfigError as exc:
        return "error", str(exc)
    return "settings", (sorted(type(got).model_fields), got.model_dump())


@example(env_items=[("AGENTKIT_MODEL", "env")], file={"model": "file"}, flags={},
         where="flag")
@example(env_items=[], file={"base_url": {"a": 1}}, flags={"base_url": {"b": 2}},
         where="env")
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(env_items=_ENV, file=_FILE, flags=_FLAGS, where=st.sampled_from(["flag", "env", "xdg"]))
def test_the_reader_gives_what_pydantic_settings_gives(env_items: list[tuple[str, str]],
                                                       file: Any, flags: dict[str, Any],
                                                       where: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(env_items)
        config: str | None = None
        if file is not None:
            path = Path(tmp) / "agentkit" / "config.toml"
            path.parent.mkdir()
            path.write_text(file if isinstance(file, str) else
                            "".join(f"{k} = {_toml(v)}\n" for k, v in file.items()))
            if where == "flag":
                config = str(path)
            elif where == "env":
                env["AGENTKIT_CONFIG"] = str(path)
        if where == "xdg" or file is None:  # the default file, present or not
            env.setdefault("XDG_CONFIG_HOME", tmp)
            env.pop("AGENTKIT_CONFIG", None)
        fast = _outcome(read_settings, config, dict(flags), env)
        reference = _outcome(load_settings, config, dict(flags), env)
    assert fast == reference


def test_the_reader_and_settings_have_the_same_fields() -> None:
    """Settings is built on SettingsValues' fields; only task_dirs is declared again, to
    mark it NoDecode for pydantic-settings, and it must stay the same field otherwise."""
    assert list(Settings.model_fields) == FIELDS
    for name, field in SettingsValues.model_fields.items():
        theirs = Settings.model_fields[name]
        assert (theirs.annotation, theirs.default, theirs.default_factory) == (
            field.annotation, field.default, field.default_factory), name
        assert [m for m in theirs.metadata if m.__class__.__name__ != "type"] == [
            m for m in field.metadata], name


def test_the_reader_reads_the_process_environment_as_load_settings_does() -> None:
    saved = dict(os.environ)
    try:
        os.environ.update({"AGENTKIT_CONFIG": "/dev/null", "AGENTKIT_MAX_STEPS": "3",
                           "agentkit_task_dirs": "/x:/y", "AGENTKIT_MODEL": ""})
        assert read_settings().model_dump() == load_settings().model_dump()
        assert read_settings().max_steps == 3
    finally:
        os.environ.clear()
        os.environ.update(saved)
