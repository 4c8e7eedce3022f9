from __future__ import annotations


def wrap_in(value, left='[', right=']'):
    return '%s%s%s' % (left, value, right)


def module_name(value):
    # the loader gives each plugin file its own module name
    return __name__.rsplit('_', 1)[0]


class FilterModule:
    def filters(self):
        return {'wrap_in': wrap_in, 'module_name': module_name}
