"""A help-desk chatbot: answers from the passage Valen judges able to answer, or hands off."""

import os
import sys

__version__ = "0.1.0"

# OpenBLAS, which numpy loads, starts a thread per core at import, and they spin while idle:
# ~15% of `helpdesk ask`'s CPU on 2 cores (issue 13), for nothing, as nothing here multiplies
# matrices. One thread unless the environment says otherwise; it is read when numpy loads.
if "numpy" not in sys.modules:
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

# httpx imports its own command-line client (click, rich.progress, rich.syntax, pygments: about
# 0.1 s, half of importing httpx) whenever those happen to be installed, as Textual installs
# them; we never run it. A None entry makes that import fail, and httpx then defines a stub.
if "httpx" not in sys.modules:
    sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]
