"""Service settings, read from the environment the way the AWS SDKs read theirs."""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Settings", "default_cache_dir"]


def default_cache_dir() -> Path:
    """Where pinned downloads are kept: LEADERBOARD_CACHE_DIR, else the user's cache folder."""
    configured = os.environ.get("LEADERBOARD_CACHE_DIR")
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "leaderboard-service"


@dataclass(frozen=True)
class Settings:
    endpoint_url: str | None
    """A DynamoDB-compatible endpoint; None means the embedded DynamoDB Local."""
    region: str
    table: str
    cursor_secret: bytes
    redis_url: str | None = None
    """The rank index's Redis (LEADERBOARD_REDIS_URL); None answers ranks from the table."""
    api_keys: tuple[str, ...] = ()
    """Keys that may write and read private data (Authorization: Bearer <key>)."""
    request_deadline: float = 10.0
    """Seconds a request may take before it is answered 503 BACKEND_UNAVAILABLE."""
    max_body_bytes: int = 1 << 20
    """Request bodies larger than this are refused with 413."""

    @classmethod
    def from_env(cls, *, endpoint_url: str | None = None, table: str | None = None) -> Settings:
        env = os.environ
        secret = env.get("LEADERBOARD_CURSOR_SECRET")
        return cls(
            endpoint_url=endpoint_url or env.get("AWS_ENDPOINT_URL_DYNAMODB") or None,
            region=env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or "us-east-1",
            table=table or env.get("LEADERBOARD_TABLE") or "leaderboard",
            # Without a configured secret, cursors are valid for the life of the process only.
            cursor_secret=secret.encode() if secret else secrets.token_bytes(32),
            redis_url=env.get("LEADERBOARD_REDIS_URL") or None,
            api_keys=tuple(
                k.strip() for k in env.get("LEADERBOARD_API_KEYS", "").split(",") if k.strip()
            ),
        )
