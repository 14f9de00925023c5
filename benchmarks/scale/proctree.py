"""A crawler and the processes it starts (extraction workers, their fork server), sampled
from /proc: the CPU of its descendants and the peak of the tree's summed PSS.

`os.wait4` gives the crawler's CPU, with that of the children it reaped (extraction
workers, `-a workers=N`, are reaped when the crawl closes), and the largest single peak
RSS of them. The workers' CPU is also read here while they live (`descendants_cpu_s`: the
last sample of each process counts), as a check and for a crawl killed before it reaped
them. Summing RSS
would count the pages the workers share with the fork server more than once; PSS
(`/proc/PID/smaps_rollup`) splits each shared page between the processes that map it, so
its sum is the tree's honest memory.
"""

from __future__ import annotations

import os
from pathlib import Path

TICKS = os.sysconf("SC_CLK_TCK")


def descendants(pid: int) -> list[int]:
    """Every live descendant of `pid` (children of its threads, recursively)."""
    found: list[int] = []
    todo = [pid]
    while todo:
        parent = todo.pop()
        try:
            tasks = list(Path(f"/proc/{parent}/task").iterdir())
        except OSError:
            continue
        for task in tasks:
            try:
                children = (task / "children").read_text().split()
            except OSError:
                continue
            for child in map(int, children):
                found.append(child)
                todo.append(child)
    return found


def cpu_s(pid: int) -> float | None:
    """utime + stime of the process itself (not its children), None once it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # fields 14 and 15 of stat(5)


def pss_mb(pid: int) -> float:
    """The process's proportional set size (0 once it is gone)."""
    try:
        with open(f"/proc/{pid}/smaps_rollup", encoding="ascii") as rollup:
            for line in rollup:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return 0.0
    return 0.0


class TreeSampler:
    """Samples of one crawler's process tree: call `sample()` now and then."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.cpu: dict[int, float] = {}  # descendant pid -> its CPU at the last sample
        self.peak_pss_mb = 0.0
        self.peak_crawler_pss_mb = 0.0
        self.most_processes = 1

    def sample(self) -> None:
        others = descendants(self.pid)
        crawler = pss_mb(self.pid)
        total = crawler + sum(pss_mb(pid) for pid in others)
        self.peak_crawler_pss_mb = max(self.peak_crawler_pss_mb, crawler)
        self.peak_pss_mb = max(self.peak_pss_mb, total)
        self.most_processes = max(self.most_processes, 1 + len(others))
        for pid in others:
            spent = cpu_s(pid)
            if spent is not None:
                self.cpu[pid] = spent

    @property
    def descendants_cpu_s(self) -> float:
        return sum(self.cpu.values())

    def as_json(self) -> dict[str, float]:
        return {"descendants_cpu_s": round(self.descendants_cpu_s, 2),
                "peak_tree_pss_mb": round(self.peak_pss_mb, 1),
                "peak_crawler_pss_mb": round(self.peak_crawler_pss_mb, 1),
                "processes": self.most_processes}
