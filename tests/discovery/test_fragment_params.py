"""Fragment-like query parameters (pure): known generators, learned from merges."""

from __future__ import annotations

from docscrawl.discovery.fragment_params import FragmentParams


def test_docsify_ids_are_anchors_once_the_generator_is_known() -> None:
    params = FragmentParams()
    assert params.identify("https://d.test/guide?id=install") == (
        "https://d.test/guide?id=install", None)
    params.learn_generator("docsify")
    url, rule = params.identify("https://d.test/guide?id=install&lang=en")
    assert url == "https://d.test/guide?lang=en"
    assert rule == "query parameter id is an in-page anchor of docsify"
    params.learn_generator("sphinx")  # other generators add nothing
    assert set(params.rules) == {"id"}


def test_a_parameter_whose_values_serve_the_same_page_is_learned() -> None:
    params = FragmentParams()
    params.learn_duplicate("https://d.test/a.html?highlight=x", "https://d.test/a.html")
    assert params.identify("https://d.test/b.html?highlight=y")[1] is None  # one value: not yet
    params.learn_duplicate("https://d.test/b.html?highlight=y", "https://d.test/b.html")
    assert params.identify("https://d.test/c.html?highlight=z") == (
        "https://d.test/c.html", "query parameter highlight: 2 values served the same content")


def test_pages_that_differ_by_path_or_by_two_parameters_teach_nothing() -> None:
    params = FragmentParams()
    params.learn_duplicate("https://d.test/a.html?p=1", "https://d.test/b.html?p=2")
    params.learn_duplicate("https://d.test/a.html?p=1&q=1", "https://d.test/a.html")
    params.learn_duplicate("https://d.test/a.html?p=2&q=2", "https://d.test/a.html")
    assert params.rules == {}
    again = FragmentParams()
    again.restore({"rules": {"id": "known"}})
    assert again.identify("https://d.test/x?id=1") == ("https://d.test/x", "known")
