"""The one number formatter (attention_explorer.core.numbers)."""

import math

import pytest

from attention_explorer.core.numbers import APPROX_ZERO, MINUS, format_number


@pytest.mark.parametrize(
    ("value", "decimals", "text"),
    [
        (0.24834, 4, "0.2483"),
        (0.25, 4, "0.25"),
        (3.0, 4, "3"),
        (10.0, 2, "10"),
        (-1.5, 4, "-1.5"),
        (0.0, 4, "0"),
        (-0.0, 4, "0"),
        (1e-7, 4, APPROX_ZERO),
        (-1e-7, 2, APPROX_ZERO),
        (123456.0, 4, "1.2346e+05"),
        (16.46813, 2, "16.47"),
        (16.46813, 4, "16.4681"),
        (-math.inf, 4, "-inf"),
    ],
)
def test_format_number_plain(value, decimals, text):
    assert format_number(value, decimals) == text


def test_display_uses_the_real_minus_sign_and_infinity_symbol():
    assert format_number(-1.25, 4, display=True) == f"{MINUS}1.25"
    assert format_number(-math.inf, 4, display=True) == f"{MINUS}∞"


def test_nan_never_reads_nan():
    assert "nan" not in format_number(math.nan).lower()
