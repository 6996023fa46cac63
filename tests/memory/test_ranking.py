"""Reciprocal rank fusion: both rankings' top first, a memory found by one ranking alone kept
by its place, ties to the newer, repeats counted once."""

from __future__ import annotations

from bot.memory.ranking import fused


def test_a_memory_high_in_both_rankings_leads() -> None:
    by_meaning = [7, 3, 9]
    by_words = [3, 5]
    assert fused(by_meaning, by_words) == [3, 7, 5, 9]


def test_one_ranking_alone_keeps_its_order() -> None:
    assert fused([4, 2, 8]) == [4, 2, 8]
    assert fused([4, 2, 8], []) == [4, 2, 8]
    assert fused() == []


def test_the_same_places_go_to_the_newer_memory() -> None:
    assert fused([1], [2]) == [2, 1]


def test_a_repeat_in_one_ranking_counts_once() -> None:
    assert fused([5, 5, 6], [6]) == [6, 5]


def test_k_weighs_the_first_places_against_agreement() -> None:
    # 1 is first by meaning alone; 3 is third and second: with no K the first place wins,
    # with the usual one being found by both does
    by_meaning, by_words = [1, 2, 3], [2, 3]
    assert fused(by_meaning, by_words, k=0) == [2, 1, 3]
    assert fused(by_meaning, by_words) == [2, 3, 1]


def test_a_ranking_may_weigh_less() -> None:
    by_meaning, by_words = [1, 2, 3, 4, 9], [9]
    assert fused(by_meaning, by_words) == [9, 1, 2, 3, 4]  # found by both: first
    assert fused(by_meaning, by_words, weights=(1.0, 0.01)) == [1, 2, 3, 4, 9]
    assert fused(by_meaning, by_words, weights=(1.0, 0.5))[:2] == [9, 1]
