#!/usr/bin/env python3
"""Generates hotline_client/protocol.py from the repository's schemas/ (the JSON Schemas the build
publishes): a TypedDict per action's params and result, per event and for the wire error, and the
typed `request` overloads of the async and the sync client.

    /usr/bin/python3 clients/python/scripts/generate_types.py          # rewrite the file
    /usr/bin/python3 clients/python/scripts/generate_types.py --check  # exit 1 when it is stale
    ... --schemas DIR   read the schemas from DIR instead (the test checks that a change is noticed)

The output is committed; tests/test_generated.py fails when schemas/ changed and it did not.
"""

from __future__ import annotations

import json
import keyword
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
PACKAGE = HERE.parent
SCHEMAS = PACKAGE.parent.parent / "schemas"
OUTPUT = PACKAGE / "hotline_client" / "protocol.py"

# Annotations that describe a value but not its Python type: left out of the structural identity,
# so one shape used by many actions (a job status) is one TypedDict.
IGNORED = {"description", "title", "$schema", "minLength", "maxLength", "pattern", "minimum", "maximum",
           "minItems", "maxItems", "maxProperties", "format"}


def pascal(text: str) -> str:
    out = "".join(part[:1].upper() + part[1:] for part in text.replace("-", ".").replace("_", ".").split(".") if part)
    return out or "Anonymous"


def py(value: Any) -> str:
    """A JSON value as a Python literal."""
    return json.dumps(value) if isinstance(value, str) else repr(value)


def shape(schema: Any) -> str:
    def strip(s: Any) -> Any:
        if isinstance(s, dict):
            return {k: strip(v) for k, v in sorted(s.items()) if k not in IGNORED}
        if isinstance(s, list):
            return [strip(v) for v in s]
        return s

    return json.dumps(strip(schema), sort_keys=True)


class Generator:
    def __init__(self) -> None:
        self.blocks: list[str] = []
        self.names: dict[str, str] = {}  # shape → TypedDict name
        self.taken: set[str] = set()

    def literal(self, value: Any) -> str:
        return f"Literal[{py(value)}]"

    def type_of(self, schema: Any, name: str) -> str:
        """The Python annotation of a schema; objects with properties become TypedDicts named `name`."""
        if not isinstance(schema, dict) or not schema:
            return "Any"
        if "const" in schema:
            return self.literal(schema["const"])
        if "enum" in schema:
            return "Literal[" + ", ".join(py(v) for v in schema["enum"]) + "]"
        if "anyOf" in schema:
            options = schema["anyOf"]
            if all(isinstance(o, dict) and "const" in o for o in options):
                return "Literal[" + ", ".join(py(o["const"]) for o in options) + "]"
            parts: list[str] = []
            for i, option in enumerate(options):
                t = self.type_of(option, f"{name}{i + 1}" if sum(o.get("type") == "object" for o in options) > 1 else name)
                if t not in parts:
                    parts.append(t)
            return "Any" if "Any" in parts else " | ".join(parts)
        kind = schema.get("type")
        if kind == "string":
            return "str"
        if kind == "integer":
            return "int"
        if kind == "number":
            return "float"
        if kind == "boolean":
            return "bool"
        if kind == "null":
            return "None"
        if kind == "array":
            return f"list[{self.type_of(schema.get('items'), name + 'Item')}]"
        if kind == "object":
            if "properties" in schema:
                return self.typed_dict(schema, name)
            values = [v for v in (schema.get("patternProperties") or {}).values()]
            extra = schema.get("additionalProperties")
            if isinstance(extra, dict):
                values.append(extra)
            value = self.type_of(values[0], name + "Value") if len(values) == 1 else "Any"
            return f"dict[str, {value}]"
        return "Any"

    def typed_dict(self, schema: dict[str, Any], name: str) -> str:
        key = shape(schema)
        if key in self.names:
            return self.names[key]
        unique = name
        n = 2
        while unique in self.taken:
            unique = f"{name}{n}"
            n += 1
        self.taken.add(unique)
        self.names[key] = unique
        required = set(schema.get("required", []))
        fields = [(k, self.type_of(v, name + pascal(k)), k in required) for k, v in schema["properties"].items()]
        # A top-level schema's description is its action's summary, which a shared shape would misstate.
        doc = None if "title" in schema else schema.get("description")
        self.blocks.append(self.render(unique, fields, doc))
        return unique

    def render(self, name: str, fields: list[tuple[str, str, bool]], doc: str | None) -> str:
        # Required and optional keys in two TypedDicts joined by inheritance (Python 3.10 has no
        # Required/NotRequired); the functional form takes keys that are not identifiers (`from`).
        lines: list[str] = []
        required = [(k, t) for k, t, r in fields if r]
        optional = [(k, t) for k, t, r in fields if not r]

        def functional(cls: str, items: list[tuple[str, str]], total: bool) -> str:
            body = ", ".join(f"{json.dumps(k)}: {t}" for k, t in items)
            return f"{cls} = TypedDict({json.dumps(cls)}, {{{body}}}{'' if total else ', total=False'})"

        def identifiers(items: list[tuple[str, str]]) -> bool:
            return all(k.isidentifier() and not keyword.iskeyword(k) for k, _ in items)

        summary = f'    """{doc.strip()}"""' if doc else None
        if identifiers([(k, t) for k, t, _ in fields]):
            if required and optional:
                lines.append(f"class _{name}Required(TypedDict):")
                lines += [f"    {k}: {t}" for k, t in required]
                lines += ["", "", f"class {name}(_{name}Required, total=False):"]
                if summary:
                    lines.append(summary)
                lines += [f"    {k}: {t}" for k, t in optional]
            else:
                lines.append(f"class {name}(TypedDict{'' if required or not optional else ', total=False'}):")
                if summary:
                    lines.append(summary)
                lines += [f"    {k}: {t}" for k, t in (required or optional)] or ["    pass"]
        else:
            bases = []
            if required:
                lines.append(functional(f"_{name}Required", required, True))
                bases.append(f"_{name}Required")
            if optional:
                lines.append(functional(f"_{name}Optional", optional, False))
                bases.append(f"_{name}Optional")
            lines += ["", "", f"class {name}({', '.join(bases)}):"]
            lines.append(summary or "    pass")
        return "\n".join(lines)


