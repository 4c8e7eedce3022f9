# A fact cache plugin that keeps each host's facts in a JSON file of its own, under the
# directory `fact_caching_connection` names.
from __future__ import annotations

DOCUMENTATION = """
    name: shelf_cache
    short_description: keeps facts on a shelf of JSON files
    description: One JSON file per host, in a directory.
    options:
      _uri:
        required: True
        description: The shelf's directory.
        env:
          - name: ANSIBLE_CACHE_PLUGIN_CONNECTION
        ini:
          - key: fact_caching_connection
            section: defaults
        type: path
      _prefix:
        description: What each file's name starts with.
        env:
          - name: ANSIBLE_CACHE_PLUGIN_PREFIX
        ini:
          - key: fact_caching_prefix
            section: defaults
      _timeout:
        default: 86400
        description: How long a file stays fresh, in seconds.
        env:
          - name: ANSIBLE_CACHE_PLUGIN_TIMEOUT
        ini:
          - key: fact_caching_timeout
            section: defaults
        type: integer
"""

import json

from ansible.plugins.cache import BaseFileCacheModule


class CacheModule(BaseFileCacheModule):

    def _load(self, filepath: str) -> object:
        with open(filepath) as shelf:
            return json.load(shelf)

    def _dump(self, value: object, filepath: str) -> None:
        with open(filepath, 'w') as shelf:
            json.dump(value, shelf, sort_keys=True)
