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

from collections.abc import Mapping
from contextvars import ContextVar
from typing import Annotated, Any

from pydantic import Field
from pydantic.fields import FieldInfo
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from ._settings import ConfigError, SettingsValues, load

__all__ = ["ConfigError", "Settings", "load_settings"]

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


class Settings(BaseSettings, SettingsValues):
    """Everything configurable. Layers, later winning: defaults, the config file (TOML),
    ``AGENTKIT_*`` variables, then what is passed (CLI flags); see :func:`load_settings`.

    >>> Settings(base_url="http://127.0.0.1:8000/v1", model="m").llm_configured
    True
    """

    # the fields are SettingsValues' (the command line reads them without pydantic-settings)
    model_config = SettingsConfigDict(env_prefix="AGENTKIT_", extra="forbid",
                                      env_ignore_empty=True, validate_default=False)

    task_dirs: Annotated[list[str], NoDecode] = Field(default_factory=list)

    @classmethod
    def settings_customise_sources(cls, settings_cls: type[BaseSettings],
                                   init_settings: PydanticBaseSettingsSource,
                                   env_settings: PydanticBaseSettingsSource,
                                   dotenv_settings: PydanticBaseSettingsSource,
                                   file_secret_settings: PydanticBaseSettingsSource,
                                   ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings, _Environ(settings_cls), _File(settings_cls))


def load_settings(config_file: str | None = None, overrides: dict[str, Any] | None = None,
                  environ: dict[str, str] | None = None) -> Settings:
    """Settings from the config file, then ``AGENTKIT_*`` variables, then ``overrides``.

    >>> load_settings(overrides={"base_url": "http://127.0.0.1:8000/v1", "model": "my-model"},
    ...               environ={"AGENTKIT_CONFIG": "/dev/null"}).model
    'my-model'
    """
    return load(config_file, overrides, environ, _built)


def _built(given: dict[str, Any], file: dict[str, Any], env: Mapping[str, str]) -> Settings:
    tokens = (_FILE.set(file), _ENVIRON.set(env))
    try:
        return Settings(**given)
    finally:
        _FILE.reset(tokens[0])
        _ENVIRON.reset(tokens[1])
