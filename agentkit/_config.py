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
from collections.abc import Mapping
from contextvars import ContextVar
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, ValidationError, field_validator
from pydantic.fields import FieldInfo
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)


class ConfigError(ValueError):
    pass


# The layers of one load_settings() call: the config file's values and the environment to read
# (a ContextVar, so concurrent loads in one process never see each other's).
_FILE: ContextVar[dict[str, Any] | None] = ContextVar("agentkit_config_file", default=None)
_ENVIRON: ContextVar[Mapping[str, str] | None] = ContextVar("agentkit_environ", default=None)


class _Environ(EnvSettingsSource):
    """``AGENTKIT_*`` from the environment load_settings() was given (``os.environ`` unless a
    test or an embedder passes another)."""

    def _load_env_vars(self) -> Mapping[str, str | None]:
        env = _ENVIRON.get()
        if env is None:
            return super()._load_env_vars()
        return {k.lower(): v for k, v in env.items()}


class _File(PydanticBaseSettingsSource):
    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return (_FILE.get() or {}).get(field_name), field_name, False

    def __call__(self) -> dict[str, Any]:
        return dict(_FILE.get() or {})


class Settings(BaseSettings):
    """Everything configurable. Layers, later winning: defaults, the config file (TOML),
    ``AGENTKIT_*`` variables, then what is passed (CLI flags); see :func:`load_settings`.

    >>> Settings(base_url="http://127.0.0.1:8000/v1", model="m").llm_configured
    True
    """

    model_config = SettingsConfigDict(env_prefix="AGENTKIT_", extra="forbid",
                                      env_ignore_empty=True, validate_default=False)

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
    # a list in TOML, PATH-style (os.pathsep) in a variable or a flag
    task_dirs: Annotated[list[str], NoDecode] = Field(default_factory=list)
    rps: float | None = Field(None, gt=0)
    max_in_flight: int | None = Field(None, ge=1)
    stream: bool = False  # ask for SSE ("stream": true); a server that requires it gets it anyway

    @field_validator("task_dirs", mode="before")
    @classmethod
    def _paths(cls, value: Any) -> Any:
        return [p for p in value.split(os.pathsep) if p] if isinstance(value, str) else value

    @classmethod
    def settings_customise_sources(cls, settings_cls: type[BaseSettings],
                                   init_settings: PydanticBaseSettingsSource,
                                   env_settings: PydanticBaseSettingsSource,
                                   dotenv_settings: PydanticBaseSettingsSource,
                                   file_secret_settings: PydanticBaseSettingsSource,
                                   ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings, _Environ(settings_cls), _File(settings_cls))

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


def load_settings(config_file: str | None = None, overrides: dict[str, Any] | None = None,
                  environ: dict[str, str] | None = None) -> Settings:
    """Settings from the config file, then ``AGENTKIT_*`` variables, then ``overrides``.

    >>> load_settings(overrides={"base_url": "http://127.0.0.1:8000/v1", "model": "my-model"},
    ...               environ={"AGENTKIT_CONFIG": "/dev/null"}).model
    'my-model'
    """
    env = os.environ if environ is None else environ
    path = config_file or env.get("AGENTKIT_CONFIG")
    xdg = env.get("XDG_CONFIG_HOME") or ""
    # XDG: a relative value is invalid and ignored (Base Directory Specification)
    base = Path(xdg) if xdg.startswith("/") else Path.home() / ".config"
    default = base / "agentkit" / "config.toml"
    data: dict[str, Any] = {}
    file = Path(path) if path else default
    if path or default.is_file():
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
        known = set(Settings.model_fields)
        for key in data:
            if key not in known:
                raise ConfigError(f"config file {file}: unknown setting {key!r}; known: "
                                  f"{', '.join(sorted(known))}")
    given = {k: v for k, v in (overrides or {}).items() if v is not None}
    tokens = (_FILE.set(data), _ENVIRON.set(env))
    try:
        settings = Settings(**given)
    except ValidationError as exc:
        raise ConfigError(_explain(exc, given, env, file)) from None
    finally:
        _FILE.reset(tokens[0])
        _ENVIRON.reset(tokens[1])
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
