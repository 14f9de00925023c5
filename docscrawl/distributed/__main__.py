"""`python -m docscrawl.distributed`: see `docscrawl.distributed.status`."""

import sys

from docscrawl.distributed.status import main

sys.exit(main())
