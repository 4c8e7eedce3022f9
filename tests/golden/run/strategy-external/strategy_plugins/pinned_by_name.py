"""A strategy that only gives ansible's host_pinned a name of its own."""
from __future__ import annotations

from ansible.plugins.strategy.host_pinned import StrategyModule as HostPinned


class StrategyModule(HostPinned):
    pass
