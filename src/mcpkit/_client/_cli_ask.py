"""``mcpkit call``, ``read`` and ``prompt`` answering a server's questions (elicitation).

Answers come first from the command line (``--answer JSON``, repeatable, one per question,
then ``--answers-file``), then, on a terminal, from the user: one prompt per field of the
requested schema, each checked (type, allowed values, bounds, format) and asked again when
it does not fit. Without either, the question is refused with a message naming the flags.
"""

from __future__ import annotations

from typing import Any, TextIO

import orjson

from ._elicitation import apply_defaults, check_answer

#: What the user types (alone) instead of a value to refuse the whole question.
REFUSALS = ("decline", "cancel")
_TRUE = {"y", "yes", "true", "1", "on"}
_FALSE = {"n", "no", "false", "0", "off"}


def parse_answers(given: list[str], answers_file: str | None) -> list[Any]:
    """The answers of ``--answer`` (each a JSON object, or ``decline``/``cancel``) followed
    by those of ``--answers-file`` (a JSON array of them, or one object).

    Raises:
        ValueError: an answer is neither, or the file cannot be read (the message names
            the flag).
    """
    answers = [_one_answer(text, f"--answer #{i}") for i, text in enumerate(given, 1)]
    if answers_file is not None:
        try:
            with open(answers_file, "rb") as f:
                loaded = orjson.loads(f.read())
        except OSError as e:
            raise ValueError(
                f"--answers-file: cannot read {answers_file}: {e.strerror or e}"
            ) from None
        except orjson.JSONDecodeError as e:
            raise ValueError(f"--answers-file: {answers_file} is not valid JSON ({e})") from None
        items = loaded if isinstance(loaded, list) else [loaded]
        for i, item in enumerate(items, 1):
            answers.append(_checked(item, f"--answers-file item #{i}"))
    return answers


def _one_answer(text: str, what: str) -> Any:
    if text.strip() in REFUSALS:
        return text.strip()
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError as e:
        raise ValueError(
            f'{what} is not valid JSON ({e}): give an object, e.g. \'{{"name": "Ada"}}\', '
            "or decline or cancel"
        ) from None
    return _checked(value, what)


def _checked(value: Any, what: str) -> Any:
    if isinstance(value, dict) or value in REFUSALS:
        return value
    raise ValueError(f"{what} must be a JSON object (the form's fields), or decline or cancel")


class Answerer:
    """The ``elicitation_handler`` of ``mcpkit call`` (``read``, ``prompt``): a plain
    function, so the client runs it in a worker thread and a terminal prompt blocks nothing.

    A question it cannot answer is cancelled and the reason kept in :attr:`problem`, which
    the command reports instead of the call's result: a cancel is an answer the server
    expects in every revision, where an error from the callback would become a tool error
    (handshake revisions) or a traceback in the client's log.
    """

    def __init__(self, answers: list[Any], stdin: TextIO | None, out: TextIO) -> None:
        self.answers = list(answers)
        self.used = 0
        self.stdin = stdin  # None: not a terminal
        self.out = out
        self.problem: str | None = None

    def handlers(self) -> dict[str, Any]:
        """The :class:`~mcpkit.Client` keywords that make it answer with this."""
        return {"elicitation_handler": self, "url_elicitation_handler": self.url}

    def __call__(self, params: Any, ctx: Any) -> dict[str, Any]:
        wire = params.to_wire()
        message = str(wire.get("message", ""))
        schema = wire.get("requestedSchema") or {}
        if self.used < len(self.answers):
            self.used += 1
            return self._given(self.answers[self.used - 1], message, schema)
        if self.stdin is not None:
            return prompt(message, schema, self.stdin, self.out)
        return self._refuse(
            f"the server asks: {message!r} (fields: {_fields(schema)}), and "
            + ("no answer is left" if self.answers else "no answer was given")
            + ": give one per question with --answer '"
            + _example(schema)
            + "' (or decline, or cancel), or --answers-file FILE, or run on a terminal to be asked"
        )

    def _refuse(self, problem: str) -> dict[str, Any]:
        """Cancel a question the command line cannot answer; the first such is reported."""
        if self.problem is None:
            self.problem = problem
        return {"action": "cancel"}

    def url(self, params: Any, ctx: Any) -> dict[str, Any]:
        """The ``url_elicitation_handler``: the URL is shown (stderr) for the user to open;
        the answer says whether they did (any object: accepted)."""
        wire = params.to_wire()
        message, url = str(wire.get("message", "")), str(wire.get("url", ""))
        print(f"\nThe server asks you to open: {url}\n  ({message})", file=self.out)
        if self.used < len(self.answers):
            self.used += 1
            given = self.answers[self.used - 1]
            return {"action": given if given in REFUSALS else "accept"}
        if self.stdin is not None:
            return {"action": _confirm("Enter once it is open", self.stdin, self.out)}
        return self._refuse(
            f"the server asks you to open {url} ({message!r}), and no answer was given: "
            "open it and say so with --answer '{}' (or decline, or cancel), "
            "or --answers-file FILE, or run on a terminal to be asked"
        )

    def _given(self, answer: Any, message: str, schema: dict[str, Any]) -> dict[str, Any]:
        if answer in REFUSALS:
            return {"action": answer}
        content = apply_defaults(dict(answer), schema)
        errors = check_answer(content, schema)
        if errors:
            return self._refuse(
                f"answer #{self.used} does not fit the question {message!r}: "
                + "; ".join(errors)
                + f" (fields: {_fields(schema)})"
            )
        return {"action": "accept", "content": content}


