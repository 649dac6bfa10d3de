"""The on-disk cache of compiled catalog expressions and claims, and of load-time checks.

What must hold, from what the cache claims: a cached entry is the code Jinja itself compiles
for that source in that environment (so rendering cannot differ); the answer to the reference
question is byte-identical cold, warm and with the cache off; an entry that is not a regular
file of ours writable only by us, or that is not a code object, is never loaded; a template
whose text changed is checked again, and one with a problem is never marked as checked.
"""

from __future__ import annotations

import marshal
import os
import subprocess
import sys
from pathlib import Path

import jinja2
import pytest
from jinja2 import nodes
from jinja2.parser import Parser

from agentkit._catalog import _check, _jinja_cache, _load, _recipe
from agentkit._catalog._template import TemplateError
from tests.conftest import EXAMPLES, REFERENCE_QUESTION

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    where = tmp_path / "cache"
    monkeypatch.setenv("AGENTKIT_CACHE_DIR", str(where))
    _recipe._expr.cache_clear()
    _recipe._text.cache_clear()
    _load._load_dir.cache_clear()
    return where


def _sources() -> tuple[list[str], list[str]]:
    """Every expression and every claim/argument text of the bundled catalog."""
    exprs, texts = [], []
    for tpl in _load.load_catalog().values():
        for step in tpl.steps:
            exprs += [s for s in (step.when, step.value) if s]
            texts += [v for _, v in _check._strings(step.args, "") if "{{" in v]
        for f in tpl.findings:
            texts.append(f.claim)
            exprs += [f.when] if f.when else []
        exprs += [tpl.verdict.value] if tpl.verdict else []
    return sorted(set(exprs)), sorted(set(texts))


def test_cached_code_is_the_code_jinja_compiles(cache: Path) -> None:
    env = _recipe._env()
    exprs, texts = _sources()
    assert len(exprs) > 50 and len(texts) > 20
    for source in texts:
        _jinja_cache.from_string(env, source)
        stored = (cache / (_jinja_cache.key(env, "template", source) + ".code")).read_bytes()
        assert marshal.loads(stored).co_code == env.compile(source).co_code
    for source in exprs:
        fresh = env.compile_expression(source, undefined_to_none=False)
        ours = _jinja_cache.compile_expression(env, source, undefined_to_none=False)
        again = _jinja_cache.compile_expression(env, source, undefined_to_none=False)  # a hit
        assert (ours._template.root_render_func.__code__.co_code
                == fresh._template.root_render_func.__code__.co_code)
        assert again._undefined_to_none is fresh._undefined_to_none


def test_the_reference_answer_is_identical_cold_warm_and_off(tmp_path: Path) -> None:
    def ask(cache_dir: str) -> str:
        env = {**os.environ, "AGENTKIT_CACHE_DIR": cache_dir, "PYTHONPATH": str(REPO)}
        return subprocess.run(
            [sys.executable, "-m", "agentkit", "ask", REFERENCE_QUESTION, "--root",
             str(EXAMPLES / "blackwell-kimi"), "-q", "--trace", os.devnull],
            env=env, capture_output=True, text=True, check=True, cwd=REPO).stdout

    off = ask("off")
    cold = ask(str(tmp_path / "c"))
    entries = len(os.listdir(tmp_path / "c"))
    warm = ask(str(tmp_path / "c"))
    assert off == cold == warm and off.strip()
    assert entries > 50 and len(os.listdir(tmp_path / "c")) == entries  # warm added nothing
    kinds = {Path(n).suffix for n in os.listdir(tmp_path / "c")}
    assert {".code", ".re", ".jinja"} <= kinds  # expressions, regexes, the answer template


def test_syntax_errors_are_jinjas_own(cache: Path) -> None:
    env = _recipe._env()
    for bad in ("a ==", "x y", "foo(", "a | nosuchfilter"):
        with pytest.raises(jinja2.TemplateError) as theirs:
            env.compile_expression(bad)
        with pytest.raises(jinja2.TemplateError) as ours:
            _jinja_cache.compile_expression(env, bad, undefined_to_none=False)
        assert (type(ours.value), str(ours.value)) == (type(theirs.value), str(theirs.value))
    assert not list(cache.glob("*.code"))  # nothing stored for a source that does not compile


