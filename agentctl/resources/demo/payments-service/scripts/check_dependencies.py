"""Resolve requirements.txt against the internal package mirror (as CI does before the tests).

In the demo the mirror is unreachable, as it is on a bad day: the download times out, which is
an infrastructure failure, not a failure of the change under test.
"""

import sys

print("Collecting requests==2.32.3 (from -r requirements.txt)")
print("ERROR: Could not fetch requests==2.32.3 from https://pypi.mirror.internal/simple: "
      "repository timeout after 60s", file=sys.stderr)
sys.exit(1)
