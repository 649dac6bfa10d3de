"""Secrets on command lines: ``--api-key VALUE`` and its list spellings, short password
flags (``mysql -pV``, ``sshpass -p V``), ``curl -u user:pass``, ``docker -e NAME=V``,
``--from-literal``, secrets handed positionally or on a pipe to programs that document it,
and a systemd ``Exec*=`` line's opaque bare token."""

from __future__ import annotations

import re2

from ... import _regex as re  # re, its compiled patterns kept on disk (_regex.py)
from ._gates import may_be_positional
from ._keys import SECRET_KEY, SHORT_PASSWORD_FLAG, assignment, credential_assignment

# `--api-key VALUE`, `--hf-token VALUE` on a command line (the `=` form is an assignment).
_CLI_FLAG = re.compile(
    rf"(?ix)(?P<key>(?<![\w-])--?{SECRET_KEY})(?P<sep>(?:[ \t\n]|\\\n|\ue000)+)(?P<q>[\"'])?"
    r"(?P<val>(?(q)[^\"'\n]*|(?!--|-[A-Za-z]\b|-\s|<)[^\s\ue000]+))"  # not a <<< redirection
)
# The same flag as a list element: ['--api-key', 'V'] (a Python repr), "--api-key",\n "V"
# (docker inspect's Cmd, a JSON argv).
_LIST_FLAG = re.compile(
    rf"""(?ix)(?P<key>["']--?{SECRET_KEY}["'])(?P<sep>\s*,\s*)(?P<q>["'])"""
    r"""(?P<val>(?:\\.|[^"'\\\n])*)""")
# Short password flags whose long form has no secret word (mysql -pV, sshpass/docker login
# -p V, redis-cli -a V, -P V, -k V), curl's -u user:password, docker's -e NAME=V: the value
# is withheld only when it can only be a credential (see credential_like): -p 8000:8000,
# mkdir -p ckpt2024 and -e MODEL=meta-llama/Llama-3.1-8B stay. Tokens are bounded: each
# start scans at most 256 characters.
_TOKEN = r"[^\s\"'\ue000]{1,256}"
_SHORT_FLAG = re.compile(
    rf"(?P<key>(?<![\w\-]){SHORT_PASSWORD_FLAG})(?P<sep>[ \t]+|\ue000[ \t]*|)(?P<q>[\"'])?"
    rf"(?P<val>(?!-){_TOKEN})")
_USER_FLAG = re.compile(
    r"(?P<key>(?<![\w\-])(?:-u|--user|--proxy-user|-U)(?:[ \t]+|=)?[\"']?[^\s:\"']{0,128}:)"
    rf"(?P<sep>)(?P<q>)(?P<val>{_TOKEN})")
_ENV_FLAG = re.compile(
    r"(?P<key>(?<![\w\-])(?:-e|--env)(?:[ \t]+|=)[\"']?[A-Za-z_][A-Za-z0-9_]{0,128}=)"
    rf"(?P<sep>)(?P<q>[\"'])?(?P<val>{_TOKEN})")
# the same as list elements: ['sshpass', '-p', 'V']
_LIST_SHORT = re.compile(
    rf"""(?P<key>["']{SHORT_PASSWORD_FLAG}["'])(?P<sep>\s*,\s*)(?P<q>["'])(?P<val>[^"'\s]{{1,256}})""")
# A systemd Exec line's bare argument that can only be a credential (a positional token,
# `cmd --api-key \` continued, `tool login TOKEN`): 20+ letters and digits with two of each
# of upper case, lower case and digits. Hashes (lower case), model names and paths (`/`, `-`,
# `.`) and class names (Phi3ForCausalLM: one digit) stay.
_EXEC_LINE = re.compile(r"(?m)^[ \t]*Exec\w*=[^\n]*")
_OPAQUE = re.compile(
    r"(?<![\w/.\-=:@+])(?=(?:[A-Za-z]*\d){2})(?=(?:[a-z0-9]*[A-Z]){2})(?=(?:[A-Z0-9]*[a-z]){2})"
    r"[A-Za-z0-9]{20,}(?![\w/.\-+])")
