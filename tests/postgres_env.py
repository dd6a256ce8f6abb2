"""Where the tests find PostgreSQL, read once when the tests are imported.

`HELPDESK_TEST_POSTGRES` names the server (default: the project machines' trust-authenticated
one); `HELPDESK_REQUIRE_POSTGRES=1` (CI) turns "unreachable" from a skip into a failure. Both are
read here and then kept out of every test's environment (`isolated_environment`): `helpdesk`
warns about a `HELPDESK_*` variable that names no setting, and the processes tests start would
print that warning where the tests read their output.
"""

from __future__ import annotations

import os

NAMES = ("HELPDESK_TEST_POSTGRES", "HELPDESK_REQUIRE_POSTGRES")
DEFAULT_ADMIN_URL = "postgresql://postgres@127.0.0.1:5432/test"
ADMIN_URL = os.environ.get("HELPDESK_TEST_POSTGRES") or DEFAULT_ADMIN_URL
REQUIRED = os.environ.get("HELPDESK_REQUIRE_POSTGRES") == "1"
