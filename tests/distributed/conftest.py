"""A real redis-server on a free 127.0.0.1 port for the session, and one crawl key per test."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from redis import Redis
from redis.exceptions import ConnectionError as RedisConnectionError

from docscrawl.distributed import SharedFrontier

REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"
# Leases in tests are long; tests make time pass with `tests.distributed.clock.age`, so no
# step of a loaded machine can outlast one by accident.
LEASE = 30.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class RedisServer:
    """One redis-server process without persistence; stopped by its PID. With `password`
    it requires it (`--requirepass`, the default user); with `tls` (a directory holding
    `cert.pem`, `key.pem`) it speaks TLS only, and `url` names the certificate as the CA."""

    def __init__(self, workdir: Path, *, password: str | None = None,
                 tls: Path | None = None) -> None:
        self.port = free_port()
        self.password = password
        auth = f":{password}@" if password else ""
        listen = ["--port", str(self.port)]
        query = ""
        if tls is not None:
            cert = tls / "cert.pem"
            listen = ["--port", "0", "--tls-port", str(self.port), "--tls-cert-file", str(cert),
                      "--tls-key-file", str(tls / "key.pem"), "--tls-ca-cert-file", str(cert),
                      "--tls-auth-clients", "no"]
            query = f"?ssl_ca_certs={cert}"
        scheme = "rediss" if tls is not None else "redis"
        self.url = f"{scheme}://{auth}127.0.0.1:{self.port}/0{query}"
        self.log_path = workdir / "redis.log"
        self.log = self.log_path.open("w")
        self.process = subprocess.Popen(
            [REDIS_SERVER, "--bind", "127.0.0.1", *listen, "--save", "",
             "--appendonly", "no", "--dir", str(workdir), "--daemonize", "no",
             *(["--requirepass", password] if password else [])],
            stdout=self.log, stderr=subprocess.STDOUT,
        )

    def wait_ready(self, timeout: float = 15) -> None:
        client = Redis.from_url(self.url)
        deadline = time.monotonic() + timeout
        try:
            while time.monotonic() < deadline:
                if self.process.poll() is not None:
                    raise RuntimeError(f"redis-server exited with {self.process.returncode}")
                try:
                    if client.ping():
                        return
                except (OSError, RedisConnectionError):
                    pass
                time.sleep(0.05)
        finally:
            client.close()
        raise RuntimeError("redis-server did not answer PING in time")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.log.close()


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    if not Path(REDIS_SERVER).exists():
        pytest.skip("redis-server is not installed (make system-deps)")
    server = RedisServer(tmp_path_factory.mktemp("redis"))
    try:
        server.wait_ready()
        yield server
    finally:
        server.stop()


@pytest.fixture
def crawl_key() -> str:
    return f"test-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def shared(redis_server: RedisServer, crawl_key: str) -> Iterator[SharedFrontier]:
    frontier = SharedFrontier(redis_server.url, crawl_key, lease_seconds=LEASE)
    try:
        yield frontier
    finally:
        frontier.reset()
        frontier.close()
