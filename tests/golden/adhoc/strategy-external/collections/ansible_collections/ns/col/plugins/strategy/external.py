from __future__ import annotations

from ansible.plugins.strategy.linear import StrategyModule as LinearStrategy


class StrategyModule(LinearStrategy):
    ...
