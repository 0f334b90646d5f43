"""The system file format (docs/oracles.md): reading a TOML definition, the
schema of its keys, and the line of an entry for error messages."""
import re
from pathlib import Path

from semiparse.grammar import byte_position, plain_text
from semiparse.errors import SystemFileError

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the same parser as the tomli package
    import tomli as tomllib


# The keys a system file may use (docs/oracles.md): a dict is a table of
# these keys, ``[dict]`` an array of such tables, ``{"*": spec}`` a table of
# any keys; a leaf is the value's type, ``[str]`` a list of strings.
SCHEMA = {
    "name": str,
    "description": str,
    "initial": {"root": str},
    "final": {"stack": str, "buffer": str},
    "static_order": [str],
    "transition": [{"name": str, "stack": [str], "buffer": [str], "require": [str],
                    "stack_after": [str], "buffer_after": [str], "edge": str}],
    "invariants": {"stack_heads": str},
    "completion": {
        "kind": str, "reachable": [str], "grammar": str, "prefix": [str], "critical_buffer": bool,
        "terminals": [{"node": str, "terminal": str, "headed": bool}],
        "projective": {"no_left_children": [str], "heads": {"*": [str]}},
    },
    "strategy": {"*": {"description": str, "left_before_right": [str],
                       "right_before_left": [str], "no_left": [str], "no_right": [str],
                       "forbid": {"*": [str]}}},
}
_TYPE_NAMES = {str: "a string", bool: "true or false"}

_TOML_KEY = r"""(?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*')"""
_HEADER_LINE = re.compile(rf"^\s*(\[\[?)\s*({_TOML_KEY}(?:\s*\.\s*{_TOML_KEY})*)\s*\]")
_KEY_LINE = re.compile(rf"^\s*({_TOML_KEY}(?:\s*\.\s*{_TOML_KEY})*)\s*=(?!=)")


def _key_parts(dotted):
    return [p.strip("\"'") for p in re.findall(_TOML_KEY, dotted)]


def _element_line(lines, start, index):
    """Line (1-based) of element ``index`` of the inline array whose key is on
    line ``start``, or ``start``."""
    depth = braces = count = 0
    for no in range(start, len(lines) + 1):
        text = re.sub(r'"[^"]*"|\'[^\']*\'', '""', lines[no - 1]).split("#")[0]
        if no == start:
            text = text.split("=", 1)[-1]
        for ch in text:
            if ch == "[":
                depth += 1
            elif ch == "]":
                depth -= 1
                if depth <= 0:
                    return start
            elif ch == "{":
                if depth == 1 and braces == 0:
                    if count == index:
                        return no
                    count += 1
                braces += 1
            elif ch == "}":
                braces -= 1
    return start


def key_line(text, path):
    """Line (1-based) of the entry ``path`` (keys, and indices into arrays of
    tables) of a TOML text: the first table header or ``key =`` line that
    declares the longest prefix of ``path`` (or something under ``path``), or
    1.  tomllib gives no line numbers, so error messages find them here."""
    path = list(path)
    lines = text.split("\n")
    best, best_len, from_key = 1, 0, False
    table, arrays = [], {}
    for no, line in enumerate(lines, 1):
        header = _HEADER_LINE.match(line)
        if header:
            table = _key_parts(header.group(2))
            if header.group(1) == "[[":
                arrays[tuple(table)] = arrays.get(tuple(table), -1) + 1
                table = table + [arrays[tuple(table)]]
            full, is_key = table, False
        else:
            key = _KEY_LINE.match(line)
            if not key:
                continue
            full, is_key = table + _key_parts(key.group(1)), True
        common = min(len(full), len(path))
        if common > best_len and path[:common] == full[:common]:
            best, best_len, from_key = no, common, is_key and common == len(full)
    if from_key and best_len < len(path) and isinstance(path[best_len], int):
        return _element_line(lines, best, path[best_len])
    return best


