"""Cell text and pasted blocks are parsed by hand: numbers in, clear messages for the rest."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import math  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from hypothesis import (
    given,  # noqa: E402
    strategies as st,  # noqa: E402
)

from attention_explorer.ui.widgets.number_text import (  # noqa: E402
    NumberTextError,
    format_block,
    format_exact,
    format_number,
    parse_block,
    parse_number,
)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("0.5", 0.5),
        (" -1e-3 ", -0.001),
        ("+2", 2.0),
        ("\u22122.5", -2.5),  # the typographic minus
        (".5", 0.5),
        ("5.", 5.0),
        ("0,5", 0.5),  # a decimal comma in a single cell
        ("1e30", 1e30),
        ("-0", 0.0),
    ],
)
def test_parse_number_accepts_plain_decimals(text, value):
    assert parse_number(text) == value


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("abc", "not a number"),
        ("", "empty"),
        ("   ", "empty"),
        ("nan", "nan"),
        ("NaN", "nan"),
        ("inf", "infinity"),
        ("-Infinity", "infinity"),
        ("1e31", "too large"),
        ("-1e400", "too large"),
        ("1+2", "not a number"),
        ("__import__('os')", "not a number"),
        ("0x10", "not a number"),
        ("1_000", "not a number"),
    ],
)
def test_parse_number_refuses_with_a_message(text, says):
    with pytest.raises(NumberTextError) as info:
        parse_number(text)
    assert says in str(info.value)


def test_parse_number_never_returns_negative_zero():
    assert math.copysign(1.0, parse_number("-0.0")) == 1.0


@pytest.mark.parametrize(
    "text",
    [
        "1\t2\n3\t4",
        "1\t2\r\n3\t4\r\n",
        "1 2\n3 4",
        "1, 2\n3, 4\n\n",
        "[[1, 2], [3, 4]]",
        "[[1. 2.]\n [3. 4.]]",
        "array([[1., 2.],\n       [3., 4.]])",
        "np.array([[1, 2], [3, 4]], dtype=float32)",
    ],
)
def test_parse_block_understands_spreadsheets_rows_and_numpy_text(text):
    assert np.array_equal(parse_block(text), [[1.0, 2.0], [3.0, 4.0]])


def test_parse_block_one_bracketed_list_is_one_row():
    assert np.array_equal(parse_block("[1, -2.5, 3e2]"), [[1.0, -2.5, 300.0]])


def test_parse_block_spreadsheet_cells_may_use_decimal_commas():
    assert np.array_equal(parse_block("0,5\t1,5\n2\t3"), [[0.5, 1.5], [2.0, 3.0]])


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("1\t2\n3", "row 2 has 1 numbers but row 1 has 2"),
        ("1\tx\n3\t4", "row 1, column 2: 'x' is not a number"),
        ("1\t\t3", "row 1, column 2: empty"),
        ("[[1, 2], [3, nan]]", "row 2, column 2: nan"),
        ("1 2\n3 1e99", "too large"),
        ("[[1, 2], [3, 4]", "never closed"),
        ("[[[1]]]", "only 1-D or 2-D"),
        ("[[1, 2]] 3", "outside the brackets"),
        ("", "no numbers"),
        ("[]", "no numbers"),
    ],
)
def test_parse_block_refuses_with_a_message_naming_the_place(text, says):
    with pytest.raises(NumberTextError) as info:
        parse_block(text)
    assert says in str(info.value)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0.5, "0.5"),
        (1 / 3, "0.3333"),
        (-1.23456, "-1.2346"),
        (3.0, "3"),
        (0.0, "0"),
        (-0.00001, "≈0"),  # the one policy: tiny is not zero, and not a wall of digits
        (1e8, "1e+08"),
        (1e30, "1e+30"),
    ],
)
def test_format_number_is_compact(value, text):
    assert format_number(value) == text


def test_format_number_never_shows_nan():
    assert "nan" not in format_number(float("nan")).lower()
    assert "inf" not in format_number(float("inf")).lower()


@given(st.floats(min_value=-1e30, max_value=1e30, allow_nan=False, allow_infinity=False))
def test_exact_text_reads_back_to_the_same_number(value):
    assert parse_number(format_exact(value)) == value + 0.0


def test_format_block_round_trips_through_parse_block():
    block = np.array([[0.1, -2.0], [1e-7, 123456789.125]])
    assert np.array_equal(parse_block(format_block(block)), block)