def _props(schema: dict[str, Any]) -> dict[str, Any]:
    props = schema.get("properties")
    return props if isinstance(props, dict) else {}


def _fields(schema: dict[str, Any]) -> str:
    required = set(schema.get("required") or [])
    names = [f"{n}{'' if n in required else '?'}" for n in _props(schema)]
    return ", ".join(names) or "none"


def _example(schema: dict[str, Any]) -> str:
    samples = {"string": "...", "integer": 1, "number": 1.5, "boolean": True}
    example: dict[str, Any] = {}
    for name, prop in _props(schema).items():
        choices = _choices(prop)
        example[name] = choices[0] if choices else samples.get(str(_dict(prop).get("type")), "...")
    return orjson.dumps(example).decode().replace(",", ", ").replace(":", ": ")


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _choices(prop: Any) -> list[Any]:
    """The values a single-select field allows (``enum``, or ``oneOf``/``anyOf`` consts)."""
    prop = _dict(prop)
    if isinstance(prop.get("enum"), list):
        return list(prop["enum"])
    options = prop.get("oneOf") or prop.get("anyOf") or []
    return [o["const"] for o in options if isinstance(o, dict) and "const" in o]


def _describe(prop: dict[str, Any], required: bool) -> str:
    items = _dict(prop.get("items"))
    choices = _choices(prop) or _choices(items)
    kind = "list" if prop.get("type") == "array" else str(prop.get("type") or "text")
    about = f"{kind}, one of: {', '.join(str(c) for c in choices)}" if choices else kind
    if prop.get("type") == "array":
        about += "; comma-separated"
    if "default" in prop:
        about += f"; Enter: {orjson.dumps(prop['default']).decode()}"
    elif not required:
        about += "; Enter: skip"
    return about


def prompt(message: str, schema: dict[str, Any], stdin: TextIO, out: TextIO) -> dict[str, Any]:
    """Ask ``message`` on the terminal, one field at a time; the answer as an ElicitResult
    dict. A field is asked again until its value fits; ``decline`` or ``cancel`` typed
    alone refuse the question, and end of input (Ctrl-D) cancels it."""
    required = set(schema.get("required") or [])
    print(f"\nThe server asks: {message}", file=out)
    print("  (type decline or cancel to refuse)", file=out)
    content: dict[str, Any] = {}
    if not _props(schema):  # nothing to fill in: a yes or no, never accepted unasked
        action = _confirm("Enter to accept", stdin, out)
        return {"action": action, "content": {}} if action == "accept" else {"action": action}
    for name, raw_prop in _props(schema).items():
        prop = _dict(raw_prop)
        # The field's name is what an --answer uses; a title that says more is shown too.
        title = str(prop.get("title") or "")
        notes = [title] if title.lower() not in ("", name.lower().replace("_", " ")) else []
        notes += [str(prop["description"])] if prop.get("description") else []
        hint = f"  {': '.join(notes)}" if notes else ""
        while True:
            out.write(f"{name} ({_describe(prop, name in required)}){hint}: ")
            out.flush()
            line = stdin.readline()
            if not line:  # end of input
                print(file=out)
                return {"action": "cancel"}
            text = line.rstrip("\r\n")
            if text.strip() in REFUSALS:
                return {"action": text.strip()}
            if not text.strip() and (name not in required or "default" in prop):
                break  # skipped: the client fills in a default
            problem, value = _field_value(text, prop)
            if problem is None:
                errors = check_answer({name: value}, {"type": "object", "properties": {name: prop}})
                problem = "; ".join(e.removeprefix(f"{name}: ") for e in errors) or None
            if problem is None:
                content[name] = value
                break
            print(f"  {problem}; try again", file=out)
    return {"action": "accept", "content": content}


def _confirm(question: str, stdin: TextIO, out: TextIO) -> str:
    """``accept`` (an empty line, or anything else), ``decline`` or ``cancel`` (also at the
    end of input), as typed after ``question``."""
    out.write(f"{question} (or decline, cancel): ")
    out.flush()
    line = stdin.readline()
    word = line.strip()
    if not line or word == "cancel":
        return "cancel"
    return "decline" if word == "decline" else "accept"


def _field_value(text: str, prop: dict[str, Any]) -> tuple[str | None, Any]:
    """(problem, value) of what was typed for one field."""
    if not text.strip():
        return "an answer is required", None
    if prop.get("type") == "array":
        return None, [part.strip() for part in text.split(",") if part.strip()]
    choices = _choices(prop)
    if choices:
        for option in prop.get("oneOf") or prop.get("anyOf") or []:
            title = _dict(option).get("title")
            if isinstance(title, str) and title.lower() == text.strip().lower():
                return None, option["const"]
        return None, text.strip()  # checked against the choices by the caller
    kind = prop.get("type")
    word = text.strip().lower()
    if kind == "boolean":
        if word in _TRUE or word in _FALSE:
            return None, word in _TRUE
        return "answer yes or no", None
    if kind in ("integer", "number"):
        try:
            return None, int(word) if kind == "integer" else float(word)
        except ValueError:
            return (
                f"{text.strip()!r} is not {'an integer' if kind == 'integer' else 'a number'}",
                None,
            )
    return None, text
