from __future__ import annotations

def even(value):
    return value % 2 == 0

class TestModule:
    def tests(self):
        return {'even': even}
