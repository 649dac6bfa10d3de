"""A container's environment as the kubelet builds it, from the Kubernetes API reference
(Container ``env``/``envFrom``, EnvVar, EnvFromSource):

- ``envFrom`` sources first, in list order: every key of the ConfigMap (or Secret), with the
  source's ``prefix`` prepended; a key in several sources takes the last source's value; a
  name that is not a valid variable name is skipped (the kubelet reports an event);
- then ``env`` entries in list order, each winning over ``envFrom`` and over an earlier
  entry of the same name; ``value`` has ``$(VAR)`` references expanded from the variables
  defined *before* it (``envFrom`` ones and earlier entries), an undefined reference stays as
  written, ``$$`` is a literal ``$``; ``valueFrom.configMapKeyRef`` takes the key's value
  (``optional: true`` and missing: the variable is not set); Secrets are never read. A
  reference to a variable set before it to a value not known here (a Secret's key, a
  ``fieldRef``, a ConfigMap not read) expands to that value in the pod: not established.

Variable names: before Kubernetes 1.34 a name had to be ``[-._a-zA-Z][-._a-zA-Z0-9]*``; since
(RelaxedEnvironmentVariableValidation) any printable ASCII but ``=``. A name valid only under
the newer rule depends on the cluster's version: it is reported as not established.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

_STRICT = re.compile(r"[-._a-zA-Z][-._a-zA-Z0-9]*")
_RELAXED = re.compile(r"[\x20-\x3c\x3e-\x7e]+")  # printable ASCII except '='
# The YAML loader's own keys in every mapping (_yaml.py); a ConfigMap key may start with "__"
# (IsConfigMapKey: [-._a-zA-Z0-9]+), and makes a valid variable name
_LOADER_KEYS = ("__line__", "__keys__")


def expand(text: str, lookup: Callable[[str], str | None]) -> str:
    """``$(NAME)`` replaced by NAME's value where ``lookup`` knows it; ``$$`` gives ``$``; a
    ``$`` before anything else, an unclosed ``$(``, an unknown name: kept as written."""
    out: list[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        if c != "$" or i + 1 == len(text):
            out.append(c)
            i += 1
            continue
        nxt = text[i + 1]
        if nxt == "$":
            out.append("$")
            i += 2
        elif nxt == "(":
            close = text.find(")", i + 2)
            if close < 0:
                out.append("$(")
                i += 2
                continue
            name = text[i + 2 : close]
            value = lookup(name)
            out.append(f"$({name})" if value is None else value)
            i = close + 1
        else:
            out.append("$" + nxt)
            i += 2
    return "".join(out)


def name_status(name: str) -> str:
    """valid | version-dependent | invalid"""
    if _STRICT.fullmatch(name):
        return "valid"
    return "version-dependent" if _RELAXED.fullmatch(name) else "invalid"


@dataclass
class Var:
    """One variable of the container: its value and where it was set."""

    name: str
    value: str
    kind: str  # "envFrom" | "env" | "configMapKeyRef"
    index: int  # position in envFrom or env
    configmap: str = ""
    key: str = ""


@dataclass
class Env:
    vars: dict[str, Var] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    unknown_sources: list[str] = field(default_factory=list)  # a source whose keys are unknown
    # names set before here to a value not known here (a Secret's, the pod's own fields, a
    # ConfigMap not read): a later $(NAME) expands to that value, so it is not known either
    # (one set again since is in vars, which a reference reads first)
    unknown: set[str] = field(default_factory=set)

    def assign_unknown(self, name: str, note: str) -> None:
        self.vars.pop(name, None)
        self.unknown.add(name)
        self.notes.append(note)


ConfigMaps = Callable[[str], Mapping[str, Any] | None]


def container_env(c: Mapping[str, Any], configmap: ConfigMaps) -> Env:
    """The environment of container ``c``; ``configmap(name)`` is that ConfigMap's ``data``
    in the pod's namespace, or None when it is not known here."""
    env = Env()
    for n, ref in enumerate(c.get("envFrom") or []):
        if isinstance(ref, dict):
            _env_from(env, n, ref, configmap)
    for n, e in enumerate(c.get("env") or []):
        if isinstance(e, dict) and e.get("name"):
            _env_entry(env, n, e, configmap)
    return env


def _env_from(env: Env, n: int, ref: Mapping[str, Any], configmap: ConfigMaps) -> None:
    prefix = str(ref.get("prefix") or "")
    if isinstance(ref.get("secretRef"), dict):
        name = ref["secretRef"].get("name")
        env.unknown_sources.append(f"Secret {name}")
        env.notes.append(f"envFrom Secret {name}{f' (prefix {prefix})' if prefix else ''}: "
                         "never read; the variables it sets are not shown")
        return
    cm_ref = ref.get("configMapRef")
    if not isinstance(cm_ref, dict):
        return
    cm_name = str(cm_ref.get("name"))
    data = configmap(cm_name)
    if data is None:
        if not cm_ref.get("optional"):
            env.unknown_sources.append(f"ConfigMap {cm_name}")
            env.notes.append(f"envFrom ConfigMap {cm_name} is not in the manifests read: its "
                             "variables are unknown")
        else:
            env.notes.append(f"envFrom ConfigMap {cm_name} (optional) is not in the manifests "
                             "read: if it does not exist either, it sets nothing")
            env.unknown_sources.append(f"ConfigMap {cm_name}")
        return
    for key, value in data.items():
        if key in _LOADER_KEYS:
            continue
        name = prefix + str(key)
        status = name_status(name)
        if status == "invalid":
            env.notes.append(f"{name!r} from ConfigMap {cm_name} is no valid variable name: "
                             "the kubelet skips it")
            continue
        if status == "version-dependent":
            env.assign_unknown(name, f"{name!r} from ConfigMap {cm_name}: set only on Kubernetes "
                               "1.34 or later (relaxed variable names), skipped before: not "
                               "established")
            continue
        env.vars[name] = Var(name, _text(value), "envFrom", n, cm_name, str(key))


def _env_entry(env: Env, n: int, e: Mapping[str, Any], configmap: ConfigMaps) -> None:
    name = str(e["name"])
    value = e.get("value")
    vf = e.get("valueFrom") if isinstance(e.get("valueFrom"), dict) else None
    if (value is None or value == "") and vf is not None:
        _value_from(env, n, name, vf, configmap)
        return
    raw = _text(value) if value is not None else ""
    missing: list[str] = []  # references no variable defined before this one resolves here

    def lookup(ref: str) -> str | None:
        if ref in env.vars:
            return env.vars[ref].value
        missing.append(ref)
        return None

    expanded = expand(raw, lookup)
    unknown = [f"$({ref})" for ref in missing if ref in env.unknown]
    if unknown:
        env.notes.append(f"{name}: its value uses {', '.join(unknown)}, set before it to a value "
                         "not known here: its value is not established")
    elif missing and env.unknown_sources:
        env.notes.append(f"{name}: a $(…) reference in its value is not defined before it here; "
                         f"it could come from {', '.join(env.unknown_sources)}: its value is "
                         "not established")
    env.vars[name] = Var(name, expanded, "env", n)


def _value_from(env: Env, n: int, name: str, vf: Mapping[str, Any],
                configmap: ConfigMaps) -> None:
    ref = vf.get("configMapKeyRef")
    if isinstance(ref, dict):
        cm_name, key = str(ref.get("name")), str(ref.get("key"))
        data = configmap(cm_name)
        if data is not None and key in data and key not in _LOADER_KEYS:
            env.vars[name] = Var(name, _text(data[key]), "configMapKeyRef", n, cm_name, key)
            return
        if data is not None and ref.get("optional"):
            # optional and missing: the kubelet skips the entry, an earlier value stays
            env.notes.append(f"{name}: ConfigMap {cm_name} has no key {key} and the reference "
                             "is optional, so this entry sets nothing")
            return
        env.assign_unknown(name, f"{name} comes from ConfigMap {cm_name} key {key}, which the "
                           "manifests read do not hold: its value is unknown")
        return
    if "secretKeyRef" in vf:
        env.assign_unknown(name, f"{name} comes from a Secret: not read")
    else:
        env.assign_unknown(name, f"{name} comes from "
                           f"{', '.join(k for k in vf if k not in _LOADER_KEYS)}: its value is "
                           "known only in the running pod")


def _text(value: Any) -> str:
    """A YAML scalar as the API would hold it as a string (ConfigMap data and env values
    are strings; a manifest's unquoted true/8 are read here as YAML types)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
