"""The one XML reader of the hardware XML (and of the board program's ``<board>`` file).

:func:`read_xml` turns a path, or XML text starting with ``<``, into an immutable
:class:`~.element.ElementInfo` tree that remembers file and line of every element; every syntax error
is a :class:`~rospy_control.exceptions.ConfigError` naming file:line.

lxml is used when it is installed (always beside ROS).  The board program (``trajectory_board``) is
meant to also run on a small computer next to the stepper board, where lxml -- a compiled extension
-- may be missing; only then the same schema is read through the standard library's expat parser,
which reports the same lines.  Comments are dropped and entities are not fetched in both cases.
"""
from __future__ import annotations

import os
from typing import Any, List, Optional, Tuple

from rospy_control.exceptions import ConfigError

from .element import ElementInfo

try:
    from lxml import etree as _lxml
except ImportError:  # pragma: no cover - the board program on a computer without lxml
    _lxml = None

__all__ = ["read_xml", "have_lxml"]


def have_lxml() -> bool:
    """Whether the reader uses lxml (False: the standard library's expat fallback)."""
    return _lxml is not None


def read_xml(source: str, not_found: Optional[str] = None,
             cannot_read: str = "cannot read file", use_lxml: Optional[bool] = None) -> ElementInfo:
    """The document's root element from a file path or from XML text (starting with ``<``).

    :param not_found: the message when ``source`` is no file (None: reading it fails with
        ``cannot_read``).
    :param use_lxml: force the reader (tests); None picks lxml when installed.
    :raises ConfigError: a missing or unreadable file, malformed XML (with its line).
    """
    text = source.lstrip()
    is_text = text.startswith("<")
    name = "<xml string>" if is_text else source
    if not is_text and not_found is not None and not os.path.isfile(source):
        raise ConfigError(not_found, source)
    lxml = have_lxml() if use_lxml is None else use_lxml
    if is_text:
        data = text.encode("utf-8")
    else:
        try:
            with open(source, "rb") as f:
                data = f.read()
        except OSError as err:
            raise ConfigError(f"{cannot_read}: {err}", name) from err
    return _read_lxml(data, name) if lxml else _read_expat(data, name)


def _read_lxml(data: bytes, name: str) -> ElementInfo:
    parser = _lxml.XMLParser(remove_comments=True, resolve_entities=False, no_network=True)
    try:
        root = _lxml.fromstring(data, parser)
    except _lxml.XMLSyntaxError as err:
        raise ConfigError(f"malformed XML: {err.msg}", name, err.lineno) from err

    def plain(el) -> ElementInfo:
        children = tuple(plain(c) for c in el if isinstance(c.tag, str))
        return ElementInfo(el.tag, dict(el.attrib), name, el.sourceline, children)
    return plain(root)


def _read_expat(data: bytes, name: str) -> ElementInfo:
    from xml.parsers import expat
    parser = expat.ParserCreate()
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    # an open element: tag, attributes, line, children so far
    stack: List[Tuple[str, Any, int, List[ElementInfo]]] = []
    done: List[ElementInfo] = []

    def start(tag: str, attrib: Any) -> None:
        stack.append((tag, attrib, parser.CurrentLineNumber, []))

    def end(tag: str) -> None:
        t, attrib, line, children = stack.pop()
        el = ElementInfo(t, attrib, name, line, tuple(children))
        (stack[-1][3] if stack else done).append(el)

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    try:
        parser.Parse(data, True)
    except expat.ExpatError as err:
        raise ConfigError(f"malformed XML: {expat.ErrorString(err.code)}", name, err.lineno) from err
    return done[0]
