"""Turning raw JSON params into wire types, strictly, with errors that name the field.

Our own converter, separate from pygls's: it is strict where cattrs is lenient
by default (``"5"`` is not an integer here, ``"false"`` is not a boolean) and
its messages use the wire's camelCase names (``turnId: expected an integer``).
"""

from __future__ import annotations

import typing
from collections.abc import Callable
from typing import Any, TypeVar

import attrs
import cattrs
from cattrs.gen import make_dict_structure_fn, override

from agentls.protocol.errors import ProtocolError
from agentls.text import valid_unicode

T = TypeVar("T")


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def _strict(converter: cattrs.Converter, kind: type, check: Any, what: str) -> None:
    def hook(value: Any, _: Any) -> Any:
        if not check(value):
            raise TypeError(f"expected {what}, got {_json_type(value)}")
        return value

    converter.register_structure_hook(kind, hook)


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def _make_converter() -> cattrs.Converter:
    converter = cattrs.Converter(forbid_extra_keys=False)

    def string(value: Any, _: Any) -> str:
        if not isinstance(value, str):
            raise TypeError(f"expected a string, got {_json_type(value)}")
        return valid_unicode(value)

    converter.register_structure_hook(str, string)
    _strict(converter, int, lambda v: isinstance(v, int) and not isinstance(v, bool), "an integer")
    _strict(
        converter,
        float,
        lambda v: isinstance(v, int | float) and not isinstance(v, bool),
        "a number",
    )
    _strict(converter, bool, lambda v: isinstance(v, bool), "true or false")

    def token(value: Any, _: Any) -> int | str:
        if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
            return value
        raise TypeError(f"expected a string or an integer, got {_json_type(value)}")

    converter.register_structure_hook(int | str, token)

    def optional_token(value: Any, kind: Any) -> int | str | None:
        return None if value is None else token(value, kind)

    converter.register_structure_hook(int | str | None, optional_token)

    def literal_factory(kind: Any) -> Any:
        allowed = typing.get_args(kind)

        def hook(value: Any, _: Any) -> Any:
            if value not in allowed or not isinstance(value, str):
                raise ValueError("must be one of " + ", ".join(repr(a) for a in allowed))
            return value

        return hook

    def is_list(kind: Any) -> bool:
        return typing.get_origin(kind) is list

    def list_factory(kind: Any) -> Any:
        (item,) = typing.get_args(kind) or (Any,)

        def hook(value: Any, _: Any) -> Any:
            # cattrs would take any iterable: a string would become its characters.
            if not isinstance(value, list):
                raise TypeError(f"expected an array, got {_json_type(value)}")
            out = []
            for index, element in enumerate(value):
                try:
                    out.append(converter.structure(element, item))
                except Exception as exc:
                    raise TypeError(f"[{index}]: {exc}") from None
            return out

        return hook

    converter.register_structure_hook_factory(is_list, list_factory)

    def is_json_object(kind: Any) -> bool:
        return typing.get_origin(kind) is dict and typing.get_args(kind) == (str, Any)

    def json_object(value: Any, _: Any) -> Any:
        # Free-form JSON (its contents are checked where they are used).
        if not isinstance(value, dict):
            raise TypeError(f"expected an object, got {_json_type(value)}")
        return value

    converter.register_structure_hook_factory(is_json_object, lambda kind: json_object)

    def is_literal(kind: Any) -> bool:
        return getattr(kind, "__origin__", None) is typing.Literal

    converter.register_structure_hook_factory(is_literal, literal_factory)

    def object_factory(cls: type) -> Any:
        inner: Callable[[Any, Any], Any] = make_dict_structure_fn(
            cls,
            converter,
            **{a.name: override(rename=camel(a.name)) for a in attrs.fields(cls)},  # type: ignore[arg-type]
        )

        def hook(value: Any, kind: Any) -> Any:
            if not isinstance(value, dict):
                raise TypeError(f"expected an object, got {_json_type(value)}")
            return inner(value, kind)

        return hook

    converter.register_structure_hook_factory(attrs.has, object_factory)
    return converter


CONVERTER = _make_converter()


def _format(exc: BaseException, _: Any) -> str:
    if isinstance(exc, KeyError):
        return "required field missing"
    return str(exc)


def _where(path: str) -> str:
    if path in ("", "$"):
        return "params"
    return ".".join(camel(part) for part in path.removeprefix("$.").split("."))


def parse(raw: Any, cls: type[T], *, what: str = "params") -> T:
    """Structure ``raw`` as ``cls`` or raise an invalid_params error naming every bad field."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ProtocolError("invalid_params", f"{what} must be an object, not {_json_type(raw)}")
    try:
        return CONVERTER.structure(raw, cls)
    except cattrs.BaseValidationError as exc:
        messages = cattrs.transform_error(exc, format_exception=_format)
        details = []
        for message in messages:
            text, _, path = message.rpartition(" @ ")
            details.append(f"{_where(path)}: {text}")
        raise ProtocolError(
            "invalid_params", "invalid " + what + ": " + "; ".join(details)
        ) from None
    except (TypeError, ValueError) as exc:
        raise ProtocolError("invalid_params", f"invalid {what}: {exc}") from None


__all__ = ["CONVERTER", "camel", "parse"]
