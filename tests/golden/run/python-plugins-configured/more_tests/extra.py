from __future__ import annotations


def truthy_text(value):
    return 'yes' if value else ''


class TestModule:
    def tests(self):
        return {'truthy_text': truthy_text}
