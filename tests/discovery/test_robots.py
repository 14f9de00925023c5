"""docscrawl.discovery.robots: RFC 9309 through Protego, with the deciding line.

Named after the RFC 9309 clauses they check; the agreement tests prove that the
reported rule is consistent with Protego's own answer.
"""

from __future__ import annotations

import random

import pytest
from protego import Protego

from docscrawl.discovery.robots import MAX_ROBOTS_BYTES, RobotsDecision, RobotsPolicy

ORIGIN = "https://d.example"


def _policy(text: str) -> RobotsPolicy:
    return RobotsPolicy.from_response(200, text.encode())


# (robots.txt, path, allowed, rule)
RULE_CASES = [
    # 2.2.2: rules are prefixes of the path
    ("User-agent: *\nDisallow: /private/\n", "/private/a", False, "Disallow: /private/"),
    ("User-agent: *\nDisallow: /private/\n", "/private", True, None),
    ("User-agent: *\nDisallow: /private/\n", "/public/", True, None),
    ("User-agent: *\nDisallow: /\n", "/", False, "Disallow: /"),
    ("User-agent: *\nDisallow: /\n", "/any/thing?x=1", False, "Disallow: /"),
    # 2.2.2: the longest match wins
    ("User-agent: *\nDisallow: /private/\nAllow: /private/ok\n", "/private/ok/1", True,
     "Allow: /private/ok"),
    ("User-agent: *\nAllow: /p\nDisallow: /p/secret\n", "/p/secret/x", False,
     "Disallow: /p/secret"),
    ("User-agent: *\nAllow: /p\nDisallow: /p/secret\n", "/p/public", True, "Allow: /p"),
    # 2.2.2: Allow wins a tie
    ("User-agent: *\nDisallow: /same\nAllow: /same\n", "/same/x", True, "Allow: /same"),
    ("User-agent: *\nAllow: /same\nDisallow: /same\n", "/same", True, "Allow: /same"),
    # 2.2.3: "*" wildcard and "$" end anchor
    ("User-agent: *\nDisallow: /*.pdf$\n", "/docs/a.pdf", False, "Disallow: /*.pdf$"),
    ("User-agent: *\nDisallow: /*.pdf$\n", "/docs/a.pdf?dl=1", True, None),
    ("User-agent: *\nDisallow: /*.pdf\n", "/docs/a.pdf?dl=1", False, "Disallow: /*.pdf"),
    ("User-agent: *\nDisallow: /exact$\n", "/exact", False, "Disallow: /exact$"),
    ("User-agent: *\nDisallow: /exact$\n", "/exact/", True, None),
    ("User-agent: *\nDisallow: /*?\n", "/search?q=1", False, "Disallow: /*?"),
    ("User-agent: *\nDisallow: /*?\n", "/search", True, None),
    ("User-agent: *\nDisallow: /a/*/c\n", "/a/b/c/d", False, "Disallow: /a/*/c"),
    ("User-agent: *\nDisallow: /a/**/c\n", "/a/b/x/c", False, "Disallow: /a/**/c"),
    ("User-agent: *\nDisallow: *\n", "/anything", False, "Disallow: *"),
    ("User-agent: *\nDisallow: /\nAllow: /*.css$\n", "/s/a.css", True, "Allow: /*.css$"),
    ("User-agent: *\nDisallow: /\nAllow: /$\n", "/", True, "Allow: /$"),
    ("User-agent: *\nDisallow: /\nAllow: /$\n", "/a", False, "Disallow: /"),
    # "$" in the middle of a pattern is a literal dollar sign
    ("User-agent: *\nDisallow: /a$b\n", "/a$b", False, "Disallow: /a$b"),
    ("User-agent: *\nDisallow: /a$b\n", "/a%24b", False, "Disallow: /a$b"),
    ("User-agent: *\nDisallow: /a$b\n", "/ab", True, None),
    # 2.2.2: percent-encoding equivalence
    ("User-agent: *\nDisallow: /caf%C3%A9\n", "/café", False, "Disallow: /caf%C3%A9"),
    ("User-agent: *\nDisallow: /café\n", "/caf%c3%a9/x", False, "Disallow: /café"),
    ("User-agent: *\nDisallow: /%7Euser\n", "/~user", False, "Disallow: /%7Euser"),
    ("User-agent: *\nDisallow: /~user\n", "/%7euser", False, "Disallow: /~user"),
    ("User-agent: *\nDisallow: /a b\n", "/a%20b", False, "Disallow: /a b"),
    ("User-agent: *\nDisallow: /a%2Fb\n", "/a/b", True, None),
    ("User-agent: *\nDisallow: /a%2fb\n", "/a%2Fb", False, "Disallow: /a%2fb"),
    # 2.2.1: group for our product token, case-insensitive, else "*"
    ("User-agent: *\nDisallow: /\n\nUser-agent: DocsCrawl\nDisallow: /own\n", "/x", True, None),
    ("User-agent: *\nDisallow: /\n\nUser-agent: DOCSCRAWL\nDisallow: /own\n", "/own", False,
     "Disallow: /own"),
    ("User-agent: other\nDisallow: /\n", "/x", True, None),
    ("User-agent: other\nDisallow: /\n\nUser-agent: *\nDisallow: /star\n", "/star", False,
     "Disallow: /star"),
    ("User-agent: a\nUser-agent: docscrawl\nDisallow: /shared\n", "/shared", False,
     "Disallow: /shared"),
    # 2.2.1: groups for the same token are merged
    ("User-agent: docscrawl\nDisallow: /one\n\nUser-agent: *\nDisallow: /\n\n"
     "User-agent: docscrawl\nDisallow: /two\n", "/two", False, "Disallow: /two"),
    # 2.2.2: an empty Disallow allows everything for the group
    ("User-agent: *\nDisallow: /\n\nUser-agent: docscrawl\nDisallow:\n", "/x", True, None),
    ("User-agent: *\nDisallow:\n", "/x", True, None),
    # 2.3.1: /robots.txt itself is always allowed
    ("User-agent: *\nDisallow: /\n", "/robots.txt", True, None),
    # comments, misspelled directive names, BOM-free trailing whitespace
    ("User-agent: *\nDisallow: /x # not here\n", "/x/1", False, "Disallow: /x"),
    ("User-agent: *\nDissallow: /typo\n", "/typo", False, "Disallow: /typo"),
    ("# only a comment\n", "/x", True, None),
    ("Disallow: /before-any-group\n", "/before-any-group", True, None),
    # Protego also allows /dir/ when /dir/index.html is allowed
    ("User-agent: *\nDisallow: /docs/\nAllow: /docs/index.html\n", "/docs/", True,
     "Allow: /docs/index.html"),
    ("User-agent: *\nDisallow: /docs/\nAllow: /docs/index.html\n", "/docs/other", False,
     "Disallow: /docs/"),
]  # fmt: skip


