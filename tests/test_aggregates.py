"""Aggregate detection from content overlap, its per-page hashes in dicts or in the
crawl ledger (as a crawl keeps them): the same verdicts."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from docscrawl.crawl.ledger import Ledger
from docscrawl.dedup.aggregates import AggregateTracker, paragraph_hashes

Make = Callable[[], AggregateTracker]


@pytest.fixture(params=["dicts", "ledger"])
def make(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Make]:
    if request.param == "dicts":
        yield AggregateTracker
        return
    ledger = Ledger.open(tmp_path)
    made = [0]

    def in_ledger() -> AggregateTracker:
        made[0] += 1
        return AggregateTracker(samples=ledger.json_map(f"samples{made[0]}"),
                                by_hash=ledger.json_map(f"by_hash{made[0]}"))
    yield in_ledger
    ledger.close()

PARAS = {name: [f"{name} paragraph {i}: " + "words that make a long enough paragraph " * 2
                for i in range(4)] for name in ("a", "b", "c")}


def page(*names: str, only_first: bool = False) -> str:
    return "\n\n".join(f"# {n}\n\n" + "\n\n".join(PARAS[n][:1] if only_first else PARAS[n])
                       for n in names)


def test_concatenation_is_an_aggregate_whatever_the_order_of_arrival(make: Make) -> None:
    tracker = make()
    tracker.observe("all", page("a", "b", "c"))
    for name in "abc":
        tracker.observe(name, page(name))
    assert tracker.verdicts() == {"all": ["a", "b", "c"]}


def test_a_summary_of_first_paragraphs_or_one_long_page_is_not(make: Make) -> None:
    tracker = make()
    for name in "abc":
        tracker.observe(name, page(name))
    tracker.observe("summary", page("a", "b", "c", only_first=True) + "\n\n" + page("a"))
    tracker.observe("long", page("a") + "\n\n" + "\n\n".join(
        f"other text number {i} that no other page of the site holds anywhere at all"
        for i in range(20)))
    assert tracker.verdicts() == {}


def test_template_paragraphs_shared_by_many_pages_identify_nothing(make: Make) -> None:
    """rustdoc shape: every item page carries the same feature note and stock trait
    documentation; the long enum pages that hold them aggregate nothing."""
    note = "This type is available only if the crate is built with the full feature flag on."
    stock = "Performs copy-assignment from the source value, reusing the resources it holds."
    tracker = make()
    for i in range(6):
        own = f"A syntax tree node number {i} that stands for one kind of expression or item."
        tracker.observe(f"struct{i}", "\n\n".join([own, note, stock]))
    for i in range(3):
        body = [f"The enum number {i} has variants for every kind of node in this crate."]
        body += [f"Variant {j} of enum {i} is documented here with enough words to count."
                 for j in range(8)]
        tracker.observe(f"enum{i}", "\n\n".join([*body, note, stock]))
    assert tracker.verdicts() == {}


def test_confirmation_reads_the_parts_whole(make: Make) -> None:
    """A print view is all its parts; a page that re-exports two pages among as much text
    of its own (Haddock's System.IO shape) is not an aggregate."""
    tracker = make()
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


def test_paragraph_hashes_fold_links_spaces_and_case() -> None:
    prose = ("Read the [guide](guide.html \"The guide\") before   you\tstart the web server "
             "in production.")
    same = "read THE [guide](other/guide.html) before you start\nthe web server in production."
    hashes = paragraph_hashes(prose)
    assert len(hashes) == 1 and hashes == paragraph_hashes(same)
    assert hashes[0][1] == len(
        "read the [guide] before you start the web server in production.")
    assert paragraph_hashes("# " + prose) == []  # headings are not paragraphs
    short = "Fifty-nine ASCII characters are too few for a paragraph: ok"
    assert paragraph_hashes(short) == [] and paragraph_hashes(short + "!") != []
    # casefold lengthens: 58 characters with a sharp s fold to 60 and count
    assert paragraph_hashes("ß" * 2 + "x" * 56)[0][1] == 60
