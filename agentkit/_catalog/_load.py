"""Loading the catalog: every template file of the bundled and extra task directories,
validated against the schema (``_template``) and checked against the recipe functions and
expressions (``_check``).

Its own module because the check needs the recipe runner's registry, and the recipe runner
needs the schema: loading sits above all three.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import sys
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from .._cachefiles import read, read_marshalled, write
from .._resources import bundled
from . import _check, _jinja_cache, _template
from ._template import _LOADER, TaskTemplate, TemplateError


def load_template(path: Path) -> TaskTemplate:
    try:
        text = path.read_text(encoding="utf-8")
        raw = _parsed(text)
    except yaml.YAMLError as exc:
        raise TemplateError(f"{path}: not valid YAML: {exc}") from None
    except OSError as exc:
        raise TemplateError(f"{path}: cannot read: {exc.strerror}") from None
    if not isinstance(raw, dict):
        raise TemplateError(f"{path}: a task template must be a mapping of fields")
    try:
        tpl = TaskTemplate.model_validate(raw)
    except ValidationError as exc:
        problems = "; ".join(
            f"field '{'.'.join(str(p) for p in e['loc'])}': {e['msg']}" for e in exc.errors())
        raise TemplateError(f"{path}: {problems}") from None
    if tpl.name != path.stem:
        raise TemplateError(f"{path}: field 'name' is {tpl.name!r} but the file is named "
                            f"{path.name}; they must match")
    _checked(path, tpl, text)
    tpl.source = str(path)
    return tpl


def _parsed(text: str) -> Any:
    """``yaml.load(text, Loader=_LOADER)``, kept in the user's cache (``_cachefiles``' rules)
    under a key covering the text, PyYAML's version, the loader and the Python build: parsing
    the bundled templates was ~6 ms of every ``agentkit ask``. An entry names the text it was
    made for and is written only when it reads back equal to what the loader gave, in value
    and in repr (marshal keeps the types; a value it cannot hold, a YAML timestamp, is not
    cached); a damaged entry is parsed afresh. Errors are the loader's own: a text that does
    not parse is never cached."""
    name = hashlib.sha256("\0".join([yaml.__version__, _LOADER.__name__, sys.version, text])
                          .encode("utf-8", "surrogatepass")).hexdigest() + ".yaml"
    entry = read_marshalled(name)
    if isinstance(entry, tuple) and len(entry) == 2 and entry[0] == text:
        return entry[1]
    raw = yaml.load(text, Loader=_LOADER)
    try:
        blob = marshal.dumps((text, raw))
        again = marshal.loads(blob)[1]
    except ValueError:  # a value marshal cannot hold
        return raw
    if again == raw and repr(again) == repr(raw):
        write(name, blob)
    return raw


def _checked(path: Path, tpl: TaskTemplate, text: str) -> None:
    """The static checks, skipped for a text that passed them before under the same checker
    (a marker in the on-disk cache, keyed by the text, the checker's own source and the
    recipe functions): parsing every claim of every template was work that grew with the
    catalog, paid on each run for texts that had not changed."""
    from ._recipe import FUNCTIONS, _env

    checker = _checker_source()
    marker = _jinja_cache.key(_env(), "checked", "\0".join(
        [checker or "", ",".join(sorted(FUNCTIONS)), text])) + ".checked"
    if checker is not None and read(marker) is not None:
        return
    found = _check.problems(tpl)
    if found:
        raise TemplateError(f"{path}: " + "; ".join(found))
    if checker is not None:
        write(marker, b"")


@lru_cache(maxsize=1)
def _checker_source() -> str | None:
    """The checks' and the schema's own code (None where it cannot be read: no marker)."""
    try:
        return "\0".join(Path(m.__file__ or "").read_text(encoding="utf-8")
                         for m in (_check, _template))
    except OSError:
        return None


def check_tools(catalog: dict[str, TaskTemplate], tools: Sequence[str]) -> None:
    """Every tool the catalog's templates use is one the orchestrator offers (the rest of a
    template was checked when it loaded)."""
    known = set(tools)
    for tpl in catalog.values():
        found = [f"field 'tools': no tool {t!r} (offered: {', '.join(sorted(known))})"
                 for t in tpl.tools if t not in known]
        if found:
            raise TemplateError(f"{tpl.source or tpl.name}: " + "; ".join(found))


@lru_cache(maxsize=32)
def _load_dir(directory: str, files: tuple[tuple[str, int, int], ...]) -> list[TaskTemplate]:
    """Parsed templates of one directory, cached while its files are unchanged (parsing the
    YAML was the largest cost of a catalog investigation)."""
    return [load_template(Path(directory) / name) for name, _, _ in files]


def template_dirs(extra: Sequence[str | os.PathLike[str]] | None = None) -> list[Path]:
    dirs = [bundled("tasks")]
    env = os.environ.get("AGENTKIT_TASKS_PATH", "")
    dirs += [Path(p) for p in env.split(os.pathsep) if p]
    dirs += [Path(p) for p in extra or []]
    return dirs


def load_catalog(extra: Sequence[str | os.PathLike[str]] | None = None
                 ) -> dict[str, TaskTemplate]:
    """All templates: bundled first, then ``AGENTKIT_TASKS_PATH``, then ``extra``; a later
    directory's template replaces a bundled one of the same name."""
    catalog: dict[str, TaskTemplate] = {}
    for d in template_dirs(extra):
        if not d.is_dir():
            raise TemplateError(f"task directory {d} does not exist")
        files = tuple(sorted((p.name, p.stat().st_mtime_ns, p.stat().st_size)
                             for p in d.glob("*.y*ml")))
        for tpl in _load_dir(str(d), files):
            catalog[tpl.name] = tpl.model_copy(deep=True)
    for tpl in catalog.values():
        for c in tpl.companions:
            if c not in catalog:
                raise TemplateError(f"{tpl.source}: field 'companions' names unknown task {c!r}")
    return catalog
