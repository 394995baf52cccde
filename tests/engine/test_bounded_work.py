"""Bounded work: divisor suggestions stay short, and the size budget refuses what would not fit
by name, saying what does fit."""

from __future__ import annotations

import pytest

from attention_explorer.engine import (
    AttentionConfig,
    AttentionInputError,
    divisors,
)


def test_divisors_match_the_definition():
    for n in range(1, 400):
        assert divisors(n) == [d for d in range(1, n + 1) if n % d == 0]


def test_a_huge_prime_head_count_gets_a_short_suggestion():
    # 1000000007 is prime: the suggestion lists its only divisors instead of scanning to n
    with pytest.raises(AttentionInputError) as info:
        AttentionConfig(heads=1_000_000_007, kv_heads=2).validate()
    assert info.value.field == "kv_heads" and info.value.message.endswith("try 1, 1000000007")


def test_suggested_divisors_are_few_and_near_the_asked_value():
    from attention_explorer.engine.config import divisors_near

    assert divisors_near(720, 7) == [4, 5, 6, 8, 9, 10]
    assert divisors_near(12, 5, count=3) == [3, 4, 6]


def test_budget_refuses_too_many_tokens_and_heads_by_name():
    from attention_explorer.engine.budget import MAX_HEADS, MAX_TOKENS, check_budget

    config = AttentionConfig(heads=1, d_k=2)
    with pytest.raises(AttentionInputError, match=f"at most {MAX_TOKENS}") as info:
        check_budget(config, MAX_TOKENS + 1, 3, available=2**50)
    assert info.value.field == "tokens"
    with pytest.raises(AttentionInputError) as info:
        check_budget(AttentionConfig(heads=MAX_HEADS + 1), 3, 3, available=2**50)
    assert info.value.field == "heads"
    check_budget(config, MAX_TOKENS, MAX_TOKENS, heads_kept=1, available=2**50)


def test_budget_refusal_says_what_fits_and_that_does_fit():
    import re

    from attention_explorer.engine.budget import check_budget

    config = AttentionConfig(heads=8, d_k=8)
    free = 512 * 2**20
    with pytest.raises(AttentionInputError) as info:
        check_budget(config, 8192, 8192, available=free)
    fits = int(re.search(r"about (\d+) tokens fit with 8 head", info.value.message)[1])
    assert 100 < fits < 8192
    check_budget(config, fits, fits, available=free)  # the suggestion itself is accepted
    with pytest.raises(AttentionInputError):
        check_budget(config, fits * 2, fits * 2, available=free)


def test_budget_reads_the_free_memory_only_for_a_trace_that_is_not_small(monkeypatch):
    from attention_explorer.engine import budget

    read = []
    monkeypatch.setattr(budget, "available_memory", lambda: read.append(1) or 2**20)  # 1 MiB
    config = AttentionConfig(heads=8, d_k=64, d_model=512)
    assert budget.trace_bytes(config, 256, 256, 8) <= budget.SMALL_TRACE_BYTES
    budget.check_budget(config, 256, 256)  # small: not checked against the 1 MiB
    assert read == []
    with pytest.raises(AttentionInputError, match="more than the"):
        budget.check_budget(config, 2048, 2048)
    assert read == [1]


def test_compute_sized_files_pass_the_budget_on_a_small_machine():
    from attention_explorer.engine.budget import check_budget

    # n = 4096 with one head kept (what the window computes for long sequences) fits in 1 GiB
    check_budget(
        AttentionConfig(heads=8, d_k=64, d_model=512), 4096, 4096, heads_kept=1, available=2**30
    )


def test_a_previewed_pass_needs_only_its_pictures_and_mask():
    from attention_explorer.engine.budget import check_budget

    config = AttentionConfig(d_model=64, heads=8)
    free = 2 * 2**30  # 2 GiB to spare: 16384 tokens as [n, n] stages would need 4 GiB and more
    with pytest.raises(AttentionInputError, match="tokens"):
        check_budget(config, 16384, 16384, heads_kept=1, available=free)
    check_budget(config, 16384, 16384, heads_kept=1, available=free, preview=512)
