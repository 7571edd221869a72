"""Closed sets of values users type (a strategy, a trigger, a link mode, a clean policy): each is a `Spelled`
enum, spelt one way in our output (lower case, hyphens) and read in any case, with underscores, and in Hudi's own
spelling (class names, config enum names) through the enum's own `aliases`. The CLI, the service configuration and
the web API all read values through `parse`, so every front end takes the same spellings.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from enum import StrEnum
from typing import Self

from hudi_meta.errors import BadValueError


def fold(text: str) -> str:
    """The spelling values are compared in: no outer blanks, lower case, hyphens for underscores."""
    return text.strip().lower().replace("_", "-")


def closest(text: str, names: Iterable[str]) -> str | None:
    """The name in `names` a misspelt `text` most likely meant: one that differs only in case, else the closest
    by `difflib` (at least 60% alike), else None. For "did you mean ...?" hints."""
    choices = list(names)
    same = [n for n in choices if n.casefold() == text.casefold()]
    if same:
        return same[0]
    found = difflib.get_close_matches(text, choices, n=1)
    return found[0] if found else None


class Spelled(StrEnum):
    """A closed set read from what users type (see the module doc)."""

    @property
    def spelling(self) -> str:
        """How we write the value (in help, errors and output)."""
        return fold(self.value)

    @classmethod
    def spellings(cls) -> list[str]:
        return [m.spelling for m in cls]

    @classmethod
    def aliases(cls) -> dict[str, str]:
        """Other spellings (Hudi's) -> member value; folded before they are compared."""
        return {}

    @classmethod
    def parse(cls, text: str, what: str | None = None) -> Self:
        """The member `text` names; a `BadValueError` naming `what` and the choices otherwise."""
        folded = fold(text)
        for member in cls:
            if member.spelling == folded:
                return member
        aliases = {fold(k): v for k, v in cls.aliases().items()}
        if folded in aliases:
            return cls(aliases[folded])
        label = f"{what}: " if what else ""
        raise BadValueError(f"{label}expected one of {', '.join(cls.spellings())}, got {text!r}")