# kubectl create secret --from-literal=NAME=VALUE
_FROM_LITERAL = re.compile(r"(--from-literal[= ][\"']?[^=\s\"']{1,128}=)[^\s\"']+")
# Secrets handed to a program positionally or on a pipe, in the programs' documented forms:
# SQL `IDENTIFIED BY '…'`, `openssl -passin pass:…`, `htpasswd -b FILE USER PASS`,
# `echo … | chpasswd`, `echo … | docker login --password-stdin`, `ngrok config
# add-authtoken …`, `wandb login …`, `vault login …`.
_POSITIONAL = re.compile(
    r"""(?i)(\bidentified\s+by\s+['"])[^'"\n]+|"""
    r"""(-pass(?:in|out)?\s+pass:)[^\s"']+|"""
    r"""(\bhtpasswd\s+(?=(?:-\w+\s+)*-\w*b)(?:-\w+\s+){1,4}\S+\s+\S+\s+)[^\s"']+|"""
    r"""(\becho\s+(?:-n\s+)?['"]?(?:[^\s:'"|]+:)?)[^\s'"|]{6,}(?=['"]?\s*(?:\|[^\n]{0,256}?"""
    r"""(?:chpasswd|--password-stdin|--stdin|login\s+-(?:\s|$))|"""
    # echo … > ~/.cache/huggingface/token, > .vault-token, >> ~/.netrc
    r""">>?\s*\S{0,200}?(?:token|secret|key|pass|cred|netrc)))|"""
    r"""((?:\b(?:add-authtoken|authtoken|wandb\s+login|vault\s+login)|--with-token)\s+(?:<<<\s*)?)"""
    r"""(?!-)[^\s"']{8,}|"""
    # aws configure set aws_secret_access_key V, ngc config set apikey V
    r"""(\b(?:configure|config)\s+set\s+[\w.\-]*(?:secret|token|key|pass)[\w.\-]*\s+)[^\s"']+""")




# Programs whose short flag takes only a password, by their documentation: there the value
# is withheld whatever it looks like (numbers, lower case), marked [REDACTED:password-flag].
# program -> (flag letter, how the value follows: "attached" -pV only, "both" -pV or -p V,
# "separate" -a V only, and whether the flag belongs to a `login` verb). mysql's -p takes the
# password attached only ("-p dbname" prompts, and dbname is the database; -P is the port);
# sshpass -p, mongo/mongosh -p, sqlcmd/bcp -P, ldap* -w, openssl enc -k, zip/unzip -P, 7z -p
# (attached), redis-cli -a (separate), docker/podman/nerdctl/helm/skopeo/buildah login -p.
_MYSQL = ("mysql", "mysqldump", "mysqladmin", "mysqlimport", "mysqlshow", "mysqlcheck",
          "mysqlpump", "mysqlslap", "mysqlbinlog", "mariadb", "mariadb-dump", "mariadb-admin",
          "mariadb-import", "mariadb-check", "mariadb-show")
_MONGO = ("mongo", "mongosh", "mongodump", "mongorestore", "mongoexport", "mongoimport",
          "mongostat", "mongotop", "mongofiles")
_LDAP = ("ldapsearch", "ldapmodify", "ldapadd", "ldapdelete", "ldapwhoami", "ldappasswd",
         "ldapcompare", "ldapmodrdn")
