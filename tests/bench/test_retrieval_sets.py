"""The retrieval benchmark's question sets are well formed and honest (held-out sites are
not in the tuning set), and the benchmark serves an installed package itself, reports every
figure per set and kind, and prints held-out misses only when asked."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from benchmarks import question_sites, retrieval

BOOST = Path("/usr/share/doc/libboost1.81-doc/doc/html/container")
# Sites whose every question is held out: no other set may ask about them.
HELDOUT_SITES = {"postgresql-docs", "octave-manual", "nodejs-docs"}


def _questions(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def test_question_sets_are_well_formed_and_held_out_sites_stay_out() -> None:
    sets = retrieval.load_sets("all")
    assert len(sets["heldout"]) >= 60 and len(sets["tune"]) >= 80
    for name in ("old", "tune", "heldout"):
        for question in sets[name]:
            assert {"site", "q", "page", "section", "kind"} <= question.keys(), question
            assert question["kind"] in retrieval.KINDS, question
            assert (question["kind"] == "version-bound") == bool(question.get("version"))
            if name != "old":  # the old set names sections by anchor only
                assert question["section"] is None or question.get("heading"), question
    heldout_sites = {q["site"] for q in sets["heldout"]}
    assert heldout_sites >= HELDOUT_SITES
    assert not HELDOUT_SITES & {q["site"] for q in sets["tune"] + sets["old"]}
    assert heldout_sites - HELDOUT_SITES, "some held-out questions are on shared sites"
    texts = [q["q"] for questions in sets.values() for q in questions]
    assert len(texts) == len(set(texts))


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.e2e
@pytest.mark.skipif(not BOOST.is_dir(), reason="libboost1.81-doc is not installed")
def test_serves_an_installed_package_and_hides_heldout_misses(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    site = question_sites.AdhocSite(BOOST, _free_port(), "main_features.html")
    monkeypatch.setitem(question_sites.ADHOC_SITES, "boost-adhoc", site)
    monkeypatch.setitem(question_sites.PAGE_CAPS, "boost-adhoc", 30)
    lines = [
        {"site": "boost-adhoc", "q": "vector whose elements keep their addresses on insert",
         "page": "non_standard_containers.html",
         "section": "container.non_standard_containers.stable_vector",
         "heading": "stable_vector", "kind": "concept"},
        # answered (on purpose, wrongly) by a page about something else: always a miss
        {"site": "boost-adhoc", "q": "stable_vector iterator invalidation guarantees",
         "page": "known_issues.html", "section": None, "kind": "how-to"},
        {"site": "boost-adhoc", "q": "a page nobody links to", "page": "no-such-page.html",
         "section": None, "kind": "how-to"},
    ]
    heldout = tmp_path / "heldout.jsonl"
    heldout.write_text("".join(json.dumps(line) + "\n" for line in lines))
    monkeypatch.setitem(retrieval.SETS, "heldout", (heldout,))
    monkeypatch.setitem(retrieval.SETS, "tune", (heldout,))

    def report(*flags: str) -> dict:
        retrieval.main(["--outputs", str(tmp_path / "out"), "--crawl", *flags])
        return json.loads(capsys.readouterr().out)

    hidden = report("--set", "heldout", "--misses")
    assert (tmp_path / "out" / "boost-adhoc" / "chunks.jsonl").exists()  # crawled, served
    figures = hidden["sets"]["heldout"]
    for system in ("docscrawl", "plain_bm25"):
        assert figures[system]["questions"] == 2
        assert set(figures[system]["by_kind"]) == {"concept", "how-to"}
        for key in ("page_hit@1", "page_hit@5", "section_hit@5", "mrr@10"):
            assert 0.0 <= figures[system][key] <= 1.0
    assert [s["why"] for s in hidden["skipped"]] == [
        "page not in the crawl: no-such-page.html"]
    assert "misses" not in hidden  # --misses never lists the held-out set's
    assert "by_site" not in figures["docscrawl"]
    assert "invalidation" not in json.dumps(hidden["sets"])
    assert "nobody links" not in json.dumps(hidden)  # a skipped question's text neither

    wrong = "stable_vector iterator"
    shown = report("--set", "heldout", "--show-heldout-misses")
    assert any(m["q"].startswith(wrong) for m in shown["misses"]["heldout"]["page"])
    assert [s["q"] for s in shown["skipped"]] == ["a page nobody links to"]
    tuning = report("--set", "tune", "--misses")  # other sets' misses: with --misses
    assert any(m["q"].startswith(wrong) for m in tuning["misses"]["tune"]["page"])
    assert tuning["sets"]["tune"]["docscrawl"]["by_site"]["boost-adhoc"]["questions"] == 2

    retrieval.main(["--outputs", str(tmp_path / "out"), "--set", "heldout", "--table"])
    table = capsys.readouterr().out
    assert "| heldout | all | docscrawl search | 2 |" in table
    assert "| heldout | concept | plain BM25 | 1 |" in table
    assert wrong not in table
