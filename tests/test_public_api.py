"""The public surface: small, sorted, documented."""

from __future__ import annotations

import inspect

import agentkit


def test_all_is_sorted_and_importable() -> None:
    # isort-style, as ruff's RUF022 keeps it: CONSTANTS, then Classes, then functions
    def kind(name: str) -> tuple[int, str]:
        return (0 if name.isupper() else 1 if name[0].isupper() else 2, name)

    assert agentkit.__all__ == sorted(agentkit.__all__, key=kind)
    for name in agentkit.__all__:
        assert hasattr(agentkit, name), name


def test_public_names_have_docstrings() -> None:
    missing = [n for n in agentkit.__all__ if not n.isupper()
               and (inspect.isclass(getattr(agentkit, n)) or callable(getattr(agentkit, n)))
               and not inspect.getdoc(getattr(agentkit, n))]
    assert missing == []


def test_schemas_export() -> None:
    from agentkit._types import json_schemas

    schemas = json_schemas()
    assert schemas["Answer"]["properties"]["schema_version"]["default"] == agentkit.SCHEMA_VERSION
    assert "findings" in schemas["TaskResult"]["properties"]


def test_every_public_name_has_a_working_example() -> None:
    import doctest

    finder = doctest.DocTestFinder(recurse=False)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    missing, failed = [], []
    for name in agentkit.__all__:
        obj = getattr(agentkit, name)
        if name.isupper() or not (inspect.isclass(obj) or inspect.isfunction(obj)):
            continue  # constants and type aliases carry no docstring of their own
        tests = [t for t in finder.find(obj, name, globs=vars(agentkit).copy()) if t.examples]
        if not tests:
            missing.append(name)
        for t in tests:
            if runner.run(t, out=lambda s: None).failed:
                failed.append(name)
    assert missing == [] and failed == []


def test_every_example_in_every_module_runs() -> None:
    # The public names' examples above were the only ones run: a private module's example
    # could go stale (two had: an expected redaction label, a cut message) or not even
    # parse (a "\n" inside a docstring split its example line).
    import doctest
    import importlib
    import pkgutil

    failed = []
    for info in pkgutil.walk_packages(agentkit.__path__, "agentkit."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        try:
            result = doctest.testmod(module, optionflags=doctest.ELLIPSIS, report=False,
                                     verbose=False)
        except ValueError as exc:  # an example the parser cannot read
            failed.append(f"{info.name}: {exc}")
            continue
        if result.failed:
            failed.append(f"{info.name}: {result.failed} failed")
    assert not failed, failed
