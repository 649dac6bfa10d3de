"""Fuzzing the parsers of host files (issue 12, item 6): parse_config in every format, the
runtime manifests' YAML, container listings and bounded JSON. Any text is entries or a
one-line error for that file, within the deadline; never an exception out of the tool (the
trace writer included: it serializes what the tool returns)."""

from __future__ import annotations

import contextlib
import json
import tempfile
from pathlib import Path
from typing import Any

import anyio
import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from agentkit import Host, Sandbox
from agentkit._bounded import loads_json
from agentkit._hostmodel.runtimes._containers import parse_ps
from agentkit._hostmodel.runtimes._yaml import load_yaml

from .fuzzing import FUZZ, TEXT, VALUES, dumps, nested

FILES = {"json": "etc/c.json", "yaml": "etc/c.yaml", "toml": "etc/c.toml", "ini": "etc/c.ini",
         "dotenv": "etc/default/c", "systemd": "etc/systemd/system/c.service"}


def _toml(value: Any) -> str:
    """A rough TOML writer (the stdlib has none): keys, scalars, arrays, one table level."""
    def scalar(v: Any) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, int | float):
            return {"nan": "nan", "inf": "inf", "-inf": "-inf"}.get(str(v), repr(v))
        if isinstance(v, list):
            return "[" + ", ".join(scalar(x) for x in v) + "]"
        return json.dumps(str(v))
    items = value.items() if isinstance(value, dict) else [("k", value)]
    out = [f"{json.dumps(k)} = {scalar(v)}" for k, v in items if not isinstance(v, dict)]
    for k, v in items:
        if isinstance(v, dict):
            out += [f"[{json.dumps(k)}]", _toml(v)]
    return "\n".join(out) + "\n"


def _ini(value: Any) -> str:
    items = value.items() if isinstance(value, dict) else [("s", value)]
    return "".join(f"[{k}]\nkey = {v}\n{k} : {v}\n" for k, v in items)


_WRITERS = {"json": dumps, "yaml": lambda v: yaml.safe_dump(v, allow_unicode=True),
            "toml": _toml, "ini": _ini,
            "dotenv": lambda v: "".join(f"{k}={x}\n" for k, x in (
                v.items() if isinstance(v, dict) else [("A", v)])),
            "systemd": lambda v: "[Unit]\nDescription=x\n[Service]\n" + "".join(
                f"Environment={k}={x}\nExecStart=/bin/{x} {k}\n" for k, x in (
                    v.items() if isinstance(v, dict) else [("A", v)]))}


@st.composite
def config_text(draw: st.DrawFn, fmt: str) -> str:
    """Text in the format (from random data), then possibly cut or with noise put in, or
    nested deep, or noise alone."""
    how = draw(st.sampled_from(["valid", "valid", "noisy", "noisy", "nested", "noise"]))
    if how == "nested":
        return draw(nested())
    if how == "noise":
        return draw(TEXT)
    try:
        text = _WRITERS[fmt](draw(VALUES))
    except (ValueError, yaml.YAMLError):  # a writer's own refusal, e.g. a surrogate
        text = draw(TEXT)
    if how == "noisy":
        at = draw(st.integers(0, len(text)))
        text = text[:at] + draw(TEXT) + text[at + draw(st.integers(0, 5)):]
    return text


@pytest.fixture(scope="module")
def root() -> Any:
    with tempfile.TemporaryDirectory() as d:
        yield Path(d)


def _parse(root: Path, fmt: str, text: str) -> None:
    path = root / FILES[fmt]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8", "surrogateescape"))
    box = Sandbox(Host.at(root), task_id="t")
    r = anyio.run(box.call, "parse_config", {"path": "/" + FILES[fmt], "format": fmt})
    assert r.ok or (r.error and "\n" not in r.error.strip()), r.error


def _fuzz_format(fmt: str) -> Any:
    @FUZZ
    @given(text=config_text(fmt))
    def test(root: Path, text: str) -> None:
        _parse(root, fmt, text)
    test.__name__ = f"test_fuzz_parse_config_{fmt}"
    return test


test_fuzz_parse_config_json = _fuzz_format("json")
test_fuzz_parse_config_yaml = _fuzz_format("yaml")
test_fuzz_parse_config_toml = _fuzz_format("toml")
test_fuzz_parse_config_ini = _fuzz_format("ini")
test_fuzz_parse_config_dotenv = _fuzz_format("dotenv")
test_fuzz_parse_config_systemd = _fuzz_format("systemd")


@FUZZ
@given(config_text("yaml") | config_text("json"))
def test_fuzz_runtime_yaml(text: str) -> None:
    assert isinstance(load_yaml(text), list)


@FUZZ
@given(config_text("json") | st.lists(config_text("json"), max_size=4).map("\n".join))
def test_fuzz_container_listing(text: str) -> None:
    assert isinstance(parse_ps(text), list)


@FUZZ
@given(config_text("json"))
def test_fuzz_bounded_json(text: str) -> None:
    with contextlib.suppress(ValueError):  # not JSON, or past the limits: callers catch it
        loads_json(text)
