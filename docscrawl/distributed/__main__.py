"""`python -m docscrawl.distributed`: see `docscrawl.distributed.cli`."""

import sys

from docscrawl.distributed.cli import main

sys.exit(main())
