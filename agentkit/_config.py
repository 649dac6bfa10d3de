"""Settings: defaults < config file (TOML) < ``AGENTKIT_*`` environment < CLI flags.

The config file is ``--config FILE``, else ``$AGENTKIT_CONFIG``, else
``$XDG_CONFIG_HOME/agentkit/config.toml`` (``~/.config`` when unset) when it exists::

    base_url = "http://127.0.0.1:8000/v1"
    model = "my-model"
    provider = "openai"          # or "anthropic"
    api_key_env = "MY_KEY_VAR"   # name of the variable holding the key; never the key itself
    concurrency = 32
    rps = 5                      # model requests per second, shared by all subagents
    max_in_flight = 16           # model requests at once
"""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any


class ConfigError(ValueError):
    pass


@dataclass
class Settings:
    """Everything configurable; see :func:`load_settings` for where values come from.

    >>> Settings(base_url="http://127.0.0.1:8000/v1", model="m").llm_configured
    True
    """

    base_url: str | None = None
    model: str | None = None
    provider: str = "openai"
    api_key_env: str | None = None
    timeout_s: float = 120.0
    max_retries: int = 5
    concurrency: int = 64
    max_tasks: int = 8
    task_deadline_s: float = 300.0
    max_steps: int = 12
    task_dirs: list[str] = field(default_factory=list)
    rps: float | None = None
    max_in_flight: int | None = None

    @property
    def llm_configured(self) -> bool:
        return bool(self.base_url and self.model)

    def api_key_source(self) -> str:
        """Where the API key is read from, for messages: the variable's name, never the key."""
        if self.api_key_env:
            return self.api_key_env
        default = "ANTHROPIC_API_KEY" if self.provider == "anthropic" else "OPENAI_API_KEY"
        return "AGENTKIT_API_KEY" if os.environ.get("AGENTKIT_API_KEY") else default

    def api_key(self) -> str | None:
        if self.api_key_env:
            return os.environ.get(self.api_key_env)
        default = "ANTHROPIC_API_KEY" if self.provider == "anthropic" else "OPENAI_API_KEY"
        return os.environ.get("AGENTKIT_API_KEY") or os.environ.get(default)


_TYPES = {f.name: f.type for f in fields(Settings)}


def _coerce(name: str, value: Any, source: str) -> Any:
    kind = _TYPES[name]
    try:
        if kind in ("int", "int | None"):
            return int(value)
        if kind in ("float", "float | None"):
            return float(value)
        if kind == "list[str]":
            return value.split(os.pathsep) if isinstance(value, str) else [str(v) for v in value]
    except (TypeError, ValueError):
        raise ConfigError(f"{source}: {name} must be {kind}, got {value!r}") from None
    return str(value) if value is not None else None


def load_settings(config_file: str | None = None, overrides: dict[str, Any] | None = None,
                  environ: dict[str, str] | None = None) -> Settings:
    """Settings from the config file, then ``AGENTKIT_*`` variables, then ``overrides``.

    >>> load_settings(overrides={"base_url": "http://127.0.0.1:8000/v1", "model": "my-model"},
    ...               environ={"AGENTKIT_CONFIG": "/dev/null"}).model
    'my-model'
    """
    env = os.environ if environ is None else environ
    values: dict[str, Any] = {}
    path = config_file or env.get("AGENTKIT_CONFIG")
    xdg = env.get("XDG_CONFIG_HOME") or ""
    # XDG: a relative value is invalid and ignored (Base Directory Specification)
    base = Path(xdg) if xdg.startswith("/") else Path.home() / ".config"
    default = base / "agentkit" / "config.toml"
    if path or default.is_file():
        file = Path(path) if path else default
        try:
            data = tomllib.loads(file.read_text(encoding="utf-8"))
        except OSError as exc:
            raise ConfigError(f"config file {file}: {exc.strerror}") from None
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"config file {file} is not valid TOML: {exc}") from None
        for key, value in data.items():
            if key not in _TYPES:
                raise ConfigError(f"config file {file}: unknown setting {key!r}; known: "
                                  f"{', '.join(sorted(_TYPES))}")
            values[key] = _coerce(key, value, str(file))
    for name in _TYPES:
        var = f"AGENTKIT_{name.upper()}"
        if env.get(var):
            values[name] = _coerce(name, env[var], var)
    for key, value in (overrides or {}).items():
        if value is not None:
            values[key] = _coerce(key, value, f"--{key.replace('_', '-')}")
    settings = Settings(**values)
    if settings.provider not in ("openai", "anthropic"):
        raise ConfigError(f"provider must be 'openai' or 'anthropic', not {settings.provider!r}")
    for name in ("concurrency", "max_tasks", "max_steps", "max_retries", "max_in_flight"):
        value = getattr(settings, name)
        if value is not None and value < 1:
            raise ConfigError(f"{name} must be at least 1, got {value}")
    for name in ("timeout_s", "task_deadline_s", "rps"):
        value = getattr(settings, name)
        if value is not None and value <= 0:
            raise ConfigError(f"{name} must be positive, got {value}")
    if settings.base_url and not re.fullmatch(r"https?://[^\s/:?#]+(:\d+)?(/\S*)?",
                                              settings.base_url):
        raise ConfigError(f"base_url {settings.base_url!r} is not an http(s) URL: give the "
                          "endpoint's address, e.g. http://127.0.0.1:8000/v1")
    if bool(settings.base_url) != bool(settings.model):
        have, missing = (("base_url", "model") if settings.base_url else ("model", "base_url"))
        raise ConfigError(f"{have} is set but {missing} is not: give both (--base-url and "
                          "--model, or AGENTKIT_BASE_URL and AGENTKIT_MODEL) for LLM mode, or "
                          "neither for catalog mode")
    return settings
