from __future__ import annotations

raise NotImplementedError('boom')
