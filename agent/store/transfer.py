"""A namespace as JSON Lines, and back: the same memory ids, edges, root units and items.

One record per line, a header first::

    {"type": "header", "format": "ripplegraph-namespace", "version": 1, "namespace": "alice",
     "embedding_model": "local:all-MiniLM-L6-v2", "units": 48}
    {"type": "unit", "unit": {...MemoryUnit...}}
    {"type": "edge", "src": "m_…", "dst": "m_…", "edge_type": "semantic", "weight": 0.62}
    {"type": "root", "root": {...RootUnit...}}
    {"type": "item", "item": {...StoredItem...}}

Vectors are not written: an import embeds the texts again with the store's own model, so a
file moves between stores and between vector backends.  An edge stored both ways is written
once (a causal edge as ``causal``).  Fact clusters and pending work are derived state: the
next ingest rebuilds what it needs.  An import reads and checks the whole file before it
writes anything, and only into a namespace that holds nothing; it reads line by line twice
(checking, then writing in batches), so what it holds is the unit ids, not the file, and a
line longer than any record (``MAX_LINE``) is refused where it starts.  An export is written
owner-only: it holds what was said.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Final, Literal

from pydantic import BaseModel, Field, TypeAdapter, ValidationError

from ripplegraph.agent.errors import InvalidValueError
from ripplegraph.agent.memory import MemoryUnit, Namespace, RootUnit, StoredItem
from ripplegraph.agent.paths import private
from ripplegraph.agent.store.edges import CAUSED_BY, EdgeType
from ripplegraph.agent.store.memory_store import MemoryStore

FORMAT: Final = "ripplegraph-namespace"
VERSION: Final = 1
MAX_LINE: Final = 8 * 1024 * 1024
"""The longest line an import reads: more than any record (an item of 1,000,000 characters)."""
BATCH: Final = 500
"""Records an import writes at a time."""


class _Header(BaseModel):
    type: Literal["header"]
    format: Literal["ripplegraph-namespace"]
    version: Literal[1]
    namespace: Namespace
    embedding_model: str
    units: int


class _Unit(BaseModel):
    type: Literal["unit"]
    unit: MemoryUnit

    def cited(self) -> list[str]:
        return []


class _Edge(BaseModel):
    type: Literal["edge"]
    src: str
    dst: str
    edge_type: EdgeType
    weight: float

    def cited(self) -> list[str]:
        return [self.src, self.dst]


class _Root(BaseModel):
    type: Literal["root"]
    root: RootUnit

    def cited(self) -> list[str]:
        return self.root.evidence_ids


class _Item(BaseModel):
    type: Literal["item"]
    item: StoredItem

    def cited(self) -> list[str]:
        return self.item.unit_ids


Record = Annotated[_Unit | _Edge | _Root | _Item, Field(discriminator="type")]
_RECORD: TypeAdapter[_Unit | _Edge | _Root | _Item] = TypeAdapter(Record)


@dataclass(frozen=True)
class Transferred:
    """What an export wrote or an import stored: records by type (unit, edge, root, item)."""

    namespace: str
    counts: dict[str, int]


def _counted(namespace: str, kinds: Iterable[str]) -> Transferred:
    counts: dict[str, int] = {}
    for kind in kinds:
        counts[kind] = counts.get(kind, 0) + 1
    return Transferred(namespace, counts)


def export_records(store: MemoryStore, namespace: str) -> Iterator[dict[str, Any]]:
    """The namespace's records, header first.

    Items past their time to live are forgotten first, so that their units are not exported
    as memories of their own.
    """
    store.sweep_expired()
    units = store.all_units(namespace)
    yield _Header(
        type="header",
        format=FORMAT,
        version=VERSION,
        namespace=namespace,
        embedding_model=store.embedder.name,
        units=len(units),
    ).model_dump(mode="json")
    for unit in units:
        yield {"type": "unit", "unit": unit.model_dump(mode="json")}
    for edge in sorted(store.edges(namespace)):
        symmetric_twin = edge.type not in ("causal", CAUSED_BY) and edge.src > edge.dst
        if symmetric_twin or edge.type == CAUSED_BY:
            continue
        yield {
            "type": "edge",
            "src": edge.src,
            "dst": edge.dst,
            "edge_type": edge.type,
            "weight": edge.weight,
        }
    for root in store.root_units(namespace):
        yield {"type": "root", "root": root.model_dump(mode="json")}
    for item in store.items(namespace):
        yield {"type": "item", "item": item.model_dump(mode="json")}


def export_namespace(store: MemoryStore, namespace: str, path: Path) -> Transferred:
    """Write the namespace to ``path`` as JSON Lines, readable by its owner only."""
    kinds = []
    with open(path, "w", encoding="utf-8", opener=private) as out:
        for record in export_records(store, namespace):
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
            kinds.append(str(record["type"]))
    return _counted(namespace, kinds[1:])


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    """The file's non-blank lines, numbered; a line past ``MAX_LINE`` is refused, not read."""
    with path.open(encoding="utf-8") as lines:
        number = 0
        while line := lines.readline(MAX_LINE + 1):
            number += 1
            if len(line) > MAX_LINE:
                raise InvalidValueError(
                    f"line {number} is longer than {MAX_LINE:,} characters: not an export "
                    "'ripplegraph export' wrote"
                )
            if line.strip():
                yield number, line


