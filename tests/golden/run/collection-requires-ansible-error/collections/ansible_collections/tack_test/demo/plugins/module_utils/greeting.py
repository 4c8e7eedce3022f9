from __future__ import annotations


def greeting(name, punctuation='!'):
    return 'hello, %s%s' % (name, punctuation)
