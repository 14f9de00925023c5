"""docscrawl.discovery.scope: default scope, allow/deny rules, refusal reasons."""

from __future__ import annotations

import re

import pytest

from docscrawl.discovery.scope import Scope, ScopeDecision, scope_prefix


def _patterns(*texts: str) -> list[re.Pattern[str]]:
    return [re.compile(text) for text in texts]


@pytest.mark.parametrize(
    ("site", "prefix"),
    [
        ("https://d.example/v2/", "https://d.example/v2/"),
        ("https://d.example/docs/index.html", "https://d.example/docs/"),
        ("https://d.example/v2", "https://d.example/"),
        ("https://d.example", "https://d.example/"),
        ("HTTPS://D.Example:443/Docs/", "https://d.example/Docs/"),
        ("http://127.0.0.1:8000/a/b/c.html?x=1#y", "http://127.0.0.1:8000/a/b/"),
        ("https://d.example/a/./b/../c/", "https://d.example/a/c/"),
    ],
)
def test_prefix_is_the_directory_of_the_site_path(site: str, prefix: str) -> None:
    assert Scope(site).prefix == prefix
    assert scope_prefix(site) == prefix


@pytest.mark.parametrize("site", ["not a url", "ftp://d.example/", "/docs/", "https://"])
def test_bad_site_raises(site: str) -> None:
    with pytest.raises(ValueError, match="site"):
        Scope(site)


DEFAULT_SCOPE = [
    ("https://d.example/v2/", True),
    ("https://d.example/v2/guide/intro.html", True),
    ("https://D.EXAMPLE:443/v2/x", True),
    ("https://d.example/v2/a/../b", True),
    ("https://d.example/v2/x#frag", True),
    ("https://d.example/v2/x?utm_source=z", True),
    ("https://d.example/v2", False),
    ("https://d.example/v20/", False),
    ("https://d.example/v1/", False),
    ("https://d.example/v2/../v1/", False),
    ("https://d.example/", False),
    ("http://d.example/v2/", False),
    ("https://d.example:8443/v2/", False),
    ("https://docs.d.example/v2/", False),
    ("https://d.example.evil/v2/", False),
    ("https://user@d.example/v2/", False),
    ("mailto:x@d.example", False),
    ("javascript:alert(1)", False),
]


@pytest.mark.parametrize(("url", "inside"), DEFAULT_SCOPE)
def test_default_scope(url: str, inside: bool) -> None:
    decision = Scope("https://d.example/v2/").decide(url)
    if inside:
        assert decision == ScopeDecision(allowed=True, reason=None, rule=None)
    else:
        assert decision == ScopeDecision(
            allowed=False, reason="out_of_scope", rule="scope: https://d.example/v2/"
        )


@pytest.mark.parametrize(("url", "inside"), DEFAULT_SCOPE)
def test_in_default_scope_matches_decide_without_rules(url: str, inside: bool) -> None:
    assert Scope("https://d.example/v2/").in_default_scope(url) is inside


SITE = "https://d.example/docs/"
RULE_CASES = [
    # deny wins, inside and outside the default scope, and over allow
    ({"deny": [r"/docs/private/"]}, "https://d.example/docs/private/a", False, "denied_by_rule",
     r"/docs/private/"),
    ({"deny": [r"\.pdf$"]}, "https://d.example/docs/a.pdf", False, "denied_by_rule", r"\.pdf$"),
    ({"deny": [r"\.pdf$"]}, "https://d.example/docs/a.pdf#p2", False, "denied_by_rule", r"\.pdf$"),
    ({"deny": [r"\.pdf$"]}, "https://d.example/docs/a.html", True, None, None),
    ({"deny": [r"other"]}, "https://other.example/", False, "denied_by_rule", "other"),
    ({"deny": [r"/x/"], "allow": [r"/x/"]}, "https://d.example/docs/x/", False, "denied_by_rule",
     "/x/"),
    ({"deny": [r"/zz$", r"/b$"]}, "https://d.example/docs/b", False, "denied_by_rule", "/b$"),
    # deny matches the URL as given or normalized
    ({"deny": [r"utm_source"]}, "https://d.example/docs/a?utm_source=x", False, "denied_by_rule",
     "utm_source"),
    ({"deny": [r"/Docs/"]}, "https://D.example/docs/Docs/", False, "denied_by_rule", "/Docs/"),
    ({"deny": [r"résumé"]}, "https://d.example/docs/résumé", False, "denied_by_rule", "résumé"),
    ({"deny": [r"r%C3%A9sum"]}, "https://d.example/docs/résumé", False, "denied_by_rule",
     "r%C3%A9sum"),
    # allow widens
    ({"allow": [r"^https://d\.example/blog/"]}, "https://d.example/blog/post", True, None,
     r"^https://d\.example/blog/"),
    ({"allow": [r"api\.example"]}, "https://api.example/ref/", True, None, r"api\.example"),
    # allow narrows
    ({"allow": [r"/docs/guide/", r"/docs/api/"]}, "https://d.example/docs/faq", False,
     "not_allowed_by_rule", "/docs/guide/,/docs/api/"),
    ({"allow": [r"/docs/guide/", r"/docs/api/"]}, "https://d.example/docs/api/x", True, None,
     "/docs/api/"),
    # no allow match outside the default scope stays out_of_scope
    ({"allow": [r"/docs/guide/"]}, "https://d.example/other/", False, "out_of_scope",
     "scope: https://d.example/docs/"),
    # allow cannot widen to a non-http(s) URL
    ({"allow": [r"mailto"]}, "mailto:a@d.example", False, "out_of_scope",
     "scope: https://d.example/docs/"),
]  # fmt: skip


@pytest.mark.parametrize(("rules", "url", "allowed", "reason", "rule"), RULE_CASES)
def test_rules(
    rules: dict[str, list[str]], url: str, allowed: bool, reason: str | None, rule: str | None
) -> None:
    scope = Scope(
        SITE, allow=_patterns(*rules.get("allow", ())), deny=_patterns(*rules.get("deny", ()))
    )
    assert scope.decide(url) == ScopeDecision(allowed=allowed, reason=reason, rule=rule)


@pytest.mark.parametrize(("rules", "url", "allowed", "reason", "rule"), RULE_CASES)
def test_refusals_always_carry_a_known_reason_and_a_rule(
    rules: dict[str, list[str]], url: str, allowed: bool, reason: str | None, rule: str | None
) -> None:
    scope = Scope(
        SITE, allow=_patterns(*rules.get("allow", ())), deny=_patterns(*rules.get("deny", ()))
    )
    decision = scope.decide(url)
    if not decision.allowed:
        assert decision.reason in {"out_of_scope", "denied_by_rule", "not_allowed_by_rule"}
        assert decision.rule


def test_decision_is_frozen() -> None:
    decision = Scope(SITE).decide(SITE)
    with pytest.raises(AttributeError):
        decision.allowed = False  # type: ignore[misc]
