#!/bin/sh
# A vaulted value whose ciphertext is not text.
echo '{"_meta": {"hostvars": {"h": {"v": {"__ansible_vault": 1}}}}, "g": {"hosts": ["h"]}}'
