# An action plugin that is ansible's debug under another name: its `var` is an expression
# it evaluates itself, so the task's own words must reach it trusted.
from __future__ import annotations

from ansible.plugins.action.debug import ActionModule

assert ActionModule
