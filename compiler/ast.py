"""The P4_16 syntax tree produced by `compiler.parser`.

Every node is a slotted dataclass whose first field is `loc` (a `SourceLoc` in the original, un-preprocessed
source). Nodes compare and hash by identity (``eq=False``) so later passes can key dictionaries by node.
Declarations carry their annotations in a keyword-only ``annotations`` list.

Class families: `Type` (type references), `Expr` (expressions, including keyset expressions of `select` and
table entries), `Stmt` (statements), `Decl` (declarations, some of which also occur as statements), plus
helper records (`Annotation`, `Param`, `Field`, table properties, parser states, ...).

Positions (`loc`): the first token of the construct, except `Binary`, `Ternary`, `MaskExpr`, `RangeExpr` (the
operator), `Member` (the member name), `Index`/`Slice`/`HeaderStackType` (the `[`); declarations start at their
keyword (`table`, `action`, ...) or, for fields, variables and parameters, at their first token.

`NodeVisitor` walks a tree, dispatching to ``visit_<ClassName>`` and falling back to `generic_visit`; `walk`
iterates a subtree; `dump` renders a tree as text (for tests and debugging); `to_p4`, `type_to_p4` and
`annotation_to_p4` print expressions, types and annotations back as P4 source (p4c's spelling of key names).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar


@dataclass(frozen=True, slots=True)
class SourceLoc:
    """A position in an original source file; `line` and `col` are 1-based."""

    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


NOLOC = SourceLoc("<builtin>", 0, 0)


@dataclass(slots=True, eq=False)
class Node:
    """Base of all syntax-tree nodes."""

    loc: SourceLoc

    def children(self) -> Iterator[Node]:
        """Yield the direct child nodes, in field order (lists are flattened)."""
        for f in dataclasses.fields(self):
            if f.name == "loc":
                continue
            value = getattr(self, f.name)
            if isinstance(value, Node):
                yield value
            elif isinstance(value, list):
                for item in value:
                    if isinstance(item, Node):
                        yield item


# --------------------------------------------------------------------------------------------------------------
# Annotations


@dataclass(slots=True, eq=False)
class Annotation(Node):
    """`@name`, `@name(expr, ...)` or `@name[key=value, ...]`.

    `args` holds the parsed expressions when the body parses as an expression list, else it is empty and
    `body` keeps the raw text between the parentheses (an unstructured annotation).
    """

    name: str
    args: list[Expr] = field(default_factory=list)
    body: str | None = None
    kv: dict[str, Expr] | None = None

    def string_arg(self) -> str | None:
        """The value of a single string-literal argument (`@name("x")` → "x"), else None."""
        if len(self.args) == 1 and isinstance(self.args[0], StringLit):
            return self.args[0].value
        return None

    def int_arg(self) -> int | None:
        """The value of a single integer-literal argument (`@id(5)` → 5), else None."""
        if len(self.args) == 1 and isinstance(self.args[0], IntLit):
            return self.args[0].value
        return None


def find_annotation(annotations: list[Annotation], name: str) -> Annotation | None:
    """The last annotation called `name` in `annotations`, or None."""
    found = None
    for a in annotations:
        if a.name == name:
            found = a
    return found


# --------------------------------------------------------------------------------------------------------------
# Types


@dataclass(slots=True, eq=False)
class Type(Node):
    """Base of type references."""


@dataclass(slots=True, eq=False)
class BitType(Type):
    """`bit<W>` (`bit` alone is `bit<1>`). `width` is an expression (usually an IntLit)."""

    width: Expr


@dataclass(slots=True, eq=False)
class IntType(Type):
    """`int<W>`; `width` None is the arbitrary-precision `int`."""

    width: Expr | None


@dataclass(slots=True, eq=False)
class VarbitType(Type):
    """`varbit<W>`."""

    max_width: Expr


@dataclass(slots=True, eq=False)
class BoolType(Type):
    """`bool`."""


@dataclass(slots=True, eq=False)
class ErrorType(Type):
    """`error`."""


@dataclass(slots=True, eq=False)
class MatchKindType(Type):
    """`match_kind`."""


@dataclass(slots=True, eq=False)
class StringType(Type):
    """`string`."""


@dataclass(slots=True, eq=False)
class VoidType(Type):
    """`void` (return type only)."""


@dataclass(slots=True, eq=False)
class DontCareType(Type):
    """`_` as a type argument."""


@dataclass(slots=True, eq=False)
class TypeName(Type):
    """A named type, optionally specialized: `ethernet_t`, `register<bit<32>>`, `.T` (`top_level`)."""

    name: str
    type_args: list[Type] = field(default_factory=list)
    top_level: bool = False


@dataclass(slots=True, eq=False)
class HeaderStackType(Type):
    """`T[size]` (header stack)."""

    element: Type
    size: Expr


@dataclass(slots=True, eq=False)
class TupleType(Type):
    """`tuple<T1, T2, ...>`."""

    elements: list[Type]


# --------------------------------------------------------------------------------------------------------------
# Expressions


@dataclass(slots=True, eq=False)
class Expr(Node):
    """Base of expressions."""


@dataclass(slots=True, eq=False)
class IntLit(Expr):
    """An integer literal. `width`/`signed` come from a `8w5`/`4s3` prefix; `width` None = untyped `int`."""

    value: int
    width: int | None = None
    signed: bool = False
    text: str = ""


@dataclass(slots=True, eq=False)
class BoolLit(Expr):
    """`true` / `false`."""

    value: bool


@dataclass(slots=True, eq=False)
class StringLit(Expr):
    """A string literal (escape sequences already decoded)."""

    value: str


@dataclass(slots=True, eq=False)
class Name(Expr):
    """An identifier in an expression (`hdr`, `NoAction`, `error`); `top_level` for a leading dot."""

    name: str
    top_level: bool = False


@dataclass(slots=True, eq=False)
class Member(Expr):
    """`expr.member`: fields, `.isValid`, `.apply`, `.hit`, `.miss`, `.action_run`, `error.X`, `Enum.X`."""

    expr: Expr
    member: str


@dataclass(slots=True, eq=False)
class Index(Expr):
    """`expr[index]` (header stack element)."""

    expr: Expr
    index: Expr


@dataclass(slots=True, eq=False)
class Slice(Expr):
    """`expr[hi:lo]` (bit slice)."""

    expr: Expr
    hi: Expr
    lo: Expr


@dataclass(slots=True, eq=False)
class Cast(Expr):
    """`(type) expr`."""

    type: Type
    expr: Expr


@dataclass(slots=True, eq=False)
class Unary(Expr):
    """Prefix operator: `!`, `~`, `-`, `+`."""

    op: str
    operand: Expr


@dataclass(slots=True, eq=False)
class Binary(Expr):
    """Infix operator: `* / % + - |+| |-| << >> <= >= < > == != & ^ | ++ && ||`."""

    op: str
    left: Expr
    right: Expr


@dataclass(slots=True, eq=False)
class Ternary(Expr):
    """`cond ? then : else_`."""

    cond: Expr
    then: Expr
    else_: Expr


@dataclass(slots=True, eq=False)
class NamedArg(Expr):
    """A named argument `name = value` in a call, or a field `name = value` of a struct expression."""

    name: str
    value: Expr


@dataclass(slots=True, eq=False)
class MethodCall(Expr):
    """`callee<type_args>(args)`: function, action, extern method, `isValid()`, `apply()` calls."""

    callee: Expr
    args: list[Expr] = field(default_factory=list)
    type_args: list[Type] = field(default_factory=list)


@dataclass(slots=True, eq=False)
class ConstructorCall(Expr):
    """`Type(args)` where the callee names a type: `MyParser()` in `V1Switch(...)`, `Checksum16()`."""

    type: Type
    args: list[Expr] = field(default_factory=list)


@dataclass(slots=True, eq=False)
class ListExpr(Expr):
    """`{a, b, ...}`: list/tuple expression (hash and checksum inputs, field lists)."""

    elements: list[Expr]


@dataclass(slots=True, eq=False)
class StructExpr(Expr):
    """`{f = a, g = b}` (optionally typed `(T){...}` is a Cast of this)."""

    fields: list[NamedArg]


@dataclass(slots=True, eq=False)
class MaskExpr(Expr):
    """`value &&& mask` (keyset)."""

    value: Expr
    mask: Expr


@dataclass(slots=True, eq=False)
class RangeExpr(Expr):
    """`lo .. hi` (keyset)."""

    lo: Expr
    hi: Expr


@dataclass(slots=True, eq=False)
class DefaultExpr(Expr):
    """`default` (keyset / switch label)."""


@dataclass(slots=True, eq=False)
class DontCare(Expr):
    """`_` (keyset or don't-care argument)."""


@dataclass(slots=True, eq=False)
class TypeExpr(Expr):
    """A type used where an expression is expected (e.g. `bit<8>` in some builtin calls)."""

    type: Type


# --------------------------------------------------------------------------------------------------------------
# Statements


@dataclass(slots=True, eq=False)
class Stmt(Node):
    """Base of statements."""


@dataclass(slots=True, eq=False)
class AssignStmt(Stmt):
    """`lhs = rhs;`."""

    lhs: Expr
    rhs: Expr


@dataclass(slots=True, eq=False)
class MethodCallStmt(Stmt):
    """A call used as a statement: `t.apply();`, `mark_to_drop(sm);`, `hdr.x.setValid();`."""

    call: MethodCall


@dataclass(slots=True, eq=False)
class IfStmt(Stmt):
    """`if (cond) then else else_`."""

    cond: Expr
    then: Stmt
    else_: Stmt | None = None


@dataclass(slots=True, eq=False)
class SwitchCase(Node):
    """`label: body` in a switch; `body` None is a fall-through label (`a: b: {...}`)."""

    label: Expr
    body: BlockStmt | None


@dataclass(slots=True, eq=False)
class SwitchStmt(Stmt):
    """`switch (expr) { cases }` (in v1model: `switch (t.apply().action_run)`)."""

    expr: Expr
    cases: list[SwitchCase]


@dataclass(slots=True, eq=False)
class BlockStmt(Stmt):
    """`{ stmts }`."""

    stmts: list[Stmt]
    annotations: list[Annotation] = field(default_factory=list, kw_only=True)


@dataclass(slots=True, eq=False)
class ExitStmt(Stmt):
    """`exit;`."""


@dataclass(slots=True, eq=False)
class ReturnStmt(Stmt):
    """`return;` / `return value;`."""

    value: Expr | None = None


@dataclass(slots=True, eq=False)
class EmptyStmt(Stmt):
    """`;`."""


@dataclass(slots=True, eq=False)
class ForStmt(Stmt):
    """`for (init; cond; update) body` (init: declarations, assignments or calls; update: assignments or calls)."""

    init: list[Stmt]
    cond: Expr
    update: list[Stmt]
    body: Stmt


@dataclass(slots=True, eq=False)
class BreakStmt(Stmt):
    """`break;` (inside a `for`)."""


@dataclass(slots=True, eq=False)
class ContinueStmt(Stmt):
    """`continue;` (inside a `for`)."""


# --------------------------------------------------------------------------------------------------------------
# Declarations


@dataclass(slots=True, eq=False)
class Decl(Node):
    """Base of declarations; `name` is the declared identifier."""

    name: str
    annotations: list[Annotation] = field(default_factory=list, kw_only=True)

    def annotation(self, name: str) -> Annotation | None:
        """The annotation `@name` on this declaration, or None."""
        return find_annotation(self.annotations, name)


@dataclass(slots=True, eq=False)
class Field(Decl):
    """A field of a header, header_union or struct: `type name;`."""

    type: Type


@dataclass(slots=True, eq=False)
class HeaderDecl(Decl):
    """`header name { fields }`."""

    fields: list[Field]
    type_params: list[str] = field(default_factory=list)


@dataclass(slots=True, eq=False)
class HeaderUnionDecl(Decl):
    """`header_union name { fields }`."""

    fields: list[Field]
    type_params: list[str] = field(default_factory=list)


@dataclass(slots=True, eq=False)
class StructDecl(Decl):
    """`struct name { fields }`."""

    fields: list[Field]
    type_params: list[str] = field(default_factory=list)


@dataclass(slots=True, eq=False)
class TypedefDecl(Decl):
    """`typedef type name;` or (`is_newtype`) `type type name;`."""

    type: Type
    is_newtype: bool = False


@dataclass(slots=True, eq=False)
class ConstDecl(Decl, Stmt):
    """`const type name = value;` (top level, local, or statement)."""

    type: Type
    value: Expr


@dataclass(slots=True, eq=False)
class VarDecl(Decl, Stmt):
    """`type name [= init];` (control/parser local or statement)."""

    type: Type
    init: Expr | None = None


@dataclass(slots=True, eq=False)
class EnumMember(Decl):
    """A member of an enum, serializable enum (`value` set), `error` or `match_kind` declaration."""

    value: Expr | None = None


@dataclass(slots=True, eq=False)
class EnumDecl(Decl):
    """`enum name { A, B }` or serializable `enum bit<8> name { A = 1, B = 2 }` (`underlying` set)."""

    members: list[EnumMember]
    underlying: Type | None = None


@dataclass(slots=True, eq=False)
class ErrorDecl(Decl):
    """`error { A, B }` (name is "error"; several declarations merge)."""

    members: list[EnumMember]


@dataclass(slots=True, eq=False)
class MatchKindDecl(Decl):
    """`match_kind { exact, lpm }` (name is "match_kind")."""

    members: list[EnumMember]


@dataclass(slots=True, eq=False)
class Param(Decl):
    """A parameter: `[direction] type name [= default]`; direction is "in", "out", "inout" or None."""

    type: Type
    direction: str | None = None
    default: Expr | None = None


@dataclass(slots=True, eq=False)
class MethodDecl(Decl):
    """A function prototype: extern method, constructor (`return_type` None), or `extern` function."""

    return_type: Type | None
    params: list[Param]
    type_params: list[str] = field(default_factory=list)
    is_abstract: bool = False


@dataclass(slots=True, eq=False)
class ExternDecl(Decl):
    """`extern Name<T> { methods }` (an extern object type)."""

    methods: list[MethodDecl]
    type_params: list[str] = field(default_factory=list)


@dataclass(slots=True, eq=False)
class ExternFunctionDecl(Decl):
    """`extern R f<T>(params);` (name is the function name)."""

    proto: MethodDecl


@dataclass(slots=True, eq=False)
class FunctionDecl(Decl):
    """`R f<T>(params) { body }`."""

    return_type: Type
    params: list[Param]
    body: BlockStmt
    type_params: list[str] = field(default_factory=list)


@dataclass(slots=True, eq=False)
class ParserTypeDecl(Decl):
    """`parser Name<T>(params);` (an architecture's parser type)."""

    params: list[Param]
    type_params: list[str] = field(default_factory=list)


@dataclass(slots=True, eq=False)
class ControlTypeDecl(Decl):
    """`control Name<T>(params);` (an architecture's control type)."""

    params: list[Param]
    type_params: list[str] = field(default_factory=list)


@dataclass(slots=True, eq=False)
class PackageTypeDecl(Decl):
    """`package Name<T>(params);`."""

    params: list[Param]
    type_params: list[str] = field(default_factory=list)


@dataclass(slots=True, eq=False)
class ParserState(Decl):
    """`state name { stmts transition ...; }`; `transition` is a `Name` or a `SelectExpr`, None if absent (= reject)."""

    stmts: list[Stmt]
    transition: Expr | None


@dataclass(slots=True, eq=False)
class SelectCase(Node):
    """`keyset: state;` — `keys` has one entry per select key (or a single DefaultExpr/DontCare)."""

    keys: list[Expr]
    state: Name


@dataclass(slots=True, eq=False)
class SelectExpr(Expr):
    """`select (keys) { cases }`."""

    keys: list[Expr]
    cases: list[SelectCase]


@dataclass(slots=True, eq=False)
class ValueSetDecl(Decl):
    """`value_set<T>(size) name;`."""

    element_type: Type
    size: Expr


@dataclass(slots=True, eq=False)
class ParserDecl(Decl):
    """`parser Name(params)(ctor_params) { locals states }`."""

    params: list[Param]
    locals: list[Decl]
    states: list[ParserState]
    ctor_params: list[Param] = field(default_factory=list)
    type_params: list[str] = field(default_factory=list)


@dataclass(slots=True, eq=False)
class ActionDecl(Decl):
    """`action name(params) { body }`; directionless params are control-plane data."""

    params: list[Param]
    body: BlockStmt


@dataclass(slots=True, eq=False)
class KeyElement(Node):
    """`expr : match_kind [annotations];` in a table key."""

    expr: Expr
    match_kind: str
    annotations: list[Annotation] = field(default_factory=list, kw_only=True)

    def annotation(self, name: str) -> Annotation | None:
        """The annotation `@name` on this key element, or None."""
        return find_annotation(self.annotations, name)


@dataclass(slots=True, eq=False)
class ActionRef(Node):
    """An action in a table's `actions` list, default action or entry: `name` or `name(args)`.

    `args` is None when written without parentheses.
    """

    name: Expr
    args: list[Expr] | None = None
    annotations: list[Annotation] = field(default_factory=list, kw_only=True)

    def annotation(self, name: str) -> Annotation | None:
        """The annotation (`@tableonly`, `@defaultonly`, ...) on this reference, or None."""
        return find_annotation(self.annotations, name)


@dataclass(slots=True, eq=False)
class TableProperty(Decl):
    """Base of table properties; `name` is the property name, `is_const` for `const name = ...`."""

    is_const: bool = field(default=False, kw_only=True)


@dataclass(slots=True, eq=False)
class KeyProperty(TableProperty):
    """`key = { elements }`."""

    elements: list[KeyElement]


@dataclass(slots=True, eq=False)
class ActionsProperty(TableProperty):
    """`actions = { refs }`."""

    actions: list[ActionRef]


@dataclass(slots=True, eq=False)
class DefaultActionProperty(TableProperty):
    """`[const] default_action = ref;`."""

    action: ActionRef


@dataclass(slots=True, eq=False)
class Entry(Node):
    """A table entry `[priority = p :] keyset : action;` — `keys` one per key element."""

    keys: list[Expr]
    action: ActionRef
    priority: Expr | None = None
    is_const: bool = False
    annotations: list[Annotation] = field(default_factory=list, kw_only=True)

    def annotation(self, name: str) -> Annotation | None:
        """The annotation `@name` on this entry (before it or after its action), or None."""
        return find_annotation(self.annotations, name)


@dataclass(slots=True, eq=False)
class EntriesProperty(TableProperty):
    """`[const] entries = { entries }`."""

    entries: list[Entry]


@dataclass(slots=True, eq=False)
class ValueProperty(TableProperty):
    """Any other property `name = expr;` (`size`, `counters`, `support_timeout`, `implementation`, ...)."""

    value: Expr


@dataclass(slots=True, eq=False)
class TableDecl(Decl):
    """`table name { properties }`."""

    properties: list[TableProperty]

    def get_property(self, name: str) -> TableProperty | None:
        """The property called `name`, or None."""
        for p in self.properties:
            if p.name == name:
                return p
        return None

    @property
    def key(self) -> KeyProperty | None:
        """The `key` property, or None for a keyless table."""
        p = self.get_property("key")
        return p if isinstance(p, KeyProperty) else None

    @property
    def actions(self) -> ActionsProperty | None:
        """The `actions` property."""
        p = self.get_property("actions")
        return p if isinstance(p, ActionsProperty) else None

    @property
    def default_action(self) -> DefaultActionProperty | None:
        """The `default_action` property."""
        p = self.get_property("default_action")
        return p if isinstance(p, DefaultActionProperty) else None

    @property
    def entries(self) -> EntriesProperty | None:
        """The `entries` property."""
        p = self.get_property("entries")
        return p if isinstance(p, EntriesProperty) else None


@dataclass(slots=True, eq=False)
class ControlDecl(Decl):
    """`control Name(params)(ctor_params) { locals apply { body } }`."""

    params: list[Param]
    locals: list[Decl]
    body: BlockStmt
    ctor_params: list[Param] = field(default_factory=list)
    type_params: list[str] = field(default_factory=list)


@dataclass(slots=True, eq=False)
class Instantiation(Decl):
    """`Type(args) name;` — `register<bit<32>>(1024) r;`, `V1Switch(...) main;`, `Checksum16() c;`."""

    type: Type
    args: list[Expr]


@dataclass(slots=True, eq=False)
class Program(Node):
    """A whole translation unit (preludes included), declarations in source order."""

    decls: list[Decl]


# --------------------------------------------------------------------------------------------------------------
# Traversal


class NodeVisitor:
    """Walk a tree: `visit(node)` calls `visit_<ClassName>(node)` if defined, else `generic_visit(node)`."""

    _dispatch: ClassVar[dict[tuple[type, type], Callable[..., Any] | None]] = {}

    def visit(self, node: Node) -> Any:
        key = (type(self), type(node))
        method = NodeVisitor._dispatch.get(key, NodeVisitor)
        if method is NodeVisitor:
            method = getattr(type(self), "visit_" + type(node).__name__, None)
            NodeVisitor._dispatch[key] = method
        if method is None:
            return self.generic_visit(node)
        return method(self, node)

    def generic_visit(self, node: Node) -> Any:
        """Visit every child of `node`; returns None."""
        for child in node.children():
            self.visit(child)
        return None


def walk(node: Node) -> Iterator[Node]:
    """Yield `node` and all its descendants, pre-order."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(list(n.children())))


def dump(node: Any, with_loc: bool = False) -> str:
    """Render a node (or list/value) as compact text, e.g. `Binary(op='+', left=Name(name='a'), ...)`."""
    if isinstance(node, Node):
        parts = []
        for f in dataclasses.fields(node):
            if f.name == "loc" and not with_loc:
                continue
            value = getattr(node, f.name)
            if f.name == "loc":
                parts.append(f"loc={value.line}:{value.col}")
                continue
            if f.default is not dataclasses.MISSING and value == f.default:
                continue
            if f.default_factory is not dataclasses.MISSING and value == f.default_factory():  # type: ignore[misc]
                continue
            parts.append(f"{f.name}={dump(value, with_loc)}")
        return f"{type(node).__name__}({', '.join(parts)})"
    if isinstance(node, list):
        return "[" + ", ".join(dump(v, with_loc) for v in node) + "]"
    if isinstance(node, dict):
        return "{" + ", ".join(f"{k!r}: {dump(v, with_loc)}" for k, v in node.items()) + "}"
    return repr(node)


# --------------------------------------------------------------------------------------------------------------
# Source text of expressions and types (p4c's spelling: `hdr.ipv4.dstAddr`, `hdr.ipv4.isValid()`, `x[7:0]`)


def _string_literal(value: str) -> str:
    out = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
    return f'"{out}"'


def type_to_p4(t: Type) -> str:
    """A type reference as P4 source text."""
    if isinstance(t, BitType):
        return f"bit<{to_p4(t.width)}>"
    if isinstance(t, IntType):
        return "int" if t.width is None else f"int<{to_p4(t.width)}>"
    if isinstance(t, VarbitType):
        return f"varbit<{to_p4(t.max_width)}>"
    if isinstance(t, TypeName):
        base = ("." if t.top_level else "") + t.name
        if t.type_args:
            base += "<" + ", ".join(type_to_p4(a) for a in t.type_args) + ">"
        return base
    if isinstance(t, HeaderStackType):
        return f"{type_to_p4(t.element)}[{to_p4(t.size)}]"
    if isinstance(t, TupleType):
        return "tuple<" + ", ".join(type_to_p4(a) for a in t.elements) + ">"
    simple = {BoolType: "bool", ErrorType: "error", MatchKindType: "match_kind", StringType: "string",
              VoidType: "void", DontCareType: "_"}
    return simple.get(type(t), type(t).__name__)


_PREC = {"||": 1, "&&": 2, "==": 3, "!=": 3, "<": 4, ">": 4, "<=": 4, ">=": 4, "|": 5, "^": 6, "&": 7,
         "<<": 8, ">>": 8, "++": 9, "+": 9, "-": 9, "|+|": 9, "|-|": 9, "*": 10, "/": 10, "%": 10}


def to_p4(e: Node, prec: int = 0) -> str:
    """An expression as P4 source text, parenthesised only where precedence needs it."""
    if isinstance(e, IntLit):
        return e.text or str(e.value)
    if isinstance(e, BoolLit):
        return "true" if e.value else "false"
    if isinstance(e, StringLit):
        return _string_literal(e.value)
    if isinstance(e, Name):
        return ("." if e.top_level else "") + e.name
    if isinstance(e, Member):
        return f"{to_p4(e.expr, 12)}.{e.member}"
    if isinstance(e, Index):
        return f"{to_p4(e.expr, 12)}[{to_p4(e.index)}]"
    if isinstance(e, Slice):
        return f"{to_p4(e.expr, 12)}[{to_p4(e.hi)}:{to_p4(e.lo)}]"
    if isinstance(e, MethodCall):
        targs = "<" + ", ".join(type_to_p4(t) for t in e.type_args) + ">" if e.type_args else ""
        return f"{to_p4(e.callee, 12)}{targs}(" + ", ".join(to_p4(a) for a in e.args) + ")"
    if isinstance(e, ConstructorCall):
        return f"{type_to_p4(e.type)}(" + ", ".join(to_p4(a) for a in e.args) + ")"
    if isinstance(e, NamedArg):
        return f"{e.name} = {to_p4(e.value)}"
    if isinstance(e, Cast):
        text = f"({type_to_p4(e.type)}){to_p4(e.expr, 11)}"
        return f"({text})" if prec > 11 else text
    if isinstance(e, Unary):
        text = f"{e.op}{to_p4(e.operand, 11)}"
        return f"({text})" if prec > 11 else text
    if isinstance(e, Binary):
        p = _PREC.get(e.op, 0)
        text = f"{to_p4(e.left, p)} {e.op} {to_p4(e.right, p + 1)}"
        return f"({text})" if prec > p else text
    if isinstance(e, Ternary):
        text = f"{to_p4(e.cond, 1)} ? {to_p4(e.then)} : {to_p4(e.else_)}"
        return f"({text})" if prec > 0 else text
    if isinstance(e, ListExpr):
        return "{" + ", ".join(to_p4(x) for x in e.elements) + "}"
    if isinstance(e, StructExpr):
        return "{" + ", ".join(to_p4(x) for x in e.fields) + "}"
    if isinstance(e, MaskExpr):
        return f"{to_p4(e.value)} &&& {to_p4(e.mask)}"
    if isinstance(e, RangeExpr):
        return f"{to_p4(e.lo)} .. {to_p4(e.hi)}"
    if isinstance(e, DefaultExpr):
        return "default"
    if isinstance(e, DontCare):
        return "_"
    if isinstance(e, TypeExpr):
        return type_to_p4(e.type)
    if isinstance(e, Type):
        return type_to_p4(e)
    return type(e).__name__


def annotation_to_p4(a: Annotation) -> str:
    """An annotation as source text: `@name`, `@name("x")`, `@name(1, 2)`, `@name[k=v]`."""
    if a.kv is not None:
        return f"@{a.name}[" + ", ".join(f"{k}={to_p4(v)}" for k, v in a.kv.items()) + "]"
    if a.args:
        return f"@{a.name}(" + ", ".join(to_p4(x) for x in a.args) + ")"
    if a.body is not None:
        return f"@{a.name}({a.body})"
    return f"@{a.name}"
