"""The command line's reference page, from its argparse parser (``leaderboard.cli``): every
subcommand with its usage, and each of its arguments with its default and help."""

from __future__ import annotations

import argparse

from docsgen.environment import unset_service_variables
from docsgen.markdown import code, escape, heading, page, table
from leaderboard.cli import build_parser

__all__ = ["render_cli"]

WIDTH = 100
"""Columns of the usage lines, whatever the terminal of the process that renders them."""


def render_cli() -> str:
    with unset_service_variables():
        parser = build_parser()
    [commands] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    helps = {a.dest: a.help or "" for a in commands._choices_actions}
    for each in (parser, *commands.choices.values()):
        each.formatter_class = _formatter
    body = [
        "```",
        parser.format_usage().strip(),
        "```",
        "",
        *table(
            ("command", "what it does"),
            [
                (f"[{code(name)}](#{name})", escape(_sentence(helps[name])))
                for name in commands.choices
            ],
        ),
        "",
    ]
    for name, command in commands.choices.items():
        body += [heading(2, code(f"leaderboard {name}"), name), ""]
        body += [escape(_sentence(helps[name])), ""]
        body += ["```", command.format_usage().strip(), "```", ""]
        rows = [_row(action) for action in command._actions if action.help != argparse.SUPPRESS]
        body += [*table(("argument", "default", "meaning"), rows), ""]
    return page(
        "Command line",
        [
            escape(_sentence(parser.description or "")),
            "The `leaderboard` command is installed with the service (`make install` puts it in "
            "`.venv/bin/`; `make serve` runs `leaderboard serve`). The defaults shown are those "
            "of an environment that sets none of the service's variables; an option's default "
            "from a variable is that variable's value where it is set (see "
            "[Settings](settings.md)).",
        ],
        body,
    )


def _formatter(prog: str) -> argparse.HelpFormatter:
    return argparse.HelpFormatter(prog, width=WIDTH)


def _row(action: argparse.Action) -> tuple[str, str, str]:
    if action.option_strings:
        shown = ", ".join(action.option_strings)
        if action.nargs != 0:
            shown += f" {action.metavar or action.dest.upper()}"
    elif action.choices is not None:
        shown = "|".join(str(c) for c in action.choices)
    else:
        shown = action.metavar if isinstance(action.metavar, str) else action.dest
    default = action.default
    if action.nargs == 0 or action.dest == "help":
        shown_default = "—"
    elif action.required or not action.option_strings:
        shown_default = "required"
    elif default is None:
        shown_default = "unset"
    else:
        shown_default = code(default)
    return code(shown), shown_default, escape(_sentence(action.help or ""))


def _sentence(text: str) -> str:
    """Help text, which argparse writes in lower case without a stop, as a sentence."""
    text = text.strip()
    if not text:
        return text
    return text[0].upper() + text[1:] + ("" if text.endswith(".") else ".")
