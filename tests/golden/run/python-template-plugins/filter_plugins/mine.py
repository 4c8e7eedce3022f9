from __future__ import annotations

def shout(value, suffix='!'):
    return value.upper() + suffix

def keys_of(d):
    return sorted(d)

def boom(value):
    raise ValueError('no good: %s' % value)

def intkeys(value):
    return {1: value, 'two': (1, 2)}

class FilterModule:
    def filters(self):
        return {'shout': shout, 'keys_of': keys_of, 'boom': boom, 'intkeys': intkeys}
