"""/etc/nccl.conf and ~/.nccl.conf as NCCL's setEnvFile reads them (src/misc/param.cc): a line
starting with '#' is skipped, one without '=' too; the name is the raw text before the first
'=', the value the raw text after it (the newline taken off, nothing trimmed or unquoted), and
setenv() refuses an empty name. Vectors written from that source, not from agentkit's output."""

from __future__ import annotations

import pytest

from agentkit._hostmodel._nccl import conf_assignments


@pytest.mark.parametrize(("line", "want"), [
    ("NCCL_PROTO=LL", ("NCCL_PROTO", "LL")),
    ("export NCCL_ALGO=Ring", ("export NCCL_ALGO", "Ring")),  # no shell syntax
    ("NCCL_MIN_NCHANNELS = 16", ("NCCL_MIN_NCHANNELS ", " 16")),  # no trimming
    ("  NCCL_IB_DISABLE=1", ("  NCCL_IB_DISABLE", "1")),  # leading blanks stay in the name
    ('NCCL_PROTO="LL"', ("NCCL_PROTO", '"LL"')),  # quotes are part of the value
    ("NCCL_SOCKET_IFNAME==ens1f0", ("NCCL_SOCKET_IFNAME", "=ens1f0")),  # NCCL's own example
    ("NCCL_PROTO=LL # pin", ("NCCL_PROTO", "LL # pin")),  # no trailing comments
    ("NCCL_PROTO=", ("NCCL_PROTO", "")),
    ("# NCCL_PROTO=LL", None),  # only a '#' in the first column starts a comment
    (" # NCCL_PROTO=LL", (" # NCCL_PROTO", "LL")),
    ("NCCL_PROTO", None),  # no '=': skipped
    ("=LL", None),  # setenv refuses an empty name
    ("", None),
])
def test_conf_lines_as_set_env_file_reads_them(line: str, want: tuple[str, str] | None) -> None:
    got = conf_assignments([line])
    assert got == ([] if want is None else [(1, *want)])


def test_line_numbers_count_every_line() -> None:
    lines = ["# tuning", "", "NCCL_PROTO=LL", "junk", "NCCL_ALGO=Ring"]
    assert conf_assignments(lines) == [(3, "NCCL_PROTO", "LL"), (5, "NCCL_ALGO", "Ring")]