_LOGIN = ("docker", "podman", "nerdctl", "helm", "skopeo", "buildah", "oras", "crane")
_PASSWORD_PROGRAMS: dict[str, tuple[str, str, bool]] = {
    **{p: ("p", "attached", False) for p in _MYSQL},
    **{p: ("p", "both", False) for p in _MONGO},
    **{p: ("w", "both", False) for p in _LDAP},
    **{p: ("p", "both", True) for p in _LOGIN},
    "sshpass": ("p", "both", False), "redis-cli": ("a", "separate", False),
    "sqlcmd": ("P", "both", False), "bcp": ("P", "both", False),
    "openssl": ("k", "both", False), "zip": ("P", "both", False),
    "unzip": ("P", "both", False), "7z": ("p", "attached", False),
    "7za": ("p", "attached", False),
}
_PROGRAM_HINT = re2.compile("|".join(re.escape(p) for p in _PASSWORD_PROGRAMS))
_NAMES = "|".join(re.escape(p) for p in sorted(_PASSWORD_PROGRAMS, key=len, reverse=True))
# the program word (a path's last component), and the rest of its command: up to a shell
# separator, a quote that closes an argv element, or the line's end
_PROGRAM = re.compile(rf"(?<![\w.\-])(?:[\w.\-]*/)*(?P<prog>{_NAMES})(?![\w.\-])"
                      r"(?P<rest>[^\n|;&`)]{0,2048})")
_LOGIN_WORD = re.compile(r"(?<![\w\-])login(?![\w\-])")
# sshpass's own options end where the command it runs starts (`sshpass -p V ssh -p 22 h`)
_SSHPASS_OPTS = re.compile(r"(?:[ \t]+(?:-[fdpP](?:[ \t]*(?:\"[^\"\n]*\"|'[^'\n]*'|[^\s\"']+))?"
                           r"|-[^\s]*))*")


def _password_flags(m: re.Match[str]) -> str:
    prog, rest = m.group("prog"), m.group("rest")
    letter, form, login = _PASSWORD_PROGRAMS[prog]
    if login and not _LOGIN_WORD.search(rest):
        return m.group(0)  # `docker run -p 8000:8000`: a port, not docker login's password
    tail = ""
    if prog == "sshpass":
        cut = _SSHPASS_OPTS.match(rest)  # always matches (maybe empty)
        end = cut.end() if cut else len(rest)
        rest, tail = rest[:end], rest[end:]
    sep = {"attached": "(?:=)?", "separate": r"[ \t]+", "both": r"(?:[ \t]+|=)?"}[form]
    flag = re.compile(rf"(?<![\w\-])(-{letter}{sep})([\"']?)(?!-|\[REDACTED)([^\s\"']+)")
    return m.group(0)[:m.start("rest") - m.start()] + flag.sub(
        lambda f: f"{f.group(1)}{f.group(2)}[REDACTED:password-flag]", rest) + tail


def redact_command_lines(text: str) -> str:
    """Every rule above, on text whose continued lines are joined (see ``_redact.py``)."""
    if _PROGRAM_HINT.search(text):
        text = _PROGRAM.sub(_password_flags, text)
    text = _CLI_FLAG.sub(assignment, text)
    text = _LIST_FLAG.sub(assignment, text)
    text = _SHORT_FLAG.sub(credential_assignment(0), text)
    text = _USER_FLAG.sub(_user_password, text)
    text = _ENV_FLAG.sub(credential_assignment(16), text)
    text = _FROM_LITERAL.sub(r"\1[REDACTED:secret]", text)
    if may_be_positional(text):  # exact: _gates.py
        text = _POSITIONAL.sub(lambda m: next(g for g in m.groups() if g is not None)
                               + "[REDACTED:secret]", text)
    text = _LIST_SHORT.sub(credential_assignment(0), text)
    if "Exec" in text:
        text = _EXEC_LINE.sub(lambda m: _OPAQUE.sub("[REDACTED:secret]", m.group(0)), text)
    return text


def _user_password(m: re.Match[str]) -> str:
    # curl -u user:password: whatever the password looks like, unless a uid:gid (-u 1000:1000)
    return m.group(0) if m.group("val").isdigit() else assignment(m)