def check_schema(value, spec, path, fail):
    """Call ``fail(reason, *path)`` for the first key ``spec`` does not know or
    value of the wrong type under ``path``."""
    where = ".".join(str(p) for p in path) or "the file"
    if isinstance(spec, dict):
        if not isinstance(value, dict):
            fail(f"{where} must be a table", *path)
        for key, sub in value.items():
            if "*" in spec:
                check_schema(sub, spec["*"], path + [key], fail)
            elif key not in spec:
                fail(f"unknown key {key!r} in {where}: expected one of {', '.join(spec)}",
                     *path, key)
            else:
                check_schema(sub, spec[key], path + [key], fail)
    elif isinstance(spec, list):
        (item,) = spec
        if not isinstance(value, list):
            what = "an array of tables" if isinstance(item, dict) else "a list of strings"
            fail(f"{where} must be {what}", *path)
        for i, sub in enumerate(value):
            check_schema(sub, item, path + [i], fail)
    elif not isinstance(value, spec):
        where = where if not isinstance(path[-1], int) else f"each entry of {where[:-2]}"
        fail(f"{where} must be {_TYPE_NAMES[spec]}, got {value!r}", *path)


def read_system_file(path):
    """``(text, data)`` of a system file (see :func:`parse_text`), or
    SystemFileError with the line."""
    raw = Path(path).read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = byte_position(raw, exc.start)[0]
        raise SystemFileError(f"{path}:{line}: not valid UTF-8 (byte 0x{raw[exc.start]:02x}): "
                              f"system files are UTF-8 text") from None
    return parse_text(text, path)


def parse_text(text, where):
    """``(text, data)``: the text of a system definition with its line ends
    made ``\\n`` (:func:`semiparse.grammar.plain_text`; the lines
    :func:`key_line` counts) and its parsed TOML; or SystemFileError
    ``WHERE:LINE:COL``."""
    text = plain_text(text)
    deep = _too_deep(text)
    if deep is not None:
        raise SystemFileError(f"{where}:{deep}: arrays, tables and dotted keys nested more than "
                              f"{MAX_DEPTH} deep: the system file format nests a few levels")
    try:
        return text, tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        m = re.search(r"\(at line (\d+), column (\d+)\)", str(exc))
        line = f"{m.group(1)}:{m.group(2)}" if m else str(text.count("\n") + 1)
        raise SystemFileError(f"{where}:{line}: {str(exc).split(' (at ')[0]}") from None


# Nesting beyond this is refused before tomllib reads the text: its parser
# recurses once per level of arrays and inline tables (a file nested some
# hundreds deep raised RecursionError), and takes time and memory quadratic
# in the length of a dotted key.
MAX_DEPTH = 32
# What opens a string; the rest of the line after a comment's "#" is skipped.
_STRING = re.compile(r'"""|\'\'\'|"|\'|#')
_STRING_END = {'"""': re.compile(r'(?:[^\\"]|\\.|"(?!""))*"""("{0,2})', re.S),
               "'''": re.compile(r"(?:[^']|'(?!''))*'''('{0,2})", re.S),
               '"': re.compile(r'(?:[^\\"\n]|\\.)*"'),
               "'": re.compile(r"[^'\n]*'"),
               "#": re.compile(r"[^\n]*")}


def _too_deep(text):
    """The line where arrays, inline tables, table headers and the parts of
    a dotted key first nest deeper than :data:`MAX_DEPTH` outside strings
    and comments, or None.  A string left open is left to tomllib."""
    depth, dots, line, pos = 0, 0, 1, 0
    while pos < len(text):
        m = _STRING.search(text, pos)
        code = text[pos:m.start() if m else len(text)]
        for ch in code:
            if ch in "[{":
                depth, dots = depth + 1, 0
            elif ch in "]}":
                depth, dots = max(depth - 1, 0), 0
            elif ch in "=,\n":
                dots = 0
            elif ch == ".":
                dots += 1
            if ch == "\n":
                line += 1
            elif depth + dots > MAX_DEPTH:
                return line
        if m is None:
            return None
        end = _STRING_END[m.group()].match(text, m.end())
        if end is None:
            return None
        line += text.count("\n", m.start(), end.end())
        pos = end.end()
    return None


def is_file(path):
    """``path.is_file()``, False for names the OS cannot take (e.g. a NUL byte)."""
    try:
        return path.is_file()
    except (OSError, ValueError):
        return False
