"""Inspection of crawl outputs: pure functions over the files of an output directory.

`output` opens and streams an output directory; `log`, `why`, `check`, `report` and
`merge` are the `docscrawl` subcommands of the same names (`docscrawl.cli` is the glue).
"""

from docscrawl.inspect.output import OutputDir, OutputError, Progress

__all__ = ["OutputDir", "OutputError", "Progress"]
