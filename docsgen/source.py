"""The docstrings the code gives its attributes and constants (a string literal right after an
assignment, as Sphinx and mkdocstrings read them): Python keeps none of them at run time, so
they are read from the source."""

from __future__ import annotations

import ast
import inspect
import itertools
import re
import textwrap

__all__ = ["attribute_docs"]

_ROLE = re.compile(r":(?:data|class|func|meth|attr|mod|obj):(?=`)")
"""A Sphinx role before a reference (``:data:`MAX_TOKENS```): the reference alone is kept."""


def attribute_docs(owner: type | object) -> dict[str, str]:
    """The docstring of each attribute of a class, or of each constant of a module, that has
    one, by name: the string literal that follows its assignment."""
    source = textwrap.dedent(inspect.getsource(owner))  # type: ignore[arg-type]
    tree = ast.parse(source)
    body = tree.body
    if isinstance(owner, type):
        [definition] = [n for n in body if isinstance(n, ast.ClassDef)][:1]
        body = definition.body
    docs: dict[str, str] = {}
    for statement, following in itertools.pairwise(body):
        name = _assigned(statement)
        if name is None:
            continue
        if (
            isinstance(following, ast.Expr)
            and isinstance(following.value, ast.Constant)
            and isinstance(following.value.value, str)
        ):
            docs[name] = _ROLE.sub("", inspect.cleandoc(following.value.value))
    return docs


def _assigned(statement: ast.stmt) -> str | None:
    """The one name a statement assigns, if it assigns one."""
    if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
        return statement.target.id
    if (
        isinstance(statement, ast.Assign)
        and len(statement.targets) == 1
        and isinstance(statement.targets[0], ast.Name)
    ):
        return statement.targets[0].id
    return None
