"""Whether a text names a player: its id, its name or its e-mail address, however spelled.

Text is compared in one form, the text searched and what it is searched for alike: invisible
format characters removed, NFKC, case-folded (as an address's local part is stored, see
dynamo/emails.py), and runs of white space made one space: ``GDPRNamed4W``, ``gdprnamed4w``
and the same in fullwidth letters are one id. Each is found only as a whole:

- the id, and an address's local part, where no character an id may hold (a letter, a digit,
  ``_``, ``-``, or a ``.`` within it) goes on either side: ``erin-4f2c`` is in ``(player
  erin-4f2c).``, not in ``erin-4f2c-2``;
- the name, as a whole word (a name of several words, as that phrase): a player named ``Al``
  is named by ``Al's account``, not by ``also``; a player named ``the`` is named by any
  ``the``;
- the e-mail address, where an address in the text has the player's as its normalised form
  (any case, a Unicode or an ASCII domain, a trailing dot).

A thorough search, of the text an operator gives for erasing the player and of the records of
actions on the player, looks for all of them, an address's local part alone included. A search
of the records of actions on other players looks for the id and the whole address only: a
display name or a local part is not unique (``Anna``, ``info``), and the same word in a record
about someone else is not taken to name this player.
"""

from __future__ import annotations

import re
import unicodedata
from enum import StrEnum

from dynamo.emails import folded, normalize_email
from dynamo.errors import LeaderboardError
from dynamo.players import PlayerItem

__all__ = ["Mention", "Mentions"]

_ID_BEFORE = r"(?<![\w.-])"
_ID_AFTER = r"(?![\w-])(?!\.[\w-])"
"""A full stop after an id ends a sentence unless an id character follows it."""
_WORD_BEFORE = r"(?<!\w)"
_WORD_AFTER = r"(?!\w)"
_SPACES = re.compile(r"\s+")
_DELIMITERS = "\\s@<>()\\[\\]{},;:\"'"
_ADDRESS = re.compile(f"[^{_DELIMITERS}]+@[^{_DELIMITERS}!?]+")
"""An address in running text: what surrounds it (brackets, quotes, punctuation) left out."""


class Mention(StrEnum):
    """What a text holds of the player."""

    ID = "id"
    NAME = "name"
    EMAIL = "e-mail address"


class Mentions:
    """The searches for one player, made once for all the texts searched."""

    def __init__(self, player: PlayerItem) -> None:
        self._address = _stored_address(player.email)
        self._id = _whole(_spaced(folded(player.player_id)), _ID_BEFORE, _ID_AFTER)
        local = self._address.rpartition("@")[0]
        self._local = _whole(local, _ID_BEFORE, _ID_AFTER)
        self._name = _whole(_spaced(folded(player.name)), _WORD_BEFORE, _WORD_AFTER)

    def of(self, text: str, *, thorough: bool = True) -> Mention | None:
        """What of the player ``text`` holds (see the module's description); None for
        nothing."""
        plain = _spaced(folded(text))
        if _found(self._id, plain):
            return Mention.ID
        if self._address in _addresses(text):
            return Mention.EMAIL
        if not thorough:
            return None
        if _found(self._local, plain):
            return Mention.EMAIL
        if _found(self._name, plain):
            return Mention.NAME
        return None


def _stored_address(email: str) -> str:
    """The player's address in its normalised form (one stored before normalisation is in its
    legacy form; the few such that are not valid addresses now are compared folded)."""
    try:
        return normalize_email(email)
    except LeaderboardError:
        return folded(email)


def _addresses(text: str) -> set[str]:
    """The normalised form of every address in ``text``."""
    visible = "".join(c for c in text if unicodedata.category(c) != "Cf")
    found = set()
    for candidate in _ADDRESS.findall(unicodedata.normalize("NFKC", visible)):
        try:
            found.add(normalize_email(candidate.rstrip(".")))
        except LeaderboardError:
            continue
    return found


def _spaced(text: str) -> str:
    return _SPACES.sub(" ", text).strip()


def _whole(needle: str, before: str, after: str) -> re.Pattern[str] | None:
    return re.compile(before + re.escape(needle) + after) if needle else None


def _found(pattern: re.Pattern[str] | None, text: str) -> bool:
    return pattern is not None and pattern.search(text) is not None
