from __future__ import annotations

from ansible.plugins.action import ActionBase
from ansible.utils.display import Display

display = Display()


class ActionModule(ActionBase):
    def run(self, tmp=None, task_vars=None):
        display.v("noisy at -v")
        display.vvv("noisy at -vvv", host=task_vars["inventory_hostname"])
        display.vvvvvv("noisy at -vvvvvv")
        return {"changed": False, "said": "noise"}
