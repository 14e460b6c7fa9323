"""One XML element as immutable, located data (tag, attributes, file, line, children)."""
from __future__ import annotations

from typing import Dict, Iterator, Mapping, NamedTuple, Optional, Tuple

from rospy_control.exceptions import ConfigError

__all__ = ["Attributes", "ElementInfo"]


class Attributes(Mapping):
    """A read-only ``name -> value`` mapping of an element's attributes (hashable, picklable)."""

    __slots__ = ("_items",)

    def __init__(self, items: Optional[Mapping[str, str]] = None) -> None:
        self._items: Dict[str, str] = dict(items or {})

    def __getitem__(self, key: str) -> str:
        return self._items[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __hash__(self) -> int:
        return hash(frozenset(self._items.items()))

    def __repr__(self) -> str:
        return f"Attributes({self._items!r})"

    def __reduce__(self):
        return (Attributes, (self._items,))


class _ElementFields(NamedTuple):
    tag: str
    attributes: Mapping[str, str]
    source: str
    line: Optional[int]
    children: Tuple["ElementInfo", ...]


class ElementInfo(_ElementFields):
    """One XML element as plain, immutable data; ``attributes`` is read-only whatever it is built from."""

    __slots__ = ()

    def __new__(cls, tag: str, attributes: Mapping[str, str], source: str, line: Optional[int],
                children=()) -> "ElementInfo":
        attrs = attributes if isinstance(attributes, Attributes) else Attributes(attributes)
        return super().__new__(cls, tag, attrs, source, line, tuple(children))

    def _replace(self, **kwargs) -> "ElementInfo":
        fields = self._asdict()
        fields.update(kwargs)
        return ElementInfo(**fields)

    def describe(self) -> str:
        """``<tag name='x'>`` for messages."""
        name = self.attributes.get("name")
        return f"<{self.tag} name='{name}'>" if name is not None else f"<{self.tag}>"

    def error(self, message: str) -> ConfigError:
        """A ConfigError located at this element."""
        return ConfigError(f"{self.describe()}: {message}", self.source, self.line)

    def child(self, tag: str) -> Optional["ElementInfo"]:
        """The single child called ``tag`` (None if absent; error if repeated)."""
        found = [c for c in self.children if c.tag == tag]
        if len(found) > 1:
            raise found[1].error(f"<{tag}> may appear only once inside {self.describe()}")
        return found[0] if found else None
