"""Settings precedence: file < environment < flags; bad values say where they came from."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentkit import load_settings
from agentkit._config import ConfigError


def test_precedence(tmp_path: Path) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text('base_url = "http://file/v1"\nmodel = "file-model"\nconcurrency = 3\n')
    env = {"AGENTKIT_MODEL": "env-model", "AGENTKIT_CONCURRENCY": "7"}
    s = load_settings(str(cfg), {"concurrency": 9}, environ=env)
    assert (s.base_url, s.model, s.concurrency) == ("http://file/v1", "env-model", 9)
    assert s.llm_configured


def test_api_key_from_named_variable(tmp_path: Path) -> None:
    s = load_settings(None, {"api_key_env": "MY_KEY"}, environ={"AGENTKIT_CONFIG": ""})
    import os

    os.environ["MY_KEY"] = "k1"
    try:
        assert s.api_key() == "k1"
    finally:
        del os.environ["MY_KEY"]


@pytest.mark.parametrize("text,words", [
    ("concurrency = 'many'\n", "concurrency must be int"),
    ("provider = 'bedrock'\n", "provider must be"),
    ("nope = 1\n", "unknown setting 'nope'"),
    ("model = \n", "not valid TOML"),
])
def test_bad_config(tmp_path: Path, text: str, words: str) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text(text)
    with pytest.raises(ConfigError, match=words):
        load_settings(str(cfg), environ={})


@pytest.mark.parametrize("where,says", [
    ({"env": {"AGENTKIT_CONCURRENCY": "0"}},
     "AGENTKIT_CONCURRENCY: concurrency must be at least 1"),
    ({"flags": {"timeout_s": -1.0}}, "--timeout-s: timeout_s must be positive"),
    ({"env": {"AGENTKIT_PROVIDER": "bedrock"}}, "AGENTKIT_PROVIDER: provider must be 'openai'"),
    ({"env": {"AGENTKIT_TASK_DIRS": "/a:/b"}}, None),
])
def test_a_bad_value_names_where_it_came_from(tmp_path: Path, where: dict[str, Any],
                                              says: str | None) -> None:
    env = {"AGENTKIT_CONFIG": "/dev/null", **where.get("env", {})}
    if says is None:
        assert load_settings(None, where.get("flags"), environ=env).task_dirs == ["/a", "/b"]
        return
    with pytest.raises(ConfigError) as err:
        load_settings(None, where.get("flags"), environ=env)
    assert str(err.value).startswith(says), str(err.value)
