"""``ParseError``: a TVMScript error that points at the source.

The message reads like a compiler's::

    kernel.py:12:21: error: T.grid expects integer extents, got float32
            for i, j in T.grid(4.5, 8):
                               ^^^

Lines and columns are 1-based and refer to the file the function was written
in (or to the text given to ``from_source``).
"""

from __future__ import annotations

import ast
from typing import Any


class ParseError(ValueError):
    """TVMScript that cannot be turned into TIR; ``lineno``/``col`` say where (1-based).

    A ``ValueError``: the text is valid Python but not valid TIR (a construct the
    parser does not know, a dtype mismatch, an undefined name). Text that is not
    valid Python at all raises ``ParseError`` too, with the position Python reports.
    """

    def __init__(self, message: str, filename: str = "<script>", lineno: int = 0,
                 col: int = 0, source_line: str = "", width: int = 1):
        self.reason = message
        self.filename = filename
        self.lineno = lineno
        self.col = col
        self.source_line = source_line
        super().__init__(_format(message, filename, lineno, col, source_line, width))


def _format(message: str, filename: str, lineno: int, col: int, line: str, width: int) -> str:
    if lineno <= 0:  # no place in a text (the source could not be read)
        return f"error: {message}"
    head = f"{filename}:{lineno}:{col}: error: {message}"
    if not line:
        return head
    caret = " " * (col - 1) + "^" * max(1, min(width, len(line) - col + 1))
    return f"{head}\n    {line}\n    {caret}"


class Source:
    """The text being parsed and where it sits in its file, to place errors."""

    def __init__(self, text: str, filename: str = "<script>", line_offset: int = 0,
                 col_offset: int = 0):
        self.text = text
        self.lines = text.splitlines()
        self.filename = filename
        self.line_offset = line_offset  # lines above the text in its file
        self.col_offset = col_offset  # indentation removed from every line

    def error(self, node: Any, message: str) -> ParseError:
        """A ``ParseError`` at ``node`` (an ``ast`` node, or None for the whole text)."""
        lineno = getattr(node, "lineno", None)
        if lineno is None:
            return ParseError(message, self.filename, self.line_offset + 1, 1)
        col = node.col_offset
        end_line = getattr(node, "end_lineno", lineno)
        end_col = getattr(node, "end_col_offset", None)
        line = self.lines[lineno - 1] if 0 < lineno <= len(self.lines) else ""
        width = end_col - col if end_line == lineno and end_col is not None else len(line) - col
        indent = " " * self.col_offset
        return ParseError(message, self.filename, lineno + self.line_offset,
                          col + 1 + self.col_offset, indent + line if line else "", width)

    def syntax_error(self, err: SyntaxError) -> ParseError:
        """Python's own syntax error, placed like the others."""
        node = ast.Pass(lineno=err.lineno or 1, col_offset=max((err.offset or 1) - 1, 0))
        return self.error(node, f"invalid syntax: {err.msg}")
