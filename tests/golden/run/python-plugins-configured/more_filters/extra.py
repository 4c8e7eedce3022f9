from __future__ import annotations


def twice(value):
    return value * 2


class FilterModule:
    def filters(self):
        return {'twice': twice}
