"""Names a package exports but imports only when first used (PEP 562 module ``__getattr__``), so
importing the package stays cheap for a process that needs a few of them."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any

__all__ = ["lazy_attributes"]


def lazy_attributes(package: str, homes: Mapping[str, str], namespace: dict[str, Any]
                    ) -> Callable[[str], object]:
    """The ``__getattr__`` of ``package``: a name of ``homes`` (name -> the full name of the module
    that defines it) is imported on first use and kept in ``namespace`` (the package's
    ``globals()``), so later lookups do not come here; any other name is an AttributeError."""
    def __getattr__(name: str) -> object:
        module = homes.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(module), name)
        namespace[name] = value
        return value

    return __getattr__
