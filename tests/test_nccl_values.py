"""agentkit's reading of NCCL_* values against NCCL's own parsers.

Expected facts, written from NCCL 2.30.7's source before running (src/graph/tuning.cc
parseList, src/graph/paths.cc ncclGetLevel, src/misc/param.cc ncclLoadParam):
NCCL_PROTO is a case-insensitive list, ``^`` means all but the listed, an unknown element
refuses the communicator; NCCL_P2P_LEVEL names are case-sensitive, numbers are the old scale
(0 LOC, 1 PIX, 2 PXB, 3 PHB, 4 and 5 SYS, larger clamps to SYS), anything else is silently
ignored; NCCL_P2P_DISABLE counts only when it reads as 1; NCCL_PARAM integers are strtoll base 0.
"""

from __future__ import annotations

from agentkit._hostmodel import _nccl_values as nv

# -- facts from the source, by hand --------------------------------------------------------

def test_the_names_come_from_nccls_source() -> None:
    doc = nv.params()
    assert doc["nccl_version"] == "2.30.7" and len(doc["commit"]) == 40
    for name in ("NCCL_PROTO", "NCCL_ALGO", "NCCL_P2P_LEVEL", "NCCL_P2P_DISABLE", "NCCL_IB_HCA",
                 "NCCL_NET_GDR_LEVEL", "NCCL_SOCKET_IFNAME", "NCCL_DEBUG", "NCCL_CONF_FILE",
                 "NCCL_MIN_NCHANNELS", "NCCL_BUFFSIZE", "NCCL_NVLS_ENABLE", "NCCL_SHM_DISABLE"):
        assert nv.known(name), name
    assert doc["variables"]["NCCL_SHM_DISABLE"]["default"] == "0"
    for name in ("NCCL_PROTOCOL", "NCCL_VERSION", "NCCL_P2P_LEVELS", "NCCL_LL_THRESHOLD"):
        assert not nv.known(name), name
    got = nv.reading("NCCL_PROTOCOL", "LL")
    assert not got.known and "no effect" in got.effect and "NCCL_PROTO" in got.effect
    # read by 2.18 to 2.29 (src/transport/shm.cc), gone in 2.30: a server on 2.27 still reads it
    assert doc["no_longer_read"]["NCCL_SHM_USE_CUDA_MEMCPY"]["releases"][-1] == "2.29.7"
    got = nv.reading("NCCL_SHM_USE_CUDA_MEMCPY", "1")
    assert got.known and got.valid and "no longer reads it" in got.effect
    assert doc["variables"]["NCCL_PROTO"]["releases"][0] == "2.18.6"


def test_list_values_as_nccl_parses_them() -> None:
    ar = nv.FUNCS.index("AllReduce")
    assert nv.parse_list("LL", nv.PROTOS)[ar] == [1, 0, 0]  # type: ignore[index]
    assert nv.parse_list("ll,SIMPLE", nv.PROTOS)[ar] == [1, 0, 1]  # type: ignore[index]
    assert nv.parse_list("^LL", nv.PROTOS)[ar] == [0, 1, 1]  # type: ignore[index]
    assert nv.parse_list("^LL128;allreduce:LL128", nv.PROTOS)[0] == [1, 0, 1]  # type: ignore[index]
    assert isinstance(nv.parse_list("LL,foo", nv.PROTOS), str)
    assert isinstance(nv.parse_list("LL;Simple", nv.PROTOS), str)  # second entry lacks a prefix
    assert isinstance(nv.parse_list(";LL", nv.PROTOS), str)  # strtok skips ';': not the first
    got = nv.reading("NCCL_PROTO", "LL,LL129")
    assert not got.valid and "fails to create the communicator" in got.effect
    assert nv.reading("NCCL_PROTO", "^LL").effect.startswith("allreduce may use LL128, Simple")
    assert nv.reading("NCCL_ALGO", "ring").effect == "allreduce may use Ring"


def test_levels_as_nccl_parses_them() -> None:
    assert [nv.parse_level(v) for v in ("LOC", "NVL", "PIX", "PXB", "PHB", "SYS")] == \
        [0, 1, 4, 5, 8, 9]
    assert [nv.parse_level(str(n)) for n in range(7)] == [0, 4, 5, 8, 9, 9, 9]
    assert nv.parse_level("sys") == nv.UNSET and nv.parse_level(" 3") == nv.UNSET
    assert nv.parse_level("3abc") == 8 and nv.parse_level("0x4") == 9
    assert nv.parse_p2p("1", "SYS") == 0 and nv.parse_p2p("true", "SYS") == 9
    got = nv.reading("NCCL_P2P_LEVEL", "SYSTEM")
    assert not got.valid and "ignores it" in got.effect
    assert not nv.reading("NCCL_P2P_DISABLE", "yes").effect.startswith("peer-to-peer is off")
    assert nv.parse_int("010", -2) == 8 and nv.parse_int("0x10", -2) == 16
    assert nv.parse_int("abc", -2) == 0 and nv.parse_int("", -2) == -2
    assert nv.parse_int("99999999999999999999", -2) == -2
    assert not nv.reading("NCCL_IB_DISABLE", "true").valid  # reads 0: IB stays on
    assert "as 0" in nv.reading("NCCL_IB_DISABLE", "yes").effect
    assert nv.reading("NCCL_MIN_NCHANNELS", "16 ") == nv.Reading(True, True, "")
    assert "octal" in nv.reading("NCCL_MIN_NCHANNELS", "010").effect
    assert not nv.reading("NCCL_MIN_NCHANNELS", "").valid
    assert nv.reading("NCCL_MIN_NCHANNELS", "16abc").valid  # NCCL uses 16
