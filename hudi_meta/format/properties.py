"""`hoodie.properties`: Java Properties text with Hudi's table checksum (CRC32 of "<db>.<table>")."""

from __future__ import annotations

import datetime as dt
import re
import zlib
from collections.abc import Mapping

from hudi_meta.format.config_keys import CHECKSUM, DATABASE_NAME, TABLE_NAME

_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}
_JAVA_INT = re.compile(r"[+-]?[0-9]+")


def _unescape(text: str) -> str:
    out = []
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            n = text[i + 1]
            if n == "u" and i + 6 <= len(text):
                out.append(chr(int(text[i + 2 : i + 6], 16)))
                i += 6
                continue
            out.append(_ESCAPES.get(n, n))
            i += 2
            continue
        out.append(c)
        i += 1
    # \uXXXX escapes of characters beyond the BMP come as UTF-16 surrogate pairs (Java strings).
    return "".join(out).encode("utf-16-le", "surrogatepass").decode("utf-16-le")


def _logical_lines(text: str) -> list[str]:
    lines: list[str] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.lstrip()
        if pending == "" and (not line or line[0] in "#!"):
            continue
        backslashes = len(line) - len(line.rstrip("\\"))
        if backslashes % 2 == 1:
            pending += line[:-1]
            continue
        lines.append(pending + line)
        pending = ""
    if pending:
        lines.append(pending)
    return lines


def parse_properties(text: str) -> dict[str, str]:
    """Parse Java Properties text (escapes, continuations, `=`/`:`/space separators)."""
    props: dict[str, str] = {}
    for line in _logical_lines(text):
        i = 0
        while i < len(line):
            if line[i] == "\\":
                i += 2
                continue
            if line[i] in "=: \t":
                break
            i += 1
        key = line[:i]
        rest = line[i:].lstrip(" \t")
        if rest[:1] in ("=", ":"):
            rest = rest[1:].lstrip(" \t")
        props[_unescape(key)] = _unescape(rest)
    return props


def _escape(text: str, is_key: bool) -> str:
    out = []
    for j, c in enumerate(text):
        if c == "\\":
            out.append("\\\\")
        elif c in "=:#!":
            out.append("\\" + c)
        elif c == " " and (is_key or j == 0):
            out.append("\\ ")
        elif c in "\t\n\r\f":
            out.append({"\t": "\\t", "\n": "\\n", "\r": "\\r", "\f": "\\f"}[c])
        elif ord(c) > 0xFFFF:
            units = c.encode("utf-16-be")
            out.append(f"\\u{units[:2].hex().upper()}\\u{units[2:].hex().upper()}")
        elif ord(c) < 0x20 or ord(c) > 0x7E:
            out.append(f"\\u{ord(c):04X}")
        else:
            out.append(c)
    return "".join(out)


def format_properties(props: Mapping[str, str], now: dt.datetime | None = None) -> str:
    """Serialise as Java's Properties.store does (a date comment, then escaped key=value lines)."""
    now = now or dt.datetime.now(dt.UTC)
    lines = [f"#Updated at {now.isoformat()}", now.strftime("#%a %b %d %H:%M:%S UTC %Y")]
    lines += [f"{_escape(k, True)}={_escape(v, False)}" for k, v in sorted(props.items())]
    return "\n".join(lines) + "\n"


def table_checksum(table_name: str, database: str = "") -> int:
    """CRC32 (unsigned) of "<database>.<table>", as HoodieTableConfig.generateChecksum computes it."""
    return zlib.crc32(f"{database}.{table_name}".encode()) & 0xFFFFFFFF


def with_checksum(props: Mapping[str, str]) -> dict[str, str]:
    out = dict(props)
    out[CHECKSUM.name] = str(table_checksum(out[TABLE_NAME.name], DATABASE_NAME.of(out)))
    return out


def java_int(text: str) -> int | None:
    """`text` as a number in the form Java writes and Integer/Long.parseLong reads (an optional sign, ASCII
    digits), else None. Python's int() takes more (spaces, underscores), which Java refuses; other scripts' digits,
    which parseLong would take but no writer writes, are refused too."""
    return int(text) if _JAVA_INT.fullmatch(text) else None


def checksum_ok(props: Mapping[str, str]) -> bool:
    """Java's rule (ConfigUtils.fetchConfigs, HoodieTableConfig.validateChecksum): a file with a checksum holds the
    number `table_checksum` gives for its table and database name; one without (written before 0.11) passes."""
    if CHECKSUM.name not in props:
        return True
    if TABLE_NAME.name not in props:
        return False  # generateChecksum refuses a file without the name it covers
    expected = table_checksum(props[TABLE_NAME.name], DATABASE_NAME.of(props))
    return java_int(props[CHECKSUM.name]) == expected
