"""Spider arguments (`-a name=value`) turned into one validated `CrawlConfig`.

Every problem raises `ConfigError` with one line naming the argument, before any request.

The secrets (`http_pass`, `auth_header`) can stay off the command line, where `ps`,
Scrapyd's logs and `listjobs.json` would show them: `-a http_pass_file=PATH` and
`-a auth_header_file=PATH` read them from a file (one trailing newline dropped), and the
environment variables `DOCSCRAWL_HTTP_PASS` and `DOCSCRAWL_AUTH_HEADER` are used when no
argument gives them. No error message ever echoes a secret.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from docscrawl.extract.site_profile import SiteSelectors
from docscrawl.hostlabel import default_host_label

RENDER_MODES = ("auto", "always", "never")
KNOWN_ARGS = (
    "site", "out", "allow", "deny", "render", "max_pages", "max_depth", "config", "state",
    "http_user", "http_pass", "http_pass_file", "auth_header", "auth_header_file", "extract",
    "keep_aggregates", "compress", "workers",
)
COMPRESS_MODES = ("none", "gzip")
SECRET_ARGS = frozenset({"http_pass", "auth_header"})
# Where a secret comes from when no argument gives it.
SECRET_ENV = {"http_pass": "DOCSCRAWL_HTTP_PASS", "auth_header": "DOCSCRAWL_AUTH_HEADER"}
SECRET_FILE_MAX_BYTES = 64 * 1024
REDACTED = "***"


class ConfigError(ValueError):
    """A bad spider argument; the message is one line that names it."""


@dataclass(frozen=True, slots=True)
class CrawlConfig:
    """The validated arguments of one crawl."""

    site: str
    out_dir: Path
    allow: tuple[re.Pattern[str], ...] = ()
    deny: tuple[re.Pattern[str], ...] = ()
    render: str = "auto"
    max_pages: int | None = None
    max_depth: int | None = None
    profile: dict[str, Any] = field(default_factory=dict)
    profile_path: Path | None = None
    state_dir: Path | None = None
    http_user: str | None = None
    http_pass: str | None = field(default=None, repr=False)
    auth_header: tuple[str, str] | None = field(default=None, repr=False)
    http_pass_file: Path | None = None  # where http_pass was read from, if from a file
    auth_header_file: Path | None = None
    extract: bool = True  # False: an inventory crawl (discovery and crawl log only)
    keep_aggregates: bool = False  # True: chunks of aggregate pages stay in chunks.jsonl
    compress: str = "none"  # gzip: the published JSONL files are .jsonl.gz
    # extraction worker processes (`crawl.pool`); 0: in the crawler; "auto": one when two
    # CPUs or more are usable (`auto_workers`); None: the setting's
    workers: int | str | None = None

    @property
    def host_label(self) -> str:
        """`host` or `host_port`: the default output folder name."""
        return default_host_label(self.site)

    def as_arguments(self) -> dict[str, Any]:
        """The arguments as given, JSON-ready, for run.json."""
        return {
            "site": self.site,
            "out": str(self.out_dir),
            "allow": [p.pattern for p in self.allow],
            "deny": [p.pattern for p in self.deny],
            "render": self.render,
            "max_pages": self.max_pages,
            "max_depth": self.max_depth,
            "config": str(self.profile_path) if self.profile_path else None,
            "state": str(self.state_dir) if self.state_dir else None,
            "http_user": self.http_user,
            "http_pass": REDACTED if self.http_pass else None,
            "http_pass_file": str(self.http_pass_file) if self.http_pass_file else None,
            "auth_header": f"{self.auth_header[0]}: {REDACTED}" if self.auth_header else None,
            "auth_header_file": str(self.auth_header_file) if self.auth_header_file else None,
            "extract": "on" if self.extract else "off",
            "keep_aggregates": "on" if self.keep_aggregates else "off",
            "compress": self.compress,
            "workers": self.workers,
        }


def parse_site(value: str | None) -> str:
    """Check that `site` is an absolute http(s) URL with a host; return it stripped."""
    if not value or not value.strip():
        raise ConfigError("argument site: missing; pass -a site=https://docs.example.com/v2/")
    site = value.strip()
    if re.match(r"[A-Za-z][A-Za-z0-9+.-]*://[^/?#]*@", site):  # not echoed: a password
        raise ConfigError("argument site: user:password@ in the URL is not supported; "
                          "use http_user with http_pass_file")
    try:
        parts = urlsplit(site)
        port_ok = parts.port is None or 0 < parts.port < 65536
    except ValueError as exc:
        raise ConfigError(f"argument site: unparsable URL {site!r} ({exc})") from None
    if parts.scheme not in ("http", "https") or not parts.hostname or not port_ok:
        raise ConfigError(f"argument site: not an absolute http(s) URL: {site!r}")
    if not _plausible_host(parts.hostname, ipv6="[" in parts.netloc):
        raise ConfigError(f"argument site: not a host name: {parts.hostname!r} in {site!r}")
    return site


def _plausible_host(host: str, *, ipv6: bool) -> bool:
    """A DNS name or IP address: labels of letters, digits, `-` and `_` between single
    dots (one trailing dot allowed); an IPv6 literal of hex digits and colons. Not `..`,
    `.`, nor a path separator or percent sign (which would name folders)."""
    if ipv6:
        return bool(re.fullmatch(r"[0-9a-f:.]+", host))
    labels = host.removesuffix(".").split(".")
    return all(label and all(c.isalnum() or c in "-_" for c in label) for label in labels)


def parse_patterns(name: str, value: str | None) -> tuple[re.Pattern[str], ...]:
    """Comma-separated Python regexes; a bad one raises naming the argument."""
    if not value:
        return ()
    patterns = []
    for raw in (part.strip() for part in value.split(",")):
        if not raw:
            continue
        try:
            patterns.append(re.compile(raw))
        except re.error as exc:
            raise ConfigError(f"argument {name}: bad regex {raw!r} ({exc})") from None
    return tuple(patterns)


def parse_positive_int(name: str, value: str | int | None, *, minimum: int = 1,
                       source: str = "argument") -> int | None:
    """An integer of at least `minimum` (1: positive), or None when absent; an error names
    the `source` (an `-a` argument, or a setting)."""
    if value is None or value == "":
        return None
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{source} {name}: not an integer: {value!r}") from None
    if number < minimum:
        kind = "a positive integer" if minimum == 1 else f"an integer >= {minimum}"
        raise ConfigError(f"{source} {name}: must be {kind}, got {number}")
    return number


AUTO = "auto"


def parse_workers(value: str | int | None, source: str = "argument") -> int | str | None:
    """Extraction workers: an integer >= 0, `auto`, or None when absent."""
    if isinstance(value, str) and value.strip().lower() == AUTO:
        return AUTO
    name = "workers" if source == "argument" else "DOCSCRAWL_EXTRACT_WORKERS"
    return parse_positive_int(name, value, minimum=0, source=source)


def auto_workers() -> int:
    """`workers=auto`: one extraction worker when this process may run on two CPUs or more
    (the crawler keeps one busy; measured on two cores, docs/performance.md), else none."""
    try:
        usable = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        usable = os.cpu_count() or 1
    return 1 if usable >= 2 else 0


def parse_render(value: str | None) -> str:
    """`auto`, `always` or `never`."""
    mode = (value or "auto").strip().lower()
    if mode not in RENDER_MODES:
        raise ConfigError(f"argument render: must be one of auto|always|never, got {value!r}")
    return mode


def parse_compress(value: str | None) -> str:
    """`none` (plain .jsonl, the default) or `gzip`."""
    mode = (value or "none").strip().lower()
    if mode not in COMPRESS_MODES:
        raise ConfigError(f"argument compress: must be one of none|gzip, got {value!r}")
    return mode


SWITCH_VALUES = {"on": True, "true": True, "yes": True, "1": True,
                 "off": False, "false": False, "no": False, "0": False}


def parse_switch(name: str, value: str | None, *, default: bool) -> bool:
    """`on`/`off` (also true/false, yes/no, 1/0); missing or empty: `default`."""
    if value is None or not str(value).strip():
        return default
    found = SWITCH_VALUES.get(str(value).strip().lower())
    if found is None:
        raise ConfigError(f"argument {name}: must be on or off, got {value!r}")
    return found


def load_profile(value: str | None) -> tuple[dict[str, Any], Path | None]:
    """Read a JSON site profile; unreadable or not a JSON object raises."""
    if not value:
        return {}, None
    path = Path(value)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"argument config: cannot read {value!r} ({exc.strerror})") from None
    except ValueError as exc:
        raise ConfigError(f"argument config: {value!r} is not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise ConfigError(f"argument config: {value!r} must hold a JSON object")
    try:
        SiteSelectors.from_profile(data)
    except ValueError as exc:
        raise ConfigError(f"argument config: {value!r}: {exc}") from None
    return data, path


def parse_auth_header(value: str | None, *,
                      source: str = "argument auth_header") -> tuple[str, str] | None:
    """`Name: value` on one line -> (name, value); the value is never echoed in an error.
    `source` names where the value came from in the error."""
    if not value:
        return None
    name, sep, secret = value.partition(":")
    name = name.strip()
    if (not sep or not name or not secret.strip() or not re.fullmatch(r"[A-Za-z0-9-]+", name)
            or any(char in secret for char in "\r\n\0")):
        raise ConfigError(f"{source}: must look like 'Name: value' on one line")
    return name, secret.strip()


def read_secret_file(name: str, value: str) -> str:
    """The secret in file `value` (argument `name`), one trailing newline dropped. Errors
    name the argument and the file, never the content."""
    try:
        with Path(value).open("rb") as handle:
            data = handle.read(SECRET_FILE_MAX_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"argument {name}: cannot read {value!r} ({exc.strerror})") from None
    if len(data) > SECRET_FILE_MAX_BYTES:
        raise ConfigError(f"argument {name}: {value!r} is larger than "
                          f"{SECRET_FILE_MAX_BYTES // 1024} KiB")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"argument {name}: {value!r} is not UTF-8 text") from None
    text = text.removesuffix("\n").removesuffix("\r")
    if not text:
        raise ConfigError(f"argument {name}: {value!r} is empty")
    return text


def read_secret(args: dict[str, Any], name: str,
                environ: Mapping[str, str]) -> tuple[str | None, Path | None, str]:
    """A secret given as `-a name=...`, `-a name_file=PATH` or in the environment (used
    only when neither argument is given): (value, file, what to name in an error)."""
    value, path = args.get(name) or None, args.get(f"{name}_file") or None
    if value and path:
        raise ConfigError(f"argument {name}_file: give {name} one way only "
                          f"(argument {name} is given too)")
    if path:
        return read_secret_file(f"{name}_file", path), Path(path), f"argument {name}_file"
    if value:
        return value, None, f"argument {name}"
    variable = SECRET_ENV[name]
    return environ.get(variable) or None, None, f"environment variable {variable}"


def build_config(args: dict[str, Any], *, output_root: str | None = None,
                 environ: Mapping[str, str] | None = None) -> CrawlConfig:
    """Validate spider arguments into a CrawlConfig (raises ConfigError). `environ` (default
    `os.environ`) may hold the secrets no argument gives (`SECRET_ENV`)."""
    unknown = sorted(set(args) - set(KNOWN_ARGS) - {"_job"})
    if unknown:
        raise ConfigError(
            f"argument {unknown[0]}: unknown; known arguments are {', '.join(KNOWN_ARGS)}"
        )
    site = parse_site(args.get("site"))
    profile, profile_path = load_profile(args.get("config"))
    allow = parse_patterns("allow", args.get("allow")) + _profile_patterns(profile, "allow")
    deny = parse_patterns("deny", args.get("deny")) + _profile_patterns(profile, "deny")
    if args.get("out"):
        out_dir = Path(args["out"])
    else:
        out_dir = Path(output_root or "output") / default_host_label(site)
    state = args.get("state")
    extract = parse_switch("extract", args.get("extract"), default=True)
    if not extract and state:
        raise ConfigError("argument extract: off keeps no state; leave out argument state")
    environ = os.environ if environ is None else environ
    http_user = args.get("http_user") or None
    http_pass, http_pass_file, pass_source = read_secret(args, "http_pass", environ)
    if http_pass and not http_user:
        if pass_source.startswith("argument"):
            raise ConfigError(f"{pass_source}: needs argument http_user")
        http_pass = None  # the environment's password, for crawls that name a user
    header, auth_header_file, header_source = read_secret(args, "auth_header", environ)
    return CrawlConfig(
        site=site,
        out_dir=out_dir,
        allow=allow,
        deny=deny,
        render=parse_render(args.get("render")),
        max_pages=parse_positive_int("max_pages", args.get("max_pages")),
        max_depth=parse_positive_int("max_depth", args.get("max_depth"), minimum=0),
        profile=profile,
        profile_path=profile_path,
        state_dir=Path(state) if state else None,
        http_user=http_user,
        http_pass=http_pass,
        auth_header=parse_auth_header(header, source=header_source),
        http_pass_file=http_pass_file,
        auth_header_file=auth_header_file,
        extract=extract,
        keep_aggregates=parse_switch("keep_aggregates", args.get("keep_aggregates"),
                                     default=False),
        compress=parse_compress(args.get("compress")),
        workers=parse_workers(args.get("workers")),
    )


def _profile_patterns(profile: dict[str, Any], key: str) -> tuple[re.Pattern[str], ...]:
    scope = profile.get("scope") or {}
    values = scope.get(key) if isinstance(scope, dict) else None
    if not values:
        return ()
    if isinstance(values, str):
        values = [values]
    return parse_patterns(f"config scope.{key}", ",".join(values))