@pytest.mark.parametrize("how", ["group-writable", "link", "not code", "garbage"])
def test_an_entry_that_is_not_safely_ours_is_not_loaded(cache: Path, how: str) -> None:
    # The entry planted under the key of "1 + 1" is the code of "41": loading it would show.
    path = _plant(cache, "1 + 1", _code_of("41"))
    if how == "group-writable":
        path.chmod(0o664)
    elif how == "link":
        real = cache / "elsewhere"
        path.rename(real)
        path.symlink_to(real)
    elif how == "not code":
        path.write_bytes(marshal.dumps(["41"]))
    else:
        path.write_bytes(b"\x00not marshal")
    expr = _jinja_cache.compile_expression(_recipe._env(), "1 + 1", undefined_to_none=False)
    assert expr() == 2


def test_an_entry_of_ours_is_loaded(cache: Path) -> None:
    # The converse of the test above, so that it can fail: the same planted entry, safely
    # ours, is what runs.
    _plant(cache, "1 + 1", _code_of("41")).chmod(0o600)
    assert _jinja_cache.compile_expression(_recipe._env(), "1 + 1",
                                           undefined_to_none=False)() == 41


def _plant(cache: Path, source: str, code: object) -> Path:
    env = _recipe._env()
    path = cache / (_jinja_cache.key(env, "expression", source) + ".code")
    cache.mkdir(mode=0o700, exist_ok=True)
    path.write_bytes(marshal.dumps(code))
    path.chmod(0o600)
    return path


def _code_of(source: str) -> object:
    env = _recipe._env()
    expr = Parser(env, source, state="variable").parse_expression()
    expr.set_environment(env)
    return env.compile(nodes.Template([nodes.Assign(nodes.Name("result", "store"), expr,
                                                    lineno=1)], lineno=1))


def test_off_writes_nothing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("AGENTKIT_CACHE_DIR", "off")
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.setenv("HOME", str(home))
    _load._load_dir.cache_clear()
    _load.load_catalog()
    _jinja_cache.from_string(_recipe._env(), "{{ 1 }}")
    assert not list(home.rglob("*"))
    monkeypatch.delenv("AGENTKIT_CACHE_DIR")  # and the default place is where it says
    _jinja_cache.from_string(_recipe._env(), "{{ 2 }}")
    assert list((home / ".cache" / "agentkit").glob("*.code"))


def test_a_template_is_checked_again_when_its_text_changes(cache: Path,
                                                           tmp_path: Path) -> None:
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    src = _load.bundled("tasks") / "allreduce-cost.yaml"
    text = src.read_text()
    target = tasks / src.name
    target.write_text(text)
    _load.load_template(target)
    marks = set(cache.glob("*.checked"))
    assert len(marks) == 1
    # the same template with a claim that does not parse: checked again, refused, not marked
    broken = text.replace("    claim: At tensor parallel 1", "    claim: '{{ 1 + }}' #", 1)
    assert broken != text
    target.write_text(broken)
    with pytest.raises(TemplateError, match="findings"):
        _load.load_template(target)
    assert set(cache.glob("*.checked")) == marks


@pytest.mark.parametrize("how", ["garbage", "truncated", "group-writable"])
def test_the_answer_template_renders_the_same_from_any_entry(cache: Path, how: str) -> None:
    from agentkit import Answer, Claim
    from agentkit._render import _template, to_markdown

    answer = Answer(question="Q?", mode="catalog", bottom_line=[Claim(text="A *b* [c]")])
    _template.cache_clear()
    cold = to_markdown(answer)
    (entry,) = cache.glob("*.jinja")
    if how == "garbage":
        entry.write_bytes(b"\x00garbage")
    elif how == "truncated":
        entry.write_bytes(entry.read_bytes()[:40])
    else:
        entry.chmod(0o664)
    _template.cache_clear()
    try:
        assert to_markdown(answer) == cold == "# Q?\n\n## Bottom line\n- A \\*b\\* \\[c\\]\n\n" \
            "## Evidence\n"
    finally:
        _template.cache_clear()
