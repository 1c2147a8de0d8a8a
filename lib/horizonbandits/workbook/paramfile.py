"""Reading one parameter file, ``params/<profile>/<name>.yaml``: safe YAML, numbers as people write them.

PyYAML's safe loader follows YAML 1.1, which changes numbers without a word: ``05000`` is octal
(2560), ``1:20:00`` is base 60 (4800), ``0x10`` is 16, while ``1e-3`` is a string. Here:

- a number is an integer written in decimal (``5000``, ``-3``, ``1_000``) or a decimal number
  (``0.5``, ``.5``, ``1e-3``, ``2.5E+4``); a number with a leading zero, a colon, or a
  ``0x``/``0b`` prefix is a one-line error saying how YAML 1.1 would have read it (quote it to mean
  text); dates stay strings;
- explicit tags that build something other than a plain literal (``!!binary``, ``!!set``,
  ``!!omap``, ``!!pairs``, ``!!timestamp``, ``!!python/...``) are errors;
- a key given twice is an error instead of keeping the last value;
- the file is bounded before it is parsed: at most ``MAX_FILE_BYTES`` bytes, nesting at most
  ``literals.MAX_DEPTH`` deep (PyYAML's composer recurses once per level: 5,000 levels overflow
  the stack), and the values are checked by ``literals.literal_problem`` (aliases expanded, at most
  ``literals.MAX_NODES`` values);
- the path must be a regular file (or a symlink to one): a folder, a FIFO (reading it would wait
  for a writer forever), a device or a dangling symlink is a one-line error.
"""
from __future__ import annotations

import os
import re
import stat
from pathlib import Path

import yaml

from .base import WorkbookError, one_line
from .literals import MAX_DEPTH

MAX_FILE_BYTES = 64 * 1024  # a parameter file holds a few overrides; the largest shipped is < 1 KB

_INT = re.compile(r"^[-+]?(?:0|[1-9][0-9_]*)$")
_FLOAT = re.compile(r"""^(?:[-+]?(?:[0-9][0-9_]*\.[0-9_]*|\.[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)?
                        |[-+]?[0-9][0-9_]*[eE][-+]?[0-9]+
                        |[-+]?\.(?:inf|Inf|INF)
                        |\.(?:nan|NaN|NAN))$""", re.X)
# What YAML 1.1 reads as a number a person would not: leading zeros (octal), base 60, hex, binary.
_SUSPECT = re.compile(r"""^(?:[-+]?0[0-9_]+
                          |[-+]?0[xX][0-9a-fA-F_]+
                          |[-+]?0[bB][01_]+
                          |[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?)$""", re.X)
_SUSPECT_TAG = "tag:horizonbandits,2026:suspect-number"
_NUMBER_TAGS = ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float", "tag:yaml.org,2002:timestamp")
_REFUSED_TAGS = ("tag:yaml.org,2002:binary", "tag:yaml.org,2002:set", "tag:yaml.org,2002:omap",
                 "tag:yaml.org,2002:pairs", "tag:yaml.org,2002:timestamp")


class ParamsLoader(yaml.SafeLoader):
    """The safe loader with the number rules, refused tags, unique keys and depth bound above."""

    def __init__(self, stream):
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent, index):
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH + 1:  # the file's own mapping is one level more
                mark = self.peek_event().start_mark
                raise yaml.composer.ComposerError(None, None, f"nested more than {MAX_DEPTH} levels deep", mark)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


ParamsLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag not in _NUMBER_TAGS]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}
for _tag, _regexp in ((_SUSPECT_TAG, _SUSPECT), ("tag:yaml.org,2002:int", _INT), ("tag:yaml.org,2002:float", _FLOAT)):
    ParamsLoader.add_implicit_resolver(_tag, _regexp, list("-+0123456789."))
ParamsLoader.yaml_constructors = {tag: fn for tag, fn in yaml.SafeLoader.yaml_constructors.items()
                                  if tag not in _REFUSED_TAGS}


def _construct_suspect(loader, node):
    text = node.value
    yaml11 = yaml.SafeLoader.construct_yaml_int if ":" not in text or "." not in text else \
        yaml.SafeLoader.construct_yaml_float
    try:
        read_as = yaml11(loader, node)
    except ValueError:
        read_as = None
    if ":" in text:
        why = "a number with colons (YAML 1.1 reads it in base 60"
    elif text.lstrip("+-")[1:2] in ("x", "X"):
        why = "a hexadecimal number (YAML 1.1 reads it"
    elif text.lstrip("+-")[1:2] in ("b", "B"):
        why = "a binary number (YAML 1.1 reads it"
    else:
        why = "a number with a leading zero (YAML 1.1 reads it as octal"
    got = f", as {read_as!r})" if read_as is not None else ")"
    raise yaml.constructor.ConstructorError(None, None, f"{text} is {why}{got}; write the number in plain decimal, "
                                            "or quote it if you mean text", node.start_mark)


def _construct_mapping(loader, node, deep=False):
    seen = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        try:
            fresh = key not in seen
        except TypeError:  # an unhashable key (a list): construct_mapping says so with its line
            break
        if not fresh:
            raise yaml.constructor.ConstructorError(None, None, f"key {key!r} is given twice", key_node.start_mark)
        seen.add(key)
    return loader.construct_mapping(node, deep=deep)


ParamsLoader.add_constructor(_SUSPECT_TAG, _construct_suspect)
ParamsLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def _file_problem(path: Path) -> str | None:
    """Why ``path`` cannot be read as a parameter file (None: a regular file, or nothing there)."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return "is a symbolic link to a missing file" if os.path.islink(path) else None
    except OSError as exc:
        return f"cannot be read ({(exc.strerror or one_line(exc)).lower()})"
    if stat.S_ISDIR(info.st_mode):
        return "is a folder, not a file"
    if not stat.S_ISREG(info.st_mode):
        kind = "a named pipe (FIFO)" if stat.S_ISFIFO(info.st_mode) else "not a regular file"
        return f"is {kind}; a parameter file must be a regular file"
    if info.st_size > MAX_FILE_BYTES:
        return f"has {info.st_size:,} bytes; a parameter file may have at most {MAX_FILE_BYTES:,}"
    return None


def load_overrides(path: Path, where: str | None = None) -> dict:
    """The mapping in a parameter file; a missing file or an empty one means no overrides. Every
    problem is a ``WorkbookError`` of one line naming the file (and the line, when YAML knows it)."""
    where = where or str(path)
    problem = _file_problem(Path(path))
    if problem:
        raise WorkbookError(f"{where} {problem}")
    if not os.path.lexists(path):
        return {}
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_FILE_BYTES + 1)
        if len(raw) > MAX_FILE_BYTES:
            raise WorkbookError(f"{where} has more than {MAX_FILE_BYTES:,} bytes; a parameter file may have at most "
                                f"{MAX_FILE_BYTES:,}")
        data = yaml.load(raw.decode("utf-8"), Loader=ParamsLoader)
    except WorkbookError:
        raise
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = f" line {mark.line + 1}" if mark is not None else ""
        raise WorkbookError(f"{where}{line}: invalid YAML: {one_line(exc.problem or exc.context)}") from None
    except (yaml.YAMLError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise WorkbookError(f"{where}: invalid YAML: {one_line(exc)[:300]}") from None
    except OSError as exc:
        raise WorkbookError(f"{where} cannot be read ({(exc.strerror or one_line(exc)).lower()})") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise WorkbookError(f"{where}: expected a mapping of parameter names to values, got {_type_name(data)}")
    return data


def _type_name(value) -> str:
    return "None" if value is None else type(value).__name__
