"""Decode, then redact: bytes from a file, a program or a capture made into the text a reader
would see, before any redaction rule looks at them.

The rules match text. A secret written in UTF-16 or UTF-32 (with or without a byte-order
mark), with a NUL after each character, split by ANSI colour codes or carriage returns, is
not that text until it is decoded: the red team (issue 28) read keys through ``cat``,
``head``, ``sort``, ``read_file`` and snapshot captures that way. So every output is first
made text here, and only that text is redacted, sliced and returned.
"""

from __future__ import annotations

from ... import _regex as re  # re, its compiled patterns kept on disk (_regex.py)

# UTF-32's marks first: FF FE 00 00 also starts with UTF-16's little-endian mark
_BOMS = ((b"\x00\x00\xfe\xff", "utf-32"), (b"\xff\xfe\x00\x00", "utf-32"),
         (b"\xef\xbb\xbf", "utf-8-sig"), (b"\xfe\xff", "utf-16"), (b"\xff\xfe", "utf-16"))
# CSI (colours, cursor moves), OSC (titles, links) and two-byte escapes
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]"
                   r"|\x9b[0-?]*[ -/]*[@-~]")
# Controls a terminal does not print (NUL included), tab and line feed kept
_CONTROLS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_SAMPLE = 1 << 16
# A wide reading must also read as text on its own (the share _printable gives): a few bytes
# of binary data decode as UTF-16 to printable CJK-looking noise with no space or line end,
# which only beats a UTF-8 reading full of NULs, not this bar
_PLAUSIBLE = 0.75


def to_text(data: bytes) -> str:
    """``data`` as the text it holds: its encoding found (byte-order mark, else the pattern of
    NUL bytes of UTF-32 or UTF-16), then escapes, carriage returns and other controls taken
    out, so that what the redaction reads is what a person would read."""
    return clean(data.decode(encoding_of(data), "replace"))


def encoding_of(data: bytes) -> str:
    for bom, codec in _BOMS:
        if data.startswith(bom):
            return codec
    sample = data[:_SAMPLE]
    if sample.count(0) * 8 < len(sample) and _is_utf8(sample):
        return "utf-8"  # few NULs (those left are taken out) and valid as UTF-8
    best, score = "utf-8", _printable(sample.decode("utf-8", "replace"))
    for codec in ("utf-32-le", "utf-32-be", "utf-16-le", "utf-16-be"):
        width = 4 if "32" in codec else 2
        cut = sample[: len(sample) - len(sample) % width]
        try:
            got = _printable(cut.decode(codec, "strict"))
        except UnicodeDecodeError:
            continue
        if got > score and got >= _PLAUSIBLE:
            best, score = codec, got
    return best


def _is_utf8(sample: bytes) -> bool:
    try:
        sample.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start >= len(sample) - 3  # only a character cut at the sample's end
    return True


def _printable(text: str) -> float:
    """Share of characters a person reads as text (letters of any script, digits, spaces,
    punctuation): the right codec scores near 1, a wrong one (CJK noise, NULs) far less."""
    if not text:
        return 0.0
    good = sum(1 for c in text if c.isprintable() or c in "\t\n\r")
    good -= text.count("\x00") + text.count("\ufffd")
    # a wrong UTF-16 reading of ASCII gives CJK-looking code points: printable, but
    # single-byte text read as UTF-16 makes no spaces or line ends
    if not any(c in " \n\t" for c in text[:4096]):
        good //= 2
    return good / len(text)


def clean(text: str) -> str:
    """Text with ANSI escapes, NULs and other non-printing controls removed, carriage
    returns made line ends (a terminal overprints after ``\\r``: what was before it is a
    line of its own, and must be judged as one) and backspaces applied as a terminal does.
    Invisible characters stay (the model is shown them as ``<U+200B>``); a line they hide a
    secret's name in is judged without them (:mod:`._views`)."""
    if "\x1b" in text or "\x9b" in text:
        text = _ANSI.sub("", text)
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if "\b" in text:
        text = _overstruck(text)
    return _CONTROLS.sub("", text)


# Characters no terminal shows (zero-width spaces and joiners, direction marks and
# embeddings, word joiners, a BOM inside text, the soft hyphen): ``pass<U+200B>word`` reads
# as ``password`` (issue 28, E1); :mod:`._views` judges a line without them.
INVISIBLE = re.compile("[\u00ad\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")


def overstrike(line: str) -> str:
    """``line`` as a terminal leaves it: a backspace moves back one column and the next
    character takes that place (``passx\\bword`` shows ``password``; nroff's ``_\\bX`` and
    ``X\\bX`` show ``X``), as ``col -b`` reads it. Linear: one pass, a stack."""
    out: list[str] = []
    for ch in line:
        if ch == "\b":
            if out:
                out.pop()
        else:
            out.append(ch)
    return "".join(out)


def _overstruck(text: str) -> str:
    return "\n".join(overstrike(ln) if "\b" in ln else ln for ln in text.split("\n"))
