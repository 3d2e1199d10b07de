"""`python -E -s -S .../agentctl/hooks/launch.py AGENT ...`: the hook as the adapters start it.

Python compiles the script it is given on every start, but loads an imported module from its
cached bytecode: this script only imports `hook` (its own folder is the path's first entry, the
workspace never is) and runs it, which spares each start compiling hook.py (~1.5 ms idle, ~15
ms on a loaded machine), twice per tool call. Never imported: it exits.
"""

import sys

from hook import main  # type: ignore[import-not-found]

sys.exit(main())
