"""The data that ships with the package: the bike-share knowledge base and recorded Valen answers.

The project keeps them in its top-level `knowledge_base/` and `caches/` folders; the build maps
those folders into this package (`[tool.setuptools.package-dir]` in pyproject.toml), so a wheel
carries them here and `importlib.resources` finds them. A source checkout (an editable install)
has no copy here and reads the top-level folders themselves.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

_SOURCE_ROOT = Path(__file__).resolve().parents[2]


def shipped(name: str) -> Path:
    """The shipped folder `name` (`knowledge_base` or `caches`). Never written to: the user's
    knowledge base is a copy in their data directory."""
    # An installed wheel is unpacked on disk, so its resources are real paths.
    packaged = Path(str(resources.files(__name__))) / name
    if packaged.is_dir():
        return packaged
    return _SOURCE_ROOT / name
