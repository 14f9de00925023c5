"""DNS rebinding against a real crawl, in a private network and mount namespace.

`run_rebinding(out)` runs this file under `unshare -n -m` (root only; None when the
namespaces cannot be made). Inside, the loopback interface also gets a public address
(11.0.0.1, reachable only inside the namespace), a DNS server on 127.0.0.1:53 answers
for `*.test` (a private /etc/resolv.conf is bind-mounted; the machine's is untouched),
and the fault server listens twice on one port: the public site on 11.0.0.1, the
"intranet" on 127.0.0.1. `docs.test` is 11.0.0.1; `rebind.test` and `rebind2.test`
answer 11.0.0.1 to their first lookup and 127.0.0.1 to every later one, the window
between a URL's admission and its connection. The crawl of `http://docs.test:PORT/docs/
rebind` runs as a user runs it; OUT/rebinding.json says which requests reached the
intranet server and what the DNS server answered. No traffic leaves the namespace.
"""

from __future__ import annotations

import json
import shutil
import socket
import struct
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
PUBLIC_IP = "11.0.0.1"
STABLE = {"docs.test": PUBLIC_IP}
REBINDING = ("rebind.test", "rebind2.test", "rebind3.test", "rebind4.test", "rebind5.test")
LATE = {"rebind5.test": 2}  # public for this many lookups (admission, Scrapy's fetch)


def run_rebinding(out: Path, *, timeout: float = 240,
                  browser: bool = False) -> dict[str, Any] | None:
    """Run the scenario; its report, or None when namespaces are not available.
    `browser`: crawl `/docs/rebind-js` rendered instead, whose script fetches a page of
    `rebind3.test`, whose iframe shows one of `rebind4.test`, and which links to a page of
    `rebind5.test`, whose answer turns private only when the browser renders it."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return None
    probe = subprocess.run([unshare, "-n", "-m", "true"], capture_output=True)
    if probe.returncode != 0:
        return None
    command = [unshare, "-n", "-m", sys.executable, __file__, str(out)]
    result = subprocess.run(command + (["browser"] if browser else []),
                            cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    report = out / "rebinding.json"
    if not report.exists():
        raise RuntimeError(f"rebinding scenario failed: {result.stderr[-3000:]}")
    return json.loads(report.read_text(encoding="utf-8"))


class DnsServer(threading.Thread):
    """A tiny authoritative A-record server for the `*.test` names above."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 53))
        self.answers: list[tuple[str, str | None]] = []
        self._asked: dict[str, int] = {}

    def address(self, name: str) -> str | None:
        if name in STABLE:
            return STABLE[name]
        if name in REBINDING:
            self._asked[name] = self._asked.get(name, 0) + 1
            return PUBLIC_IP if self._asked[name] <= LATE.get(name, 1) else "127.0.0.1"
        return None

    def run(self) -> None:
        while True:
            query, client = self.sock.recvfrom(512)
            self.sock.sendto(self.reply(query), client)

    def reply(self, query: bytes) -> bytes:
        labels, at = [], 12
        while query[at]:
            labels.append(query[at + 1: at + 1 + query[at]].decode("ascii").lower())
            at += 1 + query[at]
        qtype = struct.unpack("!H", query[at + 1: at + 3])[0]
        question = query[12: at + 5]
        name = ".".join(labels)
        known = name in STABLE or name in REBINDING
        address = self.address(name) if qtype == 1 else None  # A only; AAAA: none
        if qtype == 1:
            self.answers.append((name, address))
        flags = 0x8180 if known else 0x8183  # NXDOMAIN for other names
        header = query[:2] + struct.pack("!HHHHH", flags, 1, 1 if address else 0, 0, 0)
        answer = b""
        if address:
            answer = struct.pack("!HHHIH", 0xC00C, 1, 1, 0, 4) + socket.inet_aton(address)
        return header + question + answer


def main(out: Path, browser: bool = False) -> None:
    """Inside the namespaces: set up, crawl, report."""
    sys.path.insert(0, str(ROOT))
    from tests.support.faultserver import RunningFaultServer

    out.mkdir(parents=True, exist_ok=True)
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    subprocess.run(["ip", "addr", "add", f"{PUBLIC_IP}/32", "dev", "lo"], check=True)
    resolv = out / "resolv.conf"
    resolv.write_text("nameserver 127.0.0.1\noptions attempts:1 timeout:1\n")
    subprocess.run(["mount", "--bind", str(resolv), "/etc/resolv.conf"], check=True)
    dns = DnsServer()
    dns.start()
    with RunningFaultServer(host=PUBLIC_IP) as public:
        port = public.server_address[1]
        with RunningFaultServer(port, host="127.0.0.1") as private:
            page, render = ("rebind-js", "always") if browser else ("rebind", "auto")
            crawl = subprocess.run(
                [sys.executable, "-m", "scrapy", "crawl", "docs", "-a", f"render={render}",
                 "-a", f"site=http://docs.test:{port}/docs/{page}", "-a", f"out={out / 'crawl'}",
                 "-a", rf"allow=^http://(docs|rebind|rebind2|rebind3|rebind4|rebind5)\.test:{port}/docs/",
                 "-s", "DOWNLOAD_TIMEOUT=5", "-s", "DOCSCRAWL_RETRY_BACKOFF=0.1",
                 "-s", "LOG_LEVEL=INFO"],
                cwd=ROOT, capture_output=True, text=True, timeout=200)
            report = {
                "port": port, "exit": crawl.returncode, "stderr": crawl.stderr[-4000:],
                "public_requests": [(p, h.get("Host")) for p, h, _ in public.requests],
                "private_requests": [(p, h.get("Host")) for p, h, _ in private.requests],
                "dns_answers": dns.answers,
            }
    (out / "rebinding.json").write_text(json.dumps(report, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]), browser=sys.argv[2:] == ["browser"])
