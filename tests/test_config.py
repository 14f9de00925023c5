"""Spider arguments: valid ones parse, each bad one raises one line naming it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

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


@pytest.mark.parametrize(("site", "label"), [
    ("http://../docs/", "site"), ("http://./", "site"), ("http://..:8000/", "site_8000"),
    ("http://a%2Fb/", "a_2fb"), ("http://a\\b/x", "a_b"), ("http://%2e%2e/", "_2e_2e"),
    ("http://example.com./", "example.com"), ("http://[::1]:8080/", "::1_8080"),
    ("https://bücher.example/", "bücher.example"),
])
def test_the_default_output_folder_is_one_safe_path_component(site: str, label: str) -> None:
    assert default_host_label(site) == label
    root = Path("/srv/crawls")
    assert (root / label).resolve().parent == root and "/" not in label


@pytest.mark.parametrize("site", ["http://../docs/", "http://./", "http://a%2Fb/",
                                  "http://a\\b/", "http://x..y/"])
def test_a_seed_host_that_is_no_host_name_is_refused(site: str) -> None:
    with pytest.raises(ConfigError, match="argument site: not a host name"):
        build_config({"site": site}, output_root="/srv/crawls")


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


# ---- secrets: from a file or the environment, never echoed --------------------------------

SITE = {"site": "https://d.example/"}
SECRET = "s3cr3t-Ω-value"


def test_secrets_from_the_environment() -> None:
    environ = {"DOCSCRAWL_HTTP_PASS": SECRET, "DOCSCRAWL_AUTH_HEADER": f"X-Token: {SECRET}"}
    config = build_config({**SITE, "http_user": "alice"}, environ=environ)
    assert (config.http_user, config.http_pass) == ("alice", SECRET)
    assert config.auth_header == ("X-Token", SECRET)
    arguments = config.as_arguments()
    assert arguments["http_pass"] == "***" and arguments["auth_header"] == "X-Token: ***"
    assert SECRET not in repr(config) and SECRET not in str(arguments)


def test_the_environments_password_waits_for_a_user() -> None:
    config = build_config(SITE, environ={"DOCSCRAWL_HTTP_PASS": SECRET})
    assert (config.http_user, config.http_pass) == (None, None)


def test_an_argument_wins_over_the_environment(tmp_path: Path) -> None:
    environ = {"DOCSCRAWL_HTTP_PASS": "from-env", "DOCSCRAWL_AUTH_HEADER": "X-Env: e"}
    given = build_config({**SITE, "http_user": "u", "http_pass": "given",
                          "auth_header": "X-Given: g"}, environ=environ)
    assert (given.http_pass, given.auth_header) == ("given", ("X-Given", "g"))
    secret = tmp_path / "pass"
    secret.write_text("from-file\n", encoding="utf-8")
    from_file = build_config({**SITE, "http_user": "u", "http_pass_file": str(secret)},
                             environ=environ)
    assert (from_file.http_pass, from_file.http_pass_file) == ("from-file", secret)
    assert from_file.as_arguments()["http_pass_file"] == str(secret)


@pytest.mark.parametrize(("content", "expected"), [
    (f"{SECRET}\n".encode(), SECRET),
    (f"{SECRET}\r\n".encode(), SECRET),
    (SECRET.encode(), SECRET),
    (f"{SECRET}\n\n".encode(), f"{SECRET}\n"),  # one newline only
    (f" {SECRET} \n".encode(), f" {SECRET} "),  # a password may start or end with a space
])
def test_secret_files_lose_one_trailing_newline(
    tmp_path: Path, content: bytes, expected: str,
) -> None:
    path = tmp_path / "pass"
    path.write_bytes(content)
    config = build_config({**SITE, "http_user": "u", "http_pass_file": str(path)}, environ={})
    assert config.http_pass == expected


def test_auth_header_from_a_file(tmp_path: Path) -> None:
    path = tmp_path / "header"
    path.write_text(f"Authorization: Bearer {SECRET}\n", encoding="utf-8")
    config = build_config({**SITE, "auth_header_file": str(path)}, environ={})
    assert config.auth_header == ("Authorization", f"Bearer {SECRET}")
    assert config.as_arguments()["auth_header"] == "Authorization: ***"


def write(path: Path, content: bytes) -> str:
    path.write_bytes(content)
    return str(path)


@pytest.mark.parametrize(("make", "named", "says"), [
    (lambda d: {"http_user": "u", "http_pass_file": str(d / "missing")},
     "argument http_pass_file", "cannot read"),
    (lambda d: {"http_user": "u", "http_pass_file": str(d)}, "argument http_pass_file",
     "cannot read"),
    (lambda d: {"http_user": "u", "http_pass_file": write(d / "e", b"\n")},
     "argument http_pass_file", "is empty"),
    (lambda d: {"http_user": "u", "http_pass_file": write(d / "b", SECRET.encode("utf-16"))},
     "argument http_pass_file", "not UTF-8"),
    (lambda d: {"http_user": "u", "http_pass_file": write(d / "big", b"x" * 70_000)},
     "argument http_pass_file", "larger than 64 KiB"),
    (lambda d: {"http_user": "u", "http_pass": SECRET,
                "http_pass_file": write(d / "p", SECRET.encode())},
     "argument http_pass_file", "one way only"),
    (lambda d: {"http_pass": SECRET}, "argument http_pass", "needs argument http_user"),
    (lambda d: {"http_pass_file": write(d / "p", SECRET.encode())}, "argument http_pass_file",
     "needs argument http_user"),
    (lambda d: {"auth_header_file": write(d / "h", SECRET.encode())},
     "argument auth_header_file", "'Name: value'"),
    (lambda d: {"auth_header_file": write(d / "h", f"X-A: {SECRET}\nX-B: 2".encode())},
     "argument auth_header_file", "on one line"),
    (lambda d: {"auth_header": f"X-A: {SECRET}\r\nX-Injected: 1"}, "argument auth_header",
     "on one line"),
    (lambda d: {"auth_header": SECRET, "auth_header_file": write(d / "h", b"X-A: 1")},
     "argument auth_header_file", "one way only"),
])  # fmt: skip
def test_bad_secrets_name_the_argument_and_never_echo_the_secret(
    tmp_path: Path, make: Any, named: str, says: str,
) -> None:
    with pytest.raises(ConfigError) as info:
        build_config({**SITE, **make(tmp_path)}, environ={})
    message = str(info.value)
    assert message.startswith(named + ":") and says in message, message
    assert "\n" not in message and SECRET not in message and "s3cr3t" not in message


def test_a_bad_auth_header_in_the_environment_names_the_variable() -> None:
    with pytest.raises(ConfigError) as info:
        build_config(SITE, environ={"DOCSCRAWL_AUTH_HEADER": SECRET})
    assert str(info.value) == ("environment variable DOCSCRAWL_AUTH_HEADER: must look like "
                               "'Name: value' on one line")


def test_credentials_in_the_site_url_are_refused_unechoed() -> None:
    with pytest.raises(ConfigError) as info:
        build_config({"site": f"https://alice:{SECRET}@d.example/docs/"}, environ={})
    assert str(info.value).startswith("argument site: user:password@ in the URL")
    assert SECRET not in str(info.value)


@pytest.mark.parametrize(("value", "message"), [
    ("-1", "argument workers: must be an integer >= 0, got -1"),
    ("x", "argument workers: not an integer: 'x'"),
])
def test_bad_workers_is_one_line(value: str, message: str) -> None:
    with pytest.raises(ConfigError) as raised:
        build_config({"site": "https://d.example/", "workers": value})
    assert str(raised.value) == message


def test_workers_default_to_the_setting() -> None:
    assert build_config({"site": "https://d.example/"}).workers is None
    config = build_config({"site": "https://d.example/", "workers": "2"})
    assert (config.workers, config.as_arguments()["workers"]) == (2, 2)
    assert build_config({"site": "https://d.example/", "workers": " Auto"}).workers == "auto"


def test_auto_is_one_worker_where_two_cpus_are_usable() -> None:
    import os

    from docscrawl.config import auto_workers

    usable = len(os.sched_getaffinity(0))
    assert auto_workers() == (1 if usable >= 2 else 0)
    if usable >= 2:  # a process held to one CPU extracts in itself
        code = ("import os; from docscrawl.config import auto_workers; "
                "os.sched_setaffinity(0, {min(os.sched_getaffinity(0))}); print(auto_workers())")
        one = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             check=True, cwd=Path(__file__).resolve().parents[1])
        assert one.stdout.strip() == "0"


@pytest.mark.parametrize(("setting", "expected"), [
    (None, "auto"), ("auto", "auto"), (0, 0), ("3", 3),
    (-1, "setting DOCSCRAWL_EXTRACT_WORKERS: must be an integer >= 0, got -1"),
    ("x", "setting DOCSCRAWL_EXTRACT_WORKERS: not an integer: 'x'"),
])
def test_the_workers_setting_when_no_argument_names_them(setting: Any, expected: Any) -> None:
    from scrapy.settings import Settings

    from docscrawl.config import auto_workers
    from docscrawl.spiders.pooled import pool_size

    settings = Settings({} if setting is None else {"DOCSCRAWL_EXTRACT_WORKERS": setting})
    config = build_config({"site": "https://d.example/"})
    if expected == "auto":
        expected = auto_workers()
    if isinstance(expected, int):
        assert pool_size(config, settings) == expected
        assert pool_size(build_config({"site": "https://d.example/", "workers": "1"}),
                         settings) == 1  # the argument wins
        return
    with pytest.raises(ConfigError) as raised:
        pool_size(config, settings)
    assert str(raised.value) == expected
