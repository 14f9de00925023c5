"""Aggregate detection from content overlap (pure)."""

from __future__ import annotations

from docscrawl.dedup.aggregates import AggregateTracker

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


def test_template_paragraphs_shared_by_many_pages_identify_nothing() -> None:
    """rustdoc shape: every item page carries the same feature note and stock trait
    documentation; the long enum pages that hold them aggregate nothing."""
    note = "This type is available only if the crate is built with the full feature flag on."
    stock = "Performs copy-assignment from the source value, reusing the resources it holds."
    tracker = AggregateTracker()
    for i in range(6):
        own = f"A syntax tree node number {i} that stands for one kind of expression or item."
        tracker.observe(f"struct{i}", "\n\n".join([own, note, stock]))
    for i in range(3):
        body = [f"The enum number {i} has variants for every kind of node in this crate."]
        body += [f"Variant {j} of enum {i} is documented here with enough words to count."
                 for j in range(8)]
        tracker.observe(f"enum{i}", "\n\n".join([*body, note, stock]))
    assert tracker.verdicts() == {}


def test_confirmation_reads_the_parts_whole() -> None:
    """A print view is all its parts; a page that re-exports two pages among as much text
    of its own (Haddock's System.IO shape) is not an aggregate."""
    tracker = AggregateTracker()
    written = {name: page(name) for name in "abc"}
    own = "\n\n".join(f"own paragraph {i} of the module that re-exports the others here"
                      for i in range(5))
    written["print"] = page("a", "b", "c")
    written["module"] = page("a", "b") + "\n\n" + own
    for url, markdown in written.items():
        tracker.observe(url, markdown)
    verdicts = tracker.verdicts()
    assert set(verdicts) == {"print", "module"}
    assert tracker.confirm(verdicts, written.items()) == {"print": ["a", "b", "c"]}
