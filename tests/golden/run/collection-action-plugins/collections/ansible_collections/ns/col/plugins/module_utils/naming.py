from __future__ import annotations


def shout(text):
    return text.upper() + '!'
