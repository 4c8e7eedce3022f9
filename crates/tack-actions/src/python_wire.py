# What tack's Python workers share (prepended to each worker's script): values on the wire,
# the line channel to the controller, the task's variables read through it, and the display
# queue plugins print through.
#
# Values cross as JSON; what JSON cannot say (a dict with keys that are not strings, an
# integer beyond 64 bits, a float that is not finite) is wrapped as {"__tack__": KIND, ...}:
# "map", "int", "float", "date" and "datetime" (a YAML timestamp), "undefined" (a lookup's
# undefined argument, by the controller's number for it), "str" (a string with where it was
# written, its "origin"), and for the inventory worker "unsafe" (a string not trusted as a
# template) and "vault" (ciphertext); "bytes" (a `!!binary` value, as base64) goes to the
# worker only. The Rust side is `python_plugins::{to_wire, from_wire}`.
import json
import math
import os
import sys
from collections.abc import Mapping


def decode(value, on_str=None):
    """A value from the wire; `on_str` marks each plain string (the inventory's trust)."""
    if isinstance(value, str):
        return on_str(value) if on_str else value
    if isinstance(value, list):
        return [decode(v, on_str) for v in value]
    if isinstance(value, dict):
        kind = value.get("__tack__")
        if kind is None:
            return {k: decode(v, on_str) for k, v in value.items()}
        if kind == "map":
            return {decode(k, on_str): decode(v, on_str) for k, v in value["items"]}
        if kind == "int":
            return int(value["digits"])
        if kind == "float":
            return float(value["repr"])
        if kind == "bytes":
            import base64
            return base64.b64decode(value["base64"])
        if kind == "unsafe":
            return tag_origin(value["text"], value.get("origin"))
        if kind == "str":
            text = value["text"]
            return tag_origin(on_str(text) if on_str else text, value.get("origin"))
        if kind == "vault":
            from ansible.parsing.vault import EncryptedString
            return EncryptedString(ciphertext=value["ciphertext"])
        if kind == "undefined":
            return undefined_argument(value["id"])
        if kind == "date":
            import datetime
            return datetime.date(value["year"], value["month"], value["day"])
        if kind == "datetime":
            import datetime
            offset = value["utc_offset_minutes"]
            zone = None if offset is None else datetime.timezone(datetime.timedelta(minutes=offset))
            return datetime.datetime(value["year"], value["month"], value["day"], value["hour"],
                                     value["minute"], value["second"], value["microsecond"], zone)
        raise ValueError("unknown value kind %r" % kind)
    return value


def tag_origin(text, origin):
    """`text` carrying ansible's `Origin` tag, when the controller said where it was written."""
    if not origin:
        return text
    from ansible._internal._datatag._tags import Origin
    return Origin(path=origin.get("path"), description=origin.get("description"),
                  line_num=origin.get("line") or None, col_num=origin.get("col") or None).tag(text)


_UNDEFINED_ARGUMENT = []


def undefined_argument(number):
    """ansible's marker for an undefined lookup argument, carrying the number the controller
    gave it so that handing it back names the controller's own undefined value."""
    if not _UNDEFINED_ARGUMENT:
        from ansible._internal._templating._jinja_common import UndefinedMarker

        class UndefinedArgument(UndefinedMarker):
            __slots__ = ("tack_number",)

        _UNDEFINED_ARGUMENT.append(UndefinedArgument)
    marker = _UNDEFINED_ARGUMENT[0](_no_template_source=True)
    marker.tack_number = number
    return marker


def undefined_number(value):
    """The controller's number for `value`, when it is one of `undefined_argument`'s."""
    if _UNDEFINED_ARGUMENT and isinstance(value, _UNDEFINED_ARGUMENT[0]):
        return value.tack_number
    return None


