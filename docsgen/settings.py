"""The settings' reference page: every environment variable the service reads
(``leaderboard.config.VARIABLES``) and every limit (``leaderboard.config.Limits``), each with
its default and its meaning, as the code states them."""

from __future__ import annotations

from dataclasses import fields

from docsgen.environment import unset_service_variables
from docsgen.markdown import code, escape, heading, page, table
from docsgen.source import attribute_docs
from leaderboard.config import VARIABLES, Limits, Settings, Variable

__all__ = ["NOT_FROM_ENVIRONMENT", "limit_variable", "render_settings"]

NOT_FROM_ENVIRONMENT = frozenset(("limits", "peers_dir"))
"""Fields of Settings that no variable of VARIABLES sets: the limits have one variable each,
and the workers' meeting place is set by their master."""


def limit_variable(name: str) -> str:
    """The variable that sets the limit ``name`` (a field of Limits)."""
    return f"LEADERBOARD_LIMIT_{name.upper()}"


def render_settings() -> str:
    with unset_service_variables():
        defaults = Settings.from_env()
    docs = attribute_docs(Settings)
    set_by_variables = {v.setting for v in VARIABLES if v.setting is not None}
    missing = {f.name for f in fields(Settings)} - set_by_variables - NOT_FROM_ENVIRONMENT
    if missing:
        raise ValueError(f"Settings fields no variable of VARIABLES sets: {sorted(missing)}")
    rows = [(_named(v.name), _default(v, defaults), escape(_meaning(v, docs))) for v in VARIABLES]
    limits = Limits()
    limit_docs = attribute_docs(Limits)
    limit_rows = []
    for spec in fields(Limits):
        if spec.name not in limit_docs:
            raise ValueError(f"Limits.{spec.name} has no docstring")
        limit_rows.append(
            (
                _named(limit_variable(spec.name)),
                code(getattr(limits, spec.name)),
                escape(limit_docs[spec.name]),
            )
        )
    body = [
        heading(2, "Environment variables", "environment-variables"),
        "",
        *table(("variable", "default", "meaning"), rows),
        "",
        heading(2, "Limits", "limits"),
        "",
        "What one caller can make one process spend. Each is a variable of its own, "
        "`LEADERBOARD_LIMIT_` and the limit's name; a value must be a number of the default's "
        "kind (a whole number where the default is one). The limits of a document itself "
        "(tokens, depth, aliases, cost) are no setting: see [Limits](limits.md).",
        "",
        *table(("variable", "default", "meaning"), limit_rows),
    ]
    return page(
        "Settings",
        [
            "The service reads its settings from the environment, the way the AWS SDKs read "
            "theirs; the command line's options, where a command has one, take precedence "
            "(see [Command line](cli.md)). Credentials and anything else the AWS SDK reads "
            "for itself (`AWS_ACCESS_KEY_ID`, `AWS_PROFILE`, ...) work as for any AWS SDK. "
            "A default is what applies while the variable is unset or empty.",
        ],
        body,
    )


def _meaning(variable: Variable, docs: dict[str, str]) -> str:
    if variable.setting is None:
        return variable.meaning
    if variable.setting not in docs:
        raise ValueError(f"Settings.{variable.setting} has no docstring")
    return docs[variable.setting]


def _default(variable: Variable, defaults: Settings) -> str:
    if variable.default is not None:
        return escape(variable.default)
    if variable.setting is None:
        return "unset"
    value = getattr(defaults, variable.setting)
    if value is None:
        return "unset"
    if value == ():
        return "none"
    return code(value)


def _named(variable: str) -> str:
    """A variable's name with an anchor of its own (``#leaderboard_table``)."""
    return f'<span id="{variable.lower()}"></span>{code(variable)}'
