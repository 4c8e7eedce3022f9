def phrase(who):
    return 'hello, %s' % who
