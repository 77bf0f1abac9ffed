"""A module that takes 1.5 s to import, for the worker deadline test (test_sql_execute)."""

import time

time.sleep(1.5)


def answer(deadline: float) -> int:
    return 42
