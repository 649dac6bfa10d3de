"""Reading vLLM's attention-backend selection from its installed source, without running it.

Source is parsed with :mod:`ast` and only a tiny, explicit subset is *interpreted*: ``if``
tests over ``device_capability.major/minor`` and ``use_mla``, list literals, string
constants, and ``return`` of such. Anything else yields "undetermined" rather than a guess.
Nothing from the file is ever executed.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

_UNKNOWN = object()


@lru_cache(maxsize=64)
def _tree(source: str) -> ast.Module:
    """Parsed once per distinct text: the same installed files are read by every run (the
    trees are only read, never changed)."""
    return ast.parse(source)


@dataclass
class Guard:
    line: int
    end: int
    text: str
    message: str


@dataclass
class BackendInfo:
    name: str
    class_name: str
    module_path: str
    kv_dtypes: list[str] | None = None
    kv_dtypes_line: int = 0
    cc_source: str = ""
    cc_line: int = 0
    cc_span: tuple[int, int] = (0, 0)
    cc_ok: bool | None = None
    sparse: bool = False
    guards: list[Guard] = field(default_factory=list)


def _eval(node: ast.AST, env: dict[str, Any]) -> Any:
    """Evaluate the small expression subset; ``_UNKNOWN`` for anything outside it."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        return env.get(node.id, _UNKNOWN)
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return env.get(f"{node.value.id}.{node.attr}", _UNKNOWN)
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        items = [_eval(e, env) for e in node.elts]
        return _UNKNOWN if any(i is _UNKNOWN for i in items) else items
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        v = _eval(node.operand, env)
        return _UNKNOWN if v is _UNKNOWN else not v
    if isinstance(node, ast.BoolOp):
        vals = [_eval(v, env) for v in node.values]
        if any(v is _UNKNOWN for v in vals):
            return _UNKNOWN
        return all(vals) if isinstance(node.op, ast.And) else any(vals)
    if isinstance(node, ast.Compare):
        left = _eval(node.left, env)
        for op, comp in zip(node.ops, node.comparators, strict=True):
            right = _eval(comp, env)
            if left is _UNKNOWN or right is _UNKNOWN:
                return _UNKNOWN
            ok = _compare(op, left, right)
            if ok is _UNKNOWN or not ok:
                return ok
            left = right
        return True
    return _UNKNOWN


def _compare(op: ast.cmpop, a: Any, b: Any) -> Any:
    try:
        match op:
            case ast.Eq():
                return a == b
            case ast.NotEq():
                return a != b
            case ast.Lt():
                return a < b
            case ast.LtE():
                return a <= b
            case ast.Gt():
                return a > b
            case ast.GtE():
                return a >= b
            case ast.In():
                return a in b
            case ast.NotIn():
                return a not in b
    except TypeError:
        return _UNKNOWN
    return _UNKNOWN


def _run_block(body: list[ast.stmt], env: dict[str, Any]) -> tuple[Any, int]:
    for stmt in body:
        if isinstance(stmt, ast.Return) and stmt.value is not None:
            names = _enum_names(stmt.value)
            return (names if names is not None else _UNKNOWN), stmt.lineno
        if isinstance(stmt, ast.If):
            test = _eval(stmt.test, env)
            if test is _UNKNOWN:
                return _UNKNOWN, stmt.lineno
            got = _run_block(stmt.body if test else stmt.orelse, env)
            if got[0] is not None:
                return got
    return None, 0


def _enum_names(node: ast.AST) -> list[str] | None:
    if not isinstance(node, ast.List | ast.Tuple):
        return None
    names = []
    for e in node.elts:
        if isinstance(e, ast.Attribute):
            names.append(e.attr)
        elif isinstance(e, ast.Constant) and isinstance(e.value, str):
            names.append(e.value)
        else:
            return None
    return names