@pytest.mark.parametrize(("robots", "path", "allowed", "rule"), RULE_CASES)
def test_decide_reports_the_deciding_line(
    robots: str, path: str, allowed: bool, rule: str | None
) -> None:
    assert _policy(robots).decide(ORIGIN + path) == RobotsDecision(allowed=allowed, rule=rule)


def _protego_allows(robots: str, url: str) -> bool:
    return Protego.parse(robots).can_fetch(url, "docscrawl")


@pytest.mark.parametrize(("robots", "path", "allowed", "rule"), RULE_CASES)
def test_table_agrees_with_protego(robots: str, path: str, allowed: bool, rule: str | None) -> None:
    assert _protego_allows(robots, ORIGIN + path) is allowed


def test_prefix_user_agent_group_is_not_ours() -> None:
    """RFC 9309 2.2.1 wants an exact token; Protego alone would pick `docs` here."""
    robots = "User-agent: docs\nDisallow: /\n\nUser-agent: *\nDisallow: /star\n"
    assert _policy(robots).decide(ORIGIN + "/x") == RobotsDecision(allowed=True, rule=None)
    assert _policy(robots).decide(ORIGIN + "/star") == RobotsDecision(False, "Disallow: /star")
    assert not _protego_allows(robots, ORIGIN + "/x")


