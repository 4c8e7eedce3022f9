from __future__ import annotations


def small(value, limit=10):
    return value < limit


class TestModule:
    def tests(self):
        return {'small': small}
