from __future__ import annotations


def joined(first, *rest, sep=","):
    out = list(first)
    for more in rest:
        out.extend(more)
    return sep.join(str(x) for x in out)


class FilterModule:
    def filters(self):
        return {"joined": joined}