def test_user_agent_argument_selects_the_group() -> None:
    body = b"User-agent: otherbot\nDisallow: /o\n\nUser-agent: *\nDisallow: /s\n"
    policy = RobotsPolicy.from_response(200, body, user_agent="OtherBot")
    assert policy.decide(ORIGIN + "/o") == RobotsDecision(False, "Disallow: /o")
    assert policy.decide(ORIGIN + "/s") == RobotsDecision(True, None)


# Random robots.txt files and paths: the decision is Protego's, and the reported
# line is one that Protego, given that line alone, also matches.
_PATTERN_PIECES = ["/", "/", "a", "b", "*", "%41", "%2F", "é", "?", "=", ".", "index.html", "$"]
_PATH_PIECES = ["/", "/", "a", "A", "b", "%41", "%2f", "é", "?", "=", ".", "index.html", "$"]


def _random_value(rng: random.Random, pieces: list[str]) -> str:
    return "/" + "".join(rng.choice(pieces) for _ in range(rng.randint(0, 5)))


def _random_robots(rng: random.Random) -> tuple[str, list[str]]:
    """Return a robots.txt and the values of the group that applies to docscrawl.

    Consecutive user-agent lines share the rules that follow them (RFC 9309 2.1).
    """
    lines: list[str] = []
    groups: dict[str, list[str]] = {}
    agents: list[str] = []
    for agent in rng.sample(["*", "docscrawl", "DocsCrawl", "other"], k=rng.randint(1, 3)):
        lines.append(f"User-agent: {agent}")
        agents.append(agent.lower())
        groups.setdefault(agent.lower(), [])
        rule_count = rng.randint(0, 5)
        for _ in range(rule_count):
            value = _random_value(rng, _PATTERN_PIECES)
            for member in agents:
                groups[member].append(value)
            lines.append(f"{rng.choice(['Allow', 'Disallow'])}: {value}")
        if rule_count:
            agents = []
    ours = groups["docscrawl"] if "docscrawl" in groups else groups.get("*", [])
    return "\n".join(lines) + "\n", ours


def _line_matches(rule: str, url: str) -> bool:
    """Does Protego, given only this rule line, match *url* with it?"""
    field, _, value = rule.partition(": ")
    if field == "Disallow":
        return not Protego.parse(f"User-agent: *\nDisallow: {value}\n").can_fetch(url, "x")
    # Disallow "/" matches everything and loses a tie against any matching Allow.
    return Protego.parse(f"User-agent: *\nDisallow: /\nAllow: {value}\n").can_fetch(url, "x")


@pytest.mark.parametrize("seed", range(200))
def test_reported_rule_agrees_with_protego_on_random_files(seed: int) -> None:
    rng = random.Random(seed)
    robots, values = _random_robots(rng)
    policy = _policy(robots)
    for _ in range(40):
        url = ORIGIN + _random_value(rng, _PATH_PIECES)
        if url.endswith("/robots.txt"):
            continue
        decision = policy.decide(url)
        assert decision.allowed is _protego_allows(robots, url), (robots, url)
        if decision.rule is None:
            assert decision.allowed, (robots, url)
            assert not any(_line_matches(f"Disallow: {v}", url) for v in values), (robots, url)
            continue
        assert decision.rule.startswith("Allow: " if decision.allowed else "Disallow: ")
        assert decision.rule.partition(": ")[2] in values, (robots, url, decision)
        assert _line_matches(decision.rule, url), (robots, url, decision)


