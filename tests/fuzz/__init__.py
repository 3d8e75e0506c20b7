"""Property-based fuzzing of the whole request surface: every mutation input, query variables,
cursors, page sizes, deep and wide documents, malformed bodies and odd GET requests.

Every example must get a typed answer: no 500, no traceback or Python exception name in the
body, an ``extensions.code`` on every GraphQL error (never INTERNAL_SERVER_ERROR), and a short
4xx for anything that is not GraphQL. The service must still answer afterwards, and every item
of the table must still match the key grammar of the table's design (``tests/key_grammar.py``,
after docs/explanation/table-design.md).

This package holds what the suite shares: the checks on every answer (``answers``), the
hypothesis strategies (``inputs`` for values, ``operations`` for GraphQL documents and their
inputs), the table every fuzz test starts from (``world``), raw HTTP on a socket (``wire``) and
the service's document limits (``limits``). The tests are in ``tests/test_fuzz_*.py``;
``tests/test_fuzz_known_crashes.py`` keeps, as regression tests, the inputs the suite once
found answered with a crash."""
