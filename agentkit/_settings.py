"""The settings' fields and their reading, without pydantic-settings.

``agentkit.Settings`` (``_config``) is a pydantic-settings ``BaseSettings`` built on the
fields below; importing pydantic-settings costs the command line about 20 ms (its source
providers, dotenv), a twentieth of a whole ``agentkit ask``. The command line therefore reads
the same layers (defaults < config file < ``AGENTKIT_*`` < flags) with :func:`read_settings`:
the environment taken as ``_config._Environ`` gives it to pydantic-settings (names matched
case-insensitively, ``task_dirs`` not JSON-decoded), merged in pydantic-settings' order, then
validated by the same fields. ``tests/test_settings_read.py`` proves the two equal on
generated environments, config files and flags.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator


class ConfigError(ValueError):
    pass


class SettingsValues(BaseModel):
    """The fields of :class:`agentkit.Settings`, their bounds and what is derived from them."""

    model_config = ConfigDict(extra="forbid", validate_default=False)

    base_url: str | None = None
    model: str | None = None
    provider: Literal["openai", "anthropic"] = "openai"
    api_key_env: str | None = None
    timeout_s: float = Field(120.0, gt=0)
    max_retries: int = Field(5, ge=1)
    concurrency: int = Field(64, ge=1)
    max_tasks: int = Field(8, ge=1)
    task_deadline_s: float = Field(300.0, gt=0)
    max_steps: int = Field(12, ge=1)
    # a list in TOML, PATH-style (os.pathsep) in a variable or a flag (Settings marks it
    # NoDecode, so pydantic-settings never reads a variable's value as JSON)
    task_dirs: list[str] = Field(default_factory=list)
    rps: float | None = Field(None, gt=0)
    max_in_flight: int | None = Field(None, ge=1)
    stream: bool = False  # ask for SSE ("stream": true); a server that requires it gets it anyway

    @field_validator("task_dirs", mode="before")
    @classmethod
    def _paths(cls, value: Any) -> Any:
        return [p for p in value.split(os.pathsep) if p] if isinstance(value, str) else value

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


S = TypeVar("S", bound=SettingsValues)
# what one reader does with the layers: (flags, the config file's values, the environment)
Build = Callable[[dict[str, Any], dict[str, Any], Mapping[str, str]], S]


def read_settings(config_file: str | None = None, overrides: dict[str, Any] | None = None,
                  environ: Mapping[str, str] | None = None) -> SettingsValues:
    """What ``load_settings`` gives, as :class:`SettingsValues`, without pydantic-settings."""
    return load(config_file, overrides, environ, _merged)


def _merged(given: dict[str, Any], file: dict[str, Any], env: Mapping[str, str]
            ) -> SettingsValues:
    # pydantic-settings folds its sources from the lowest (the file) up, each later one
    # deep-merged over the one before (its deep_update)
    state = _deep_update(_deep_update(dict(file), environ_values(env)), given)
    return SettingsValues.model_validate(state)


def environ_values(env: Mapping[str, str]) -> dict[str, Any]:
    """The ``AGENTKIT_<FIELD>`` variables, any case, as ``_config._Environ`` reads them: the
    names lower-cased (a later spelling of the same name wins), empty values kept."""
    lowered = {k.lower(): v for k, v in env.items()}
    found = ((name, lowered.get(f"agentkit_{name}")) for name in SettingsValues.model_fields)
    return {name: value for name, value in found if value is not None}


def _deep_update(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = base.copy()
    for key, value in over.items():
        if key in out and isinstance(out[key], dict) and isinstance(value, dict):
            out[key] = _deep_update(out[key], value)
        else:
            out[key] = value
    return out


def load(config_file: str | None, overrides: dict[str, Any] | None,
         environ: Mapping[str, str] | None, build: Build[S]) -> S:
    """The layers read and checked, ``build`` making the settings of them; every problem a
    ConfigError that says where the value came from."""
    env = os.environ if environ is None else environ
    file, data = _config_file(config_file, env)
    given = {k: v for k, v in (overrides or {}).items() if v is not None}
    try:
        settings = build(given, data, env)
    except ValidationError as exc:
        raise ConfigError(_explain(exc, given, env, file)) from None
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


def _config_file(config_file: str | None, env: Mapping[str, str]
                 ) -> tuple[Path, dict[str, Any]]:
    """The config file's path and values ({} when none is given and the default is absent)."""
    path = config_file or env.get("AGENTKIT_CONFIG")
    xdg = env.get("XDG_CONFIG_HOME") or ""
    # XDG: a relative value is invalid and ignored (Base Directory Specification)
    base = Path(xdg) if xdg.startswith("/") else Path.home() / ".config"
    default = base / "agentkit" / "config.toml"
    file = Path(path) if path else default
    if not (path or default.is_file()):
        return file, {}
    try:
        data = tomllib.loads(file.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"config file {file}: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config file {file} is not valid TOML: {exc}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"config file {file} is not UTF-8 text") from None
    except (ValueError, RecursionError) as exc:  # a 5000-digit integer, deep nesting
        raise ConfigError(f"config file {file}: a value is out of bounds "
                          f"({type(exc).__name__}); fix or remove it") from None
    known = set(SettingsValues.model_fields)
    for key in data:
        if key not in known:
            raise ConfigError(f"config file {file}: unknown setting {key!r}; known: "
                              f"{', '.join(sorted(known))}")
    return file, data


def _explain(exc: ValidationError, given: dict[str, Any], env: Mapping[str, str],
             file: Path) -> str:
    """The first problem, said with where the value came from (flag, variable or file)."""
    err = exc.errors()[0]
    name = str(err["loc"][0]) if err["loc"] else "?"
    if name in given:
        source = f"--{name.replace('_', '-')}"
    elif env.get(f"AGENTKIT_{name.upper()}"):
        source = f"AGENTKIT_{name.upper()}"
    else:
        source = f"config file {file}"
    kind = err["type"]
    if kind == "literal_error":
        return f"{source}: provider must be 'openai' or 'anthropic', not {err['input']!r}"
    if kind.endswith("_parsing") or kind.endswith("_type"):
        return f"{source}: {name} must be {kind.split('_')[0]}, got {err['input']!r}"
    if kind in ("greater_than_equal", "greater_than"):
        bound = "at least 1" if kind == "greater_than_equal" else "positive"
        return f"{source}: {name} must be {bound}, got {err['input']!r}"
    return f"{source}: {name}: {err['msg']}"