def _records(path: Path) -> Iterator[_Header | _Unit | _Edge | _Root | _Item]:
    """The header, then every record, each checked on its own (``InvalidValueError``)."""
    first = True
    for number, line in _lines(path):
        try:
            raw = json.loads(line)
            yield _Header.model_validate(raw) if first else _RECORD.validate_python(raw)
        except (json.JSONDecodeError, ValidationError) as error:
            raise InvalidValueError(f"line {number}: {error}") from error
        except UnicodeDecodeError as error:
            raise InvalidValueError(f"line {number}: not UTF-8 text") from error
        first = False


def check_export(path: Path) -> str:
    """Check a whole export without keeping it: its namespace (``InvalidValueError``).

    A record may cite only units written before it, as an export writes them, so an import
    that writes in file order never stores an edge or item before its units.
    """
    try:
        records = _records(path)
        header = next(records, None)
        if not isinstance(header, _Header):
            raise InvalidValueError(f"not a {FORMAT} file: no header line")
        units: set[str] = set()
        for record in records:
            if isinstance(record, _Header):
                raise InvalidValueError("a second header line")
            if isinstance(record, _Unit) and record.unit.namespace != header.namespace:
                raise InvalidValueError(
                    f"unit {record.unit.id} is of namespace {record.unit.namespace!r}"
                )
            missing = sorted(set(record.cited()) - units)
            if missing:
                raise InvalidValueError(
                    f"a record ({record.type}) cites units not before it in the file: {missing[:3]}"
                )
            if isinstance(record, _Unit):
                units.add(record.unit.id)
    except UnicodeDecodeError as error:
        raise InvalidValueError(f"not UTF-8 text (byte {error.start})") from error
    if len(units) != header.units:
        raise InvalidValueError(
            f"the header counts {header.units} units, the file holds {len(units)}"
        )
    return header.namespace


def import_namespace(store: MemoryStore, path: Path) -> Transferred:
    """Restore an export into the store; its namespace must hold nothing there yet."""
    namespace = check_export(path)
    kinds: list[str] = []
    with store.write_lock():
        if store.count_units(namespace) or store.items(namespace):
            raise InvalidValueError(
                f"namespace {namespace!r} already holds memories: import restores into an "
                "empty one (forget --all first to replace it)"
            )
        roots: list[RootUnit] = []
        batch: list[_Unit | _Edge | _Item] = []
        for record in _records(path):
            if isinstance(record, _Header):
                continue
            kinds.append(record.type)
            if isinstance(record, _Root):
                roots.append(record.root)
            else:
                batch.append(record)
            if len(batch) >= BATCH:
                _restore(store, namespace, batch)
                batch = []
        _restore(store, namespace, batch)
        store.replace_root_units(namespace, roots)
    return _counted(namespace, kinds)


def _restore(store: MemoryStore, namespace: str, batch: list[_Unit | _Edge | _Item]) -> None:
    """Write a batch of an import: its units first, then the edges and items that cite them.

    An export writes every unit before any edge or item, so each cited unit is stored.
    """
    units = [r.unit for r in batch if isinstance(r, _Unit)]
    if units:
        store.add_units(units)
        store.mark_linked(u.id for u in units)
    edges: dict[EdgeType, list[tuple[str, str, float]]] = {}
    for record in batch:
        if isinstance(record, _Edge):
            edges.setdefault(record.edge_type, []).append((record.src, record.dst, record.weight))
    for edge_type, pairs in edges.items():
        store.replace_edges(namespace, edge_type, [], pairs)
    for record in batch:
        if isinstance(record, _Item):
            item = record.item
            store.save_item(
                namespace,
                item.key,
                item.value,
                item.unit_ids,
                item.created_at,
                item.ttl_minutes,
                item.expires_at,
            )
