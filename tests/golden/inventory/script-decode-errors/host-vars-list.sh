#!/bin/sh
# A host's variables that are not a mapping (an empty list).
echo '{"_meta": {"hostvars": {"h": []}}, "g": {"hosts": ["h"]}}'