def load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def generate(schemas: Path = SCHEMAS) -> str:
    global SCHEMAS
    SCHEMAS = schemas
    index = load(SCHEMAS / "index.json")
    gen = Generator()
    # Shapes many actions share get their protocol names first.
    gen.typed_dict(load(SCHEMAS / "error.json"), "WireError")
    gen.typed_dict(load(SCHEMAS / "actions" / "jobs.status.result.json"), "JobStatus")
    gen.typed_dict(load(SCHEMAS / "actions" / "state.info.params.json"), "NoParams")
    gen.typed_dict(load(SCHEMAS / "actions" / "files.download.result.json"), "JobReply")
    events: list[tuple[str, str]] = []
    for rel in index["events"]:
        stem = Path(rel).name.removesuffix(".json")
        name = pascal(stem.replace(".binary-header", "")) + ("BinaryHeader" if "binary-header" in stem else "Event")
        events.append((stem, gen.type_of(load(SCHEMAS / rel), name)))
    actions: list[tuple[str, str, str, bool, str]] = []
    for action in index["actions"]:
        base = pascal(action["name"])
        params_schema = load(SCHEMAS / action["params"])
        params = gen.type_of(params_schema, base + "Params")
        result = gen.type_of(load(SCHEMAS / action["result"]), base + "Result")
        actions.append((action["name"], params, result, not params_schema.get("required"), action["summary"]))
    codes = load(SCHEMAS / "error.json")["properties"]["code"]["anyOf"]

    out = [
        '"""The protocol\'s types, generated from schemas/ by clients/python/scripts/generate_types.py: do not edit."""',
        "",
        "from __future__ import annotations",
        "",
        "from typing import Any, Literal, TypedDict, overload",
        "",
        f"PROTOCOL_VERSION = {index['protocolVersion']}",
        "",
        "ErrorCode = Literal[" + ", ".join(json.dumps(c["const"]) for c in codes) + "]",
        "",
        "ActionName = Literal[" + ", ".join(json.dumps(a[0]) for a in actions) + "]",
        "",
    ]
    for block in gen.blocks:
        out += ["", block, ""]
    out += [""]
    for name, params, result, _, _ in actions:
        alias = pascal(name)
        if params != alias + "Params":
            out.append(f"{alias}Params = {params}")
        if result != alias + "Result":
            out.append(f"{alias}Result = {result}")
    out += ["", ""]

    def overloads(sync: bool) -> list[str]:
        prefix = "" if sync else "async "
        cls = "SyncActionRequests" if sync else "ActionRequests"
        doc = "Typed `request` overloads of the sync facade." if sync else "Typed `request` overloads: every action's params and result."
        send = "self._send_sync" if sync else "await self._send"
        lines = [f"class {cls}:", f'    """{doc}"""', ""]
        for name, params, _result, optional, _ in actions:
            alias = pascal(name)
            p = f"params: {alias}Params | None = None" if optional else f"params: {alias}Params"
            lines += ["    @overload", f"    {prefix}def request(self, action: Literal[{json.dumps(name)}], {p}) -> {alias}Result: ...", ""]
        lines += [
            f"    {prefix}def request(self, action: str, params: Any = None) -> Any:",
            f'        """Sends one action and returns its result; raises HotlineError with the wire\'s error."""',
            f"        return {send}(action, params or {{}})",
            "",
            f"    {prefix}def {'_send_sync' if sync else '_send'}(self, action: str, params: Any) -> Any:",
            "        raise NotImplementedError",
        ]
        return lines

    out += overloads(False) + ["", ""] + overloads(True)
    return "\n".join(out) + "\n"


def main() -> int:
    args = sys.argv[1:]
    text = generate(Path(args[args.index("--schemas") + 1]) if "--schemas" in args else SCHEMAS)
    if "--check" in args:
        if not OUTPUT.exists() or OUTPUT.read_text(encoding="utf-8") != text:
            print(f"{OUTPUT} is stale: run {Path(__file__).name} and commit it", file=sys.stderr)
            return 1
        return 0
    OUTPUT.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