def timestamp(value):
    """A `date` or `datetime` as the wire says it (tack keeps it as a YAML timestamp), else
    None. A time of day alone, or an offset of seconds, has no such form."""
    import datetime
    if isinstance(value, datetime.datetime):
        offset = value.utcoffset()
        if offset is not None and offset.total_seconds() % 60:
            return None
        return {"__tack__": "datetime", "year": value.year, "month": value.month,
                "day": value.day, "hour": value.hour, "minute": value.minute,
                "second": value.second, "microsecond": value.microsecond,
                "utc_offset_minutes": None if offset is None else int(offset.total_seconds() // 60)}
    if isinstance(value, datetime.date):
        return {"__tack__": "date", "year": value.year, "month": value.month, "day": value.day}
    return None


def encode(value, special=None, default=None):
    """A value for the wire. `special` may say first how to write a value (anything but
    `None`); `default` writes what is none of the kinds below (else it is refused)."""
    if special is not None:
        said = special(value)
        if said is not None:
            return said

    def again(v):
        return encode(v, special, default)

    number = undefined_number(value)
    if number is not None:
        return {"__tack__": "undefined", "id": number}

    stamp = timestamp(value)
    if stamp is not None:
        return stamp
    if value is None or isinstance(value, (bool, str)):
        return str(value) if isinstance(value, str) and type(value) is not str else value
    if isinstance(value, int):
        if -(2 ** 63) <= value < 2 ** 63:
            return int(value)
        return {"__tack__": "int", "digits": str(int(value))}
    if isinstance(value, float):
        if math.isfinite(value):
            return float(value)
        return {"__tack__": "float", "repr": repr(float(value))}
    if isinstance(value, Mapping):
        if all(isinstance(k, str) for k in value) and "__tack__" not in value:
            return {str(k): again(v) for k, v in value.items()}
        return {"__tack__": "map", "items": [[again(k), again(v)] for k, v in value.items()]}
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", "surrogateescape")
    if hasattr(value, "__dataclass_fields__"):
        import dataclasses
        return again(dataclasses.asdict(value))
    if isinstance(value, (list, tuple, set, frozenset)) or hasattr(value, "__iter__"):
        return [again(v) for v in value]
    if default is not None:
        return default(value)
    raise TypeError("a plugin's %s value cannot be handed back to tack" % type(value).__name__)


class Channel:
    """One JSON object per line with the controller, on the original stdout; anything a
    plugin prints goes to stderr."""

    def __init__(self):
        self.inp = sys.stdin.buffer
        self.out = os.fdopen(os.dup(1), "wb", buffering=0)
        os.dup2(2, 1)
        # Answers a request from the controller that arrives while the worker waits for a
        # value (a template plugin called again from a variable's template).
        self.handler = None

    def send(self, message):
        self.out.write(json.dumps(message).encode("utf-8") + b"\n")

    def read(self):
        line = self.inp.readline()
        if not line:
            sys.exit(0)
        return json.loads(line)

    def ask(self, request):
        """Asks the controller for something and waits for its {"op": "value", ...}."""
        self.send(request)
        while True:
            message = self.read()
            if message.get("op") == "value" or self.handler is None:
                return message
            self.send(self.handler(message))


class TaskVars(Mapping):
    """The task's variables, read from the controller on demand. A plugin may write to them
    (ansible hands plugins a plain dict): what it writes stays here."""

    def __init__(self, channel):
        self._channel = channel
        self._seen = {}
        self._set = {}

    def __getitem__(self, name):
        if name in self._set:
            return self._set[name]
        if name not in self._seen:
            reply = self._channel.ask({"op": "var", "name": name})
            if "missing" in reply:
                raise KeyError(name)
            if "error" in reply:
                from ansible.errors import AnsibleUndefinedVariable
                raise AnsibleUndefinedVariable(reply["error"])
            trusted = None
            if reply.get("trusted"):
                # A user's variable: its templates are trusted, as ansible's loaded ones.
                from ansible.template import trust_as_template
                trusted = trust_as_template
            value = decode(reply["value"], trusted)
            deprecated = reply.get("deprecated")
            if deprecated:
                # ansible-core's deprecation of the variable, raised where a template uses it.
                from ansible.module_utils.datatag import deprecate_value
                value = deprecate_value(value, deprecated["msg"], version=deprecated["version"],
                                        help_text=deprecated.get("help"),
                                        collection_name="ansible.builtin")
            self._seen[name] = value
        return self._seen[name]

    def __setitem__(self, name, value):
        self._set[name] = value

    def update(self, other=(), **more):
        for name, value in dict(other, **more).items():
            self[name] = value

    def _names(self):
        names = list(self._channel.ask({"op": "names"})["names"])
        return names + [n for n in self._set if n not in names]

    def __iter__(self):
        return iter(self._names())

    def __len__(self):
        return len(self._names())

    def __contains__(self, name):
        try:
            self[name]
        except KeyError:
            return False
        return True

    def copy(self):
        return {name: self[name] for name in self}


def read_task_vars():
    """ansible's templar, taking the task's variables as they are read here: each value is
    read as ansible's lazy container gives it (a template a user wrote rendered, a container
    made lazy), one variable at a time."""
    from ansible._internal._templating import _jinja_bits
    from ansible._internal._templating._lazy_containers import _AnsibleLazyTemplateMixin

    layers_of = _jinja_bits._flatten_and_lazify_vars

    class Layer(Mapping):
        def __init__(self, variables):
            self._variables = variables

        def __getitem__(self, name):
            value = self._variables[name]
            return _AnsibleLazyTemplateMixin._try_create({name: value})[name]

        def __iter__(self):
            return iter(self._variables)

        def __len__(self):
            return len(self._variables)

        def __contains__(self, name):
            return name in self._variables

    def flatten(mapping):
        if isinstance(mapping, TaskVars):
            yield Layer(mapping)
        else:
            yield from layers_of(mapping)

    _jinja_bits._flatten_and_lazify_vars = flatten


class DisplayQueue:
    """What ansible's worker processes send their display calls through; `what` names the
    plugin kind in the refusal of a prompt."""

    def __init__(self, channel, what):
        self._channel = channel
        self._what = what

    def send_display(self, method, *args, **kwargs):
        try:
            args = encode(list(args))
            kwargs = encode(kwargs)
        except TypeError:
            args, kwargs = [str(a) for a in args], {}
        self._channel.send({"op": "display", "method": method, "args": args, "kwargs": kwargs})

    def send_prompt(self, **kwargs):
        from ansible.errors import AnsibleError
        raise AnsibleError("tack does not let %s prompt yet" % self._what)
