"""Spider arguments: valid ones parse, each bad one raises one line naming it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from docscrawl.config import ConfigError, build_config, default_host_label


def test_defaults() -> None:
    config = build_config({"site": "https://docs.example.com/v2/"})
    assert config.out_dir == Path("output/docs.example.com")
    assert config.render == "auto"
    assert (config.max_pages, config.max_depth, config.allow, config.deny) == (None, None, (), ())


@pytest.mark.parametrize(("value", "expected"), [
    (None, True), ("", True), ("on", True), ("ON", True), ("yes", True), ("1", True),
    ("off", False), ("false", False), ("no", False), ("0", False),
])
def test_extract_switch(value: str | None, expected: bool) -> None:
    args = {"site": "https://d.example/"} | ({"extract": value} if value is not None else {})
    config = build_config(args)
    assert config.extract is expected
    assert config.as_arguments()["extract"] == ("on" if expected else "off")


def test_port_in_output_folder_and_root_setting() -> None:
    config = build_config({"site": "http://127.0.0.1:8765/docs/"}, output_root="/srv/crawls")
    assert config.out_dir == Path("/srv/crawls/127.0.0.1_8765")
    assert default_host_label("HTTPS://Docs.Example.com/") == "docs.example.com"


def test_patterns_and_limits() -> None:
    config = build_config({"site": "https://d.example/", "allow": r"/guide/, /api/$",
                           "deny": r"\?print=1", "max_pages": "10", "max_depth": "3",
                           "render": "NEVER"})
    assert [p.pattern for p in config.allow] == ["/guide/", "/api/$"]
    assert [p.pattern for p in config.deny] == [r"\?print=1"]
    assert (config.max_pages, config.max_depth, config.render) == (10, 3, "never")


def test_max_depth_zero_means_the_seed_only() -> None:
    assert build_config({"site": "https://d.example/", "max_depth": "0"}).max_depth == 0


def test_profile_adds_scope_rules(tmp_path: Path) -> None:
    profile = tmp_path / "site.json"
    profile.write_text(json.dumps({"scope": {"deny": ["/blog/"]}}), encoding="utf-8")
    config = build_config({"site": "https://d.example/", "config": str(profile)})
    assert [p.pattern for p in config.deny] == ["/blog/"]
    assert config.profile == {"scope": {"deny": ["/blog/"]}}


@pytest.mark.parametrize(("args", "named"), [
    ({}, "argument site"),
    ({"site": "docs.example.com"}, "argument site"),
    ({"site": "mailto:a@b.c"}, "argument site"),
    ({"site": "http://[::1"}, "argument site"),
    ({"site": "https://d.example/", "allow": "a,(b"}, "argument allow"),
    ({"site": "https://d.example/", "deny": "*"}, "argument deny"),
    ({"site": "https://d.example/", "render": "maybe"}, "argument render"),
    ({"site": "https://d.example/", "max_pages": "-1"}, "argument max_pages"),
    ({"site": "https://d.example/", "max_depth": "x"}, "argument max_depth"),
    ({"site": "https://d.example/", "max_depth": "-1"}, "argument max_depth"),
    ({"site": "https://d.example/", "config": "/nope.json"}, "argument config"),
    ({"site": "https://d.example/", "sitee": "x"}, "argument sitee"),
    ({"site": "https://d.example/", "extract": "maybe"}, "argument extract"),
    ({"site": "https://d.example/", "extract": "off", "state": "/tmp/s"}, "argument extract"),
])
def test_bad_arguments(args: dict[str, str], named: str) -> None:
    with pytest.raises(ConfigError) as info:
        build_config(args)
    message = str(info.value)
    assert message.startswith(named)
    assert "\n" not in message


@pytest.mark.parametrize("content", ["{not json", "[1, 2]",
                                     '{"selectors": {"main": "div[["}}',
                                     '{"selectors": {"colour": "main"}}'])
def test_bad_profile_content(tmp_path: Path, content: str) -> None:
    profile = tmp_path / "p.json"
    profile.write_text(content, encoding="utf-8")
    with pytest.raises(ConfigError, match=r"^argument config"):
        build_config({"site": "https://d.example/", "config": str(profile)})
