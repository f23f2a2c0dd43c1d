"""Deterministic memory ids: the same memory written twice has the same id, so it is stored once."""

from __future__ import annotations

import hashlib
import json

from ripplegraph.agent.memory import Provenance


def memory_id(namespace: str, provenance: Provenance, text: str) -> str:
    """Hash of namespace, provenance (session and turns) and text."""
    payload = json.dumps(
        [namespace, provenance.session_id, provenance.turn_ids, text], ensure_ascii=False
    )
    return "m_" + hashlib.sha256(payload.encode("utf-8")).hexdigest()[:32]