@pytest.mark.parametrize(
    ("status", "state", "allowed", "rule"),
    [
        (200, "parsed", False, "Disallow: /x"),
        (203, "parsed", False, "Disallow: /x"),
        (301, "missing", True, None),
        (400, "missing", True, None),
        (401, "missing", True, None),
        (403, "missing", True, None),
        (404, "missing", True, None),
        (410, "missing", True, None),
        (429, "missing", True, None),
        (500, "unreachable", False, "robots.txt unreachable (HTTP 500): disallow all"),
        (503, "unreachable", False, "robots.txt unreachable (HTTP 503): disallow all"),
        (None, "unreachable", False, "robots.txt unreachable (no response): disallow all"),
        (100, "unreachable", False, "robots.txt unreachable (HTTP 100): disallow all"),
    ],
)
def test_status_handling(status: int | None, state: str, allowed: bool, rule: str | None) -> None:
    policy = RobotsPolicy.from_response(status, b"User-agent: *\nDisallow: /x\n")
    assert policy.state == state
    assert policy.decide(ORIGIN + "/x/page") == RobotsDecision(allowed=allowed, rule=rule)


@pytest.mark.parametrize("status", [200, 404, 503, None])
def test_robots_txt_itself_is_always_allowed(status: int | None) -> None:
    policy = RobotsPolicy.from_response(status, b"User-agent: *\nDisallow: /\n")
    assert policy.decide(ORIGIN + "/robots.txt") == RobotsDecision(allowed=True, rule=None)


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"\xff\xfe\x00\x01\x80\x81garbage\x00",
        b"<!doctype html><html><body>Not found</body></html>",
        bytes(range(256)) * 8,
        b"User-agent: *\nDisallow\nAllow\n:::\n\x00\n",
        b"\n" * 10000,
    ],
)
def test_garbage_is_parsed_as_allow_all(body: bytes) -> None:
    policy = RobotsPolicy.from_response(200, body)
    assert policy.state == "parsed"
    assert policy.decide(ORIGIN + "/any") == RobotsDecision(allowed=True, rule=None)
    assert policy.crawl_delay is None


def test_undecodable_bytes_do_not_hide_rules() -> None:
    body = b"\xef\xbb\xbfUser-agent: *\n# caf\xe9\nDisallow: /x\xff\nDisallow: /y\n"
    policy = RobotsPolicy.from_response(200, body)
    assert policy.decide(ORIGIN + "/y") == RobotsDecision(False, "Disallow: /y")


def test_rules_past_the_size_limit_are_ignored() -> None:
    body = b"User-agent: *\nDisallow: /early\n" + b"#" * MAX_ROBOTS_BYTES + b"\nDisallow: /late\n"
    policy = RobotsPolicy.from_response(200, body)
    assert not policy.decide(ORIGIN + "/early").allowed
    assert policy.decide(ORIGIN + "/late").allowed


@pytest.mark.parametrize(
    ("robots", "delay"),
    [
        ("User-agent: *\nCrawl-delay: 3\n", 3.0),
        ("User-agent: *\nCrawl-delay: 3\n\nUser-agent: docscrawl\nCrawl-delay: 0.5\n", 0.5),
        ("User-agent: *\nCrawl-delay: 3\n\nUser-agent: docscrawl\nDisallow: /x\n", None),
        ("User-agent: other\nCrawl-delay: 3\n", None),
        ("User-agent: *\nCrawl-delay: soon\n", None),
        ("", None),
    ],
)
def test_crawl_delay_of_our_group(robots: str, delay: float | None) -> None:
    assert _policy(robots).crawl_delay == delay


def test_sitemaps_in_file_order() -> None:
    robots = (
        "Sitemap: https://d.example/a.xml\nUser-agent: *\nDisallow: /x\n"
        "sitemap: https://d.example/b.xml.gz\n"
    )
    assert _policy(robots).sitemaps == ["https://d.example/a.xml", "https://d.example/b.xml.gz"]


@pytest.mark.parametrize("status", [404, 503, None])
def test_no_sitemaps_or_delay_without_a_parsed_file(status: int | None) -> None:
    policy = RobotsPolicy.from_response(status, b"Sitemap: https://d.example/a.xml\n")
    assert policy.sitemaps == []
    assert policy.crawl_delay is None