def backend_priorities(source: str, use_mla: bool, major: int, minor: int
                       ) -> tuple[list[str] | None, int, int]:
    """(backend names in priority order, line of the chosen return, line of the function)."""
    for node in ast.walk(_tree(source)):
        if isinstance(node, ast.FunctionDef) and node.name == "_get_backend_priorities":
            args = [a.arg for a in node.args.args]
            if len(args) < 2:
                return None, 0, node.lineno
            env = {args[0]: use_mla, f"{args[1]}.major": major, f"{args[1]}.minor": minor}
            names, line = _run_block(node.body, env)
            return (None if names is _UNKNOWN else names), line, node.lineno
    return None, 0, 0


@lru_cache(maxsize=64)
def registry_paths(source: str) -> dict[str, tuple[str, int]]:
    """Enum member → (dotted class path, line) from the backend registry (read-only: the
    result is cached per text)."""
    out: dict[str, tuple[str, int]] = {}
    for node in ast.walk(_tree(source)):
        if isinstance(node, ast.ClassDef) and "Backend" in node.name:
            for stmt in node.body:
                if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                        and isinstance(stmt.targets[0], ast.Name)
                        and isinstance(stmt.value, ast.Constant)
                        and isinstance(stmt.value.value, str) and "." in stmt.value.value):
                    out[stmt.targets[0].id] = (stmt.value.value, stmt.lineno)
    return out


def backend_info(info: BackendInfo, source: str, major: int, minor: int) -> BackendInfo:
    """Fill the class's KV dtypes, compute-capability test, sparsity and FP8 guards."""
    tree = _tree(source)
    lines = source.splitlines()
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == info.class_name:
            _class_body(info, node, lines, major, minor)
    info.guards = list(_fp8_guards(source))
    return info


def _class_body(info: BackendInfo, cls: ast.ClassDef, lines: list[str], major: int,
                minor: int) -> None:
    for stmt in cls.body:
        target = None
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            target, value = stmt.target.id, stmt.value
        elif isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name):
            target, value = stmt.targets[0].id, stmt.value
        if target == "supported_kv_cache_dtypes" and value is not None:
            got = _eval(value, {})
            if got is not _UNKNOWN:
                info.kv_dtypes, info.kv_dtypes_line = [str(x) for x in got], stmt.lineno
        if isinstance(stmt, ast.FunctionDef) and stmt.name == "supports_compute_capability":
            ret = next((s for s in stmt.body if isinstance(s, ast.Return)), None)
            if ret is not None and ret.value is not None:
                arg = stmt.args.args[-1].arg
                ok = _eval(ret.value, {f"{arg}.major": major, f"{arg}.minor": minor})
                info.cc_ok = None if ok is _UNKNOWN else bool(ok)
                info.cc_line = ret.lineno
                info.cc_source = lines[ret.lineno - 1].strip()
                # cited from its `def` on: `return True` alone does not say what it answers
                info.cc_span = (stmt.lineno, ret.end_lineno or ret.lineno)
        if isinstance(stmt, ast.FunctionDef) and stmt.name == "is_sparse":
            ret = next((s for s in stmt.body if isinstance(s, ast.Return)), None)
            info.sparse = bool(ret and isinstance(ret.value, ast.Constant) and ret.value.value)


@lru_cache(maxsize=64)
def _fp8_guards(source: str) -> tuple[Guard, ...]:
    """``raise NotImplementedError("…FP8…")`` statements: refusals of a quantized KV cache."""
    lines = source.splitlines()
    guards = []
    for node in ast.walk(_tree(source)):
        if not (isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call)):
            continue
        func = node.exc.func
        if not (isinstance(func, ast.Name) and func.id == "NotImplementedError"):
            continue
        message = "".join(a.value for a in node.exc.args
                          if isinstance(a, ast.Constant) and isinstance(a.value, str))
        if "fp8" in message.lower() or "quantized kv" in message.lower():
            end = getattr(node, "end_lineno", node.lineno) or node.lineno
            text = " ".join(ln.strip() for ln in lines[node.lineno - 1 : end])
            guards.append(Guard(line=node.lineno, end=end, text=text, message=message))
    return tuple(guards)
