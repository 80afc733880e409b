"""Malformed TVMScript: each error names the line, the column and what was expected."""

import textwrap

import pytest

import tir
from tir.script import ParseError, from_source
from tir.script import tir as T

HEAD = '@T.prim_func\ndef f(A: T.Buffer((16,), "float32"), n: T.int32):\n'

# (body lines after HEAD, line, column, message pattern); lines count from 1 at the decorator
CASES = [
    ("    for i, j in T.grid(4.5, 8):\n        A[i] = T.float32(0)\n",
     3, 24, r"T\.grid expects integer extents, got float32"),
    ("    for i in range(n, T.float32(2)):\n        A[i] = T.float32(0)\n",
     3, 14, r"expects integer extents, got float32"),
    ("    A[0] = B[0]\n", 3, 12, r"undefined name 'B'"),
    ("    A[0] = T.Broadcast(T.float32(1), 4)\n", 3, 5,
     r"value dtype does not match buffer A: expected float32, got float32x4"),
    ("    A[0] = T.Ramp(0, 1, 4)\n", 3, 5, r"expected float32, got int32x4"),
    ("    A[0, 1] = T.float32(0)\n", 3, 5, r"1 dimension"),
    ("    for i in range(16)\n        pass\n", 3, 23, r"invalid syntax"),
    ("    x = [i for i in range(3)]\n", 3, 9, r"unsupported expression: ListComp"),
    ("    try:\n        pass\n    finally:\n        pass\n", 3, 5,
     r"unsupported statement: Try"),
    ("    v = T.axis.spatial(16, 0)\n", 3, 5, r"belongs inside one"),
    ("    T.nonexistent(1)\n", 3, 5, r"T\.nonexistent is not supported by tirlite's TVMScript"),
    ("    with open('x') as fh:\n        pass\n", 3, 10, r"undefined name 'open'"),
    ("    T.where(n > 0)\n", 3, 5, r"T\.where belongs inside a T\.block"),
    ("    with T.init():\n        pass\n", 3, 5, r"T\.init\(\) belongs inside a T\.block"),
    ("    for i in T.grid(4, 4):\n        pass\n", 3, 9, r"2 loops but 1 loop vars"),
    ("    for i in [1, 2]:\n        pass\n", 3, 14, r"expected range\(\.\.\.\)"),
    ("    A[0] = T.exp(n)\n", 3, 12, r"tir\.exp needs a float argument, got int32"),
    ("    x = n + T.float32(1) * T.Ramp(0, 1, 4) + T.Ramp(0, 1, 8)\n", 3, 9,
     r"different lanes"),
    ("    n = 1\n    n[0] = 2\n", 4, 5, r"only buffers can be stored to"),
    ("    for i in range(4):\n        pass\n    else:\n        pass\n", 3, 5,
     r"for \.\.\. else has no meaning"),
    ("    with T.block('b'):\n        vi, vj = T.axis.remap('SX', [n, n])\n", 4, 9,
     r"T\.axis\.remap expects one of 'S'/'R'"),
    ("    with T.block('b'):\n        vi = T.axis.remap('S', [n])\n", 4, 9,
     r"cannot unpack|is not one"),
    ("    B = T.match_buffer(n, (4,), 'float32')\n", 3, 5, r"binds a handle parameter"),
    ("    A[0] += 1\n    n += 1\n", 4, 5, r"only buffer elements can be updated in place"),
    ("    a = b = n\n", 3, 5, r"one target at a time"),
    ("    with T.attr(A, 'k', 1), T.attr(A, 'k', 2):\n        pass\n", 3, 5,
     r"one frame per with statement"),
    ("    A[0] = T.Select(n, T.float32(0), T.float32(1))\n", 3, 12,
     r"Select: condition must be bool, got int32"),
]


@pytest.mark.parametrize("body, line, col, pattern", CASES)
def test_error_points_at_the_source(body, line, col, pattern):
    with pytest.raises(ParseError, match=pattern) as info:
        from_source(HEAD + body, filename="case.py")
    err = info.value
    assert (err.lineno, err.col) == (line, col), str(err)
    assert str(err).startswith(f"case.py:{line}:{col}: error: ")
    source_line, caret = str(err).splitlines()[1:3]
    assert source_line.strip() == (HEAD + body).splitlines()[line - 1].strip()
    assert caret.index("^") - 4 == col - 1  # the caret sits under the column


def test_parse_error_is_a_value_error_with_the_reason_alone():
    with pytest.raises(ValueError) as info:
        from_source(HEAD + "    A[0] = C\n")
    assert info.value.reason == "undefined name 'C'"


def test_missing_annotation():
    with pytest.raises(ParseError, match="parameter 'x' needs a type annotation") as info:
        from_source("@T.prim_func\ndef f(x):\n    pass\n")
    assert (info.value.lineno, info.value.col) == (2, 7)


def test_error_in_a_parameter_annotation():
    with pytest.raises(ParseError, match="invalid dtype 'floaty'") as info:
        from_source('@T.prim_func\ndef f(A: T.Buffer((4,), "floaty")):\n    pass\n')
    assert (info.value.lineno, info.value.col) == (2, 10)


def test_no_function_in_the_text():
    with pytest.raises(ParseError, match="no function found"):
        from_source("# nothing here\n")
    with pytest.raises(ParseError, match="expected a @T.prim_func def"):
        from_source("x = 1\n")


def test_decorated_function_errors_name_its_file_and_line():
    with pytest.raises(ParseError) as info:
        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            A[0] = undefined_name  # noqa: F821

    err = info.value
    assert err.filename == __file__
    with open(__file__) as fh:
        line = fh.read().splitlines()[err.lineno - 1]
    assert "undefined_name" in line and line[err.col - 1:].startswith("undefined_name")


def test_error_inside_a_module_class():
    text = textwrap.dedent("""
        @I.ir_module
        class Module:
            @T.prim_func
            def main(A: T.Buffer((4,), "float32")):
                A[0] = T.float32(0)

            @T.prim_func
            def other(A: T.Buffer((4,), "float32")):
                A[0] = T.Ramp(T.float32(0), T.float32(1), 2)
    """)
    with pytest.raises(ParseError, match="expected float32, got float32x2") as info:
        from_source(text)
    assert (info.value.lineno, info.value.col) == (10, 9)


def test_tir_exports_the_package():
    assert tir.script.ParseError is ParseError
