"""E-mail addresses as keys: one form for every spelling a person reads as the same address.

An address is normalised before it is stored or looked up:

1. invisible format characters (Unicode category Cf: zero-width space, joiners, word joiner,
   byte-order mark, soft hyphen, bidirectional marks...) are removed;
2. the whole address is put in Unicode NFKC form (fullwidth letters and at sign become
   ASCII ones, a decomposed accent is composed);
3. the local part is case-folded;
4. the domain loses its trailing dot and is put in IDNA form (IDNA 2008 with the UTS #46
   mapping, which also lower-cases it): ``Bücher.example`` is ``xn--bcher-kva.example``.

Addresses stored before this normalisation were only trimmed and lower-cased. Their
:func:`legacy_email` form is what such an address was stored under, so that lookups and new
accounts can find those rows too.
"""

from __future__ import annotations

import re
import unicodedata

import idna

from dynamo.errors import ErrorCode, LeaderboardError, Subject

__all__ = ["MAX_EMAIL", "folded", "legacy_email", "normalize_email"]

MAX_EMAIL = 254
"""Longest e-mail address, in characters once its domain is in ASCII (RFC 5321's path)."""
# Pragmatic address check: one @, no whitespace or control characters, a dot in the domain.
_EMAIL = re.compile(r"[^@\s\x00-\x1f\x7f]{1,64}@[^@\s\x00-\x1f\x7f]+\.[^@\s\x00-\x1f\x7f]+")


def normalize_email(value: str) -> str:
    """The address's one stored form; INVALID_EMAIL for anything that is not an address."""
    if not _is_utf8(value):
        raise _invalid()
    visible = "".join(c for c in value if unicodedata.category(c) != "Cf")
    text = unicodedata.normalize("NFKC", visible).strip()
    local, at, domain = text.rpartition("@")
    if not at or not local:
        raise _invalid()
    local = _fold(local)
    try:
        mapped = idna.uts46_remap(domain, std3_rules=True, transitional=False)
        ascii_domain = idna.encode(mapped.removesuffix("."), uts46=False).decode("ascii")
    except (idna.IDNAError, UnicodeError, ValueError):
        raise _invalid() from None
    email = f"{local}@{ascii_domain}"
    if len(email) > MAX_EMAIL or not _EMAIL.fullmatch(email):
        raise _invalid()
    return email


def folded(text: str) -> str:
    """Any text as an address's local part is normalised (steps 1 to 3): invisible format
    characters removed, NFKC, case-folded. Two spellings a person reads as the same text have
    one folded form, which is how text is searched for a player's id, name or address."""
    visible = "".join(c for c in text if unicodedata.category(c) != "Cf")
    return _fold(unicodedata.normalize("NFKC", visible))


def _fold(local: str) -> str:
    """Case-fold and re-compose until stable, so that a stored form is its own normal form
    (folding can undo NFKC for a few characters, and NFKC can yield foldable ones)."""
    for _ in range(4):
        folded = unicodedata.normalize("NFKC", local.casefold())
        if folded == local:
            break
        local = folded
    return local


def legacy_email(value: str) -> str | None:
    """The form an address was stored under before normalisation (trimmed, lower-cased), or
    None when that form was not a valid address then."""
    email = value.strip().lower()
    if len(email) > MAX_EMAIL or not _EMAIL.fullmatch(email) or not _is_utf8(email):
        return None
    return email


def _invalid() -> LeaderboardError:
    return LeaderboardError(ErrorCode.INVALID_EMAIL, "email is not a valid address", Subject.EMAIL)


def _is_utf8(text: str) -> bool:
    """False for strings holding lone surrogates, which no key may contain."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
