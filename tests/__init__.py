"""The help desk's tests. Their helper modules (tests/**/helpers.py and the like) get pytest's
detailed assertion messages too, as test modules do: registered here, before any is imported
(each module and subpackage by name: this package itself is being imported as it registers)."""

import pkgutil

import pytest

pytest.register_assert_rewrite(
    *(f"{__name__}.{module.name}" for module in pkgutil.iter_modules(__path__))
)
