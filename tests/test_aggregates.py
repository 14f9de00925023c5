"""Aggregate detection from content overlap (pure)."""

from __future__ import annotations

from docscrawl.aggregates import AggregateTracker

PARAS = {name: [f"{name} paragraph {i}: " + "words that make a long enough paragraph " * 2
                for i in range(4)] for name in ("a", "b", "c")}


def page(*names: str, only_first: bool = False) -> str:
    return "\n\n".join(f"# {n}\n\n" + "\n\n".join(PARAS[n][:1] if only_first else PARAS[n])
                       for n in names)


def test_concatenation_is_an_aggregate_whatever_the_order_of_arrival() -> None:
    tracker = AggregateTracker()
    tracker.observe("all", page("a", "b", "c"))
    for name in "abc":
        tracker.observe(name, page(name))
    assert tracker.verdicts() == {"all": ["a", "b", "c"]}


def test_a_summary_of_first_paragraphs_or_one_long_page_is_not() -> None:
    tracker = AggregateTracker()
    for name in "abc":
        tracker.observe(name, page(name))
    tracker.observe("summary", page("a", "b", "c", only_first=True) + "\n\n" + page("a"))
    tracker.observe("long", page("a") + "\n\n" + "\n\n".join(
        f"other text number {i} that no other page of the site holds anywhere at all"
        for i in range(20)))
    assert tracker.verdicts() == {}
