from __future__ import annotations

import datetime


def kind(value):
    return type(value).__name__


def next_day(value):
    return value + datetime.timedelta(days=1)


def stamps(_):
    zone = datetime.timezone(datetime.timedelta(hours=-8))
    return {
        "date": datetime.date(1979, 5, 27),
        "naive": datetime.datetime(1979, 5, 27, 7, 32, 0, 250),
        "zoned": datetime.datetime(1979, 5, 27, 7, 32, 0, tzinfo=zone),
    }


class FilterModule:
    def filters(self):
        return {"kind": kind, "next_day": next_day, "stamps": stamps}
