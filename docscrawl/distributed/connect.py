"""The Redis URL of a distributed crawl: its password kept out of every log, checked at start.

`DOCSCRAWL_REDIS_URL` may carry a password (`redis://:PASSWORD@host:6379/0`, an ACL user
`redis://USER:PASSWORD@host/0`, TLS `rediss://...?ssl_ca_certs=/path/ca.pem`). docscrawl
logs it only through `redact` (`redis://:***@host`), and a worker puts `RedactSecrets` on
the root log handlers (`redact_logs`), so no other log line (a library's error, a future
log call) can show it either. `connection_problem` is the one-line answer to "can this
process use that Redis?" (wrong password, no TLS, unreachable), asked by `scrapy crawl`
before the crawl starts.
"""

from __future__ import annotations

import logging
import re

REDACTED = "***"
# scheme://user:password@ -> scheme://user:***@ ; ?password=... -> ?password=***
_USERINFO = re.compile(r"((?:rediss?|unix)://[^:@/\s]*):[^@/\s]+@", re.IGNORECASE)
_QUERY_PASSWORD = re.compile(r"([?&]password=)[^&#\s]+", re.IGNORECASE)
CHECK_TIMEOUT = 10.0  # seconds for the start-up check to connect and answer


def redact(text: str) -> str:
    """`text` with the password of every Redis URL in it replaced by `***`."""
    if "://" not in text and "password=" not in text.lower():
        return text
    text = _USERINFO.sub(rf"\1:{REDACTED}@", text)
    return _QUERY_PASSWORD.sub(rf"\g<1>{REDACTED}", text)


class RedactSecrets(logging.Filter):
    """A handler filter: the record's message with Redis passwords redacted."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a malformed record: the handler reports it, as without us
            return True
        clean = redact(message)
        if clean != message:
            record.msg, record.args = clean, None
        return True


def redact_logs() -> None:
    """Put `RedactSecrets` on every handler of the root logger (Scrapy's is one), once."""
    for handler in logging.root.handlers:
        if not any(isinstance(f, RedactSecrets) for f in handler.filters):
            handler.addFilter(RedactSecrets())


def connection_problem(redis_url: str, *, timeout: float = CHECK_TIMEOUT) -> str | None:
    """Why this process cannot use the Redis at `redis_url` (one line, password
    redacted), or None when it answers PING."""
    from redis import Redis
    from redis.exceptions import RedisError

    client = None
    try:
        client = Redis.from_url(redis_url, socket_connect_timeout=timeout,
                                socket_timeout=timeout)
        client.ping()
    except (RedisError, OSError, ValueError) as exc:
        detail = " ".join(str(exc).split()) or "no detail"
        return redact(f"cannot use Redis at {redis_url}: {type(exc).__name__}: {detail}")
    finally:
        if client is not None:
            client.close()
    return None
