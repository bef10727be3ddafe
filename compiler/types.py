"""Semantic P4_16 types of the supported subset, as computed by `compiler.typecheck`.

These are values, not syntax: `bit<8>` written twice gives two equal `BitsT(8, False)`. Named types (headers,
structs, enums, externs, parsers, controls) keep a reference to their declaration. `width_of` gives the bit width
p4c's BMv2 back end uses for a type (bool = 1, error = 32, serializable enum = its underlying width).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from compiler import ast


class P4Type:
    """Base of all semantic types."""

    def __str__(self) -> str:
        return type(self).__name__


@dataclass(frozen=True)
class BitsT(P4Type):
    """`bit<W>` (`signed` False) or `int<W>` (`signed` True)."""

    width: int
    signed: bool = False

    def __str__(self) -> str:
        return f"{'int' if self.signed else 'bit'}<{self.width}>"


@dataclass(frozen=True)
class InfIntT(P4Type):
    """The type of an untyped integer literal or constant (`int`)."""

    def __str__(self) -> str:
        return "int"


@dataclass(frozen=True)
class VarbitT(P4Type):
    """`varbit<W>` (a header field, or a local variable)."""

    max_width: int

    def __str__(self) -> str:
        return f"varbit<{self.max_width}>"


@dataclass(frozen=True)
class BoolT(P4Type):
    """`bool`."""

    def __str__(self) -> str:
        return "bool"


@dataclass(frozen=True)
class StringT(P4Type):
    """`string` (annotation and log arguments)."""

    def __str__(self) -> str:
        return "string"


@dataclass(frozen=True)
class VoidT(P4Type):
    """`void` (return type of statements-only calls)."""

    def __str__(self) -> str:
        return "void"


@dataclass(frozen=True)
class ErrorT(P4Type):
    """`error`."""

    def __str__(self) -> str:
        return "error"


@dataclass(frozen=True)
class MatchKindT(P4Type):
    """`match_kind`."""

    def __str__(self) -> str:
        return "match_kind"


@dataclass(frozen=True)
class DontCareT(P4Type):
    """The type of `_` (matches anything)."""

    def __str__(self) -> str:
        return "_"


@dataclass(eq=False)
class EnumT(P4Type):
    """An `enum`; `underlying` set for a serializable enum (`enum bit<8> E {...}`), then `values` holds the numbers."""

    name: str
    members: list[str]
    underlying: BitsT | None = None
    values: dict[str, int] = field(default_factory=dict)
    decl: ast.Decl | None = None

    def __str__(self) -> str:
        return f"enum {self.name}"


@dataclass(eq=False)
class StructLikeT(P4Type):
    """A `header`, `struct` or `header_union` (`kind`), fields in declaration order."""

    kind: str
    name: str
    fields: list[tuple[str, P4Type]]
    decl: ast.Decl | None = None

    def field(self, name: str) -> P4Type | None:
        """The type of field `name`, or None."""
        for n, t in self.fields:
            if n == name:
                return t
        return None

    @property
    def is_header(self) -> bool:
        return self.kind == "header"

    @property
    def is_struct(self) -> bool:
        return self.kind == "struct"

    def __str__(self) -> str:
        return f"{self.kind} {self.name}"


@dataclass(frozen=True)
class StackT(P4Type):
    """A header stack `H[size]`."""

    element: StructLikeT
    size: int

    def __str__(self) -> str:
        return f"{self.element.name}[{self.size}]"


@dataclass(frozen=True)
class TupleT(P4Type):
    """The type of a list expression `{a, b}` (`tuple<...>`)."""

    elements: tuple[P4Type, ...]

    def __str__(self) -> str:
        return "tuple<" + ", ".join(str(e) for e in self.elements) + ">"


@dataclass(frozen=True)
class TypeVarT(P4Type):
    """A generic type parameter (`T`) inside an extern or function signature."""

    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(eq=False)
class ExternT(P4Type):
    """An extern object type, possibly specialized (`register<bit<32>>`)."""

    decl: ast.ExternDecl
    type_args: list[P4Type] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.decl.name

    def __str__(self) -> str:
        if self.type_args:
            return f"{self.name}<{', '.join(str(t) for t in self.type_args)}>"
        return self.name


@dataclass(eq=False)
class BlockT(P4Type):
    """A parser, control or package (declaration or type declaration); `kind` is "parser", "control", "package"."""

    kind: str
    decl: ast.Decl
    type_args: tuple[P4Type, ...] = ()  # explicit ones, as in `V1Switch<H, M>(...)`

    @property
    def name(self) -> str:
        return self.decl.name

    def __str__(self) -> str:
        return f"{self.kind} {self.name}"


@dataclass(eq=False)
class ValueSetT(P4Type):
    """A parser value set (`value_set<T>(size) pvs;`), used as a select case."""

    decl: ast.ValueSetDecl
    element: P4Type
    size: int

    def __str__(self) -> str:
        return f"value_set<{self.element}>"


@dataclass(eq=False)
class TableT(P4Type):
    """A table (the type of its name; `apply()` returns `ApplyResultT`)."""

    decl: ast.TableDecl

    def __str__(self) -> str:
        return f"table {self.decl.name}"


@dataclass(eq=False)
class ApplyResultT(P4Type):
    """The result of `t.apply()`: has `.hit`, `.miss` and `.action_run`."""

    table: ast.TableDecl

    def __str__(self) -> str:
        return f"apply result of {self.table.name}"


@dataclass(eq=False)
class ActionRunT(P4Type):
    """The type of `t.apply().action_run` (an enum of the table's actions)."""

    table: ast.TableDecl

    def __str__(self) -> str:
        return f"action_list({self.table.name})"


@dataclass(eq=False)
class ActionT(P4Type):
    """An action (callable)."""

    decl: ast.ActionDecl

    def __str__(self) -> str:
        return f"action {self.decl.name}"


@dataclass(eq=False)
class MethodT(P4Type):
    """A callable: extern method or function, builtin method; `owner` is the receiver type for methods."""

    name: str
    decls: list[ast.MethodDecl]
    owner: P4Type | None = None

    def __str__(self) -> str:
        return f"method {self.name}"


@dataclass(frozen=True)
class TypeT(P4Type):
    """The type of a type name used as an expression (`error`, an enum name, a header type in a call)."""

    of: P4Type

    def __str__(self) -> str:
        return f"type {self.of}"


BOOL = BoolT()
INFINT = InfIntT()
ERROR = ErrorT()
VOID = VoidT()
STRING = StringT()
MATCH_KIND = MatchKindT()
DONTCARE = DontCareT()

ERROR_WIDTH = 32  # p4c's BMv2 back end stores `error` values in 32 bits
BOOL_WIDTH = 1


def header_layout(st: StructLikeT) -> list[tuple[tuple[str, ...], str, P4Type]]:
    """The BMv2 fields of header type `st`: (path of P4 field names, JSON field name, leaf type). A header with a
    struct-typed field is flattened as p4c's FlattenHeaders does: every field is renamed after its path and its
    position (`h.s.a` at position 1 becomes `_s_a1`); any other header keeps its field names."""
    if not any(isinstance(ft, StructLikeT) for _, ft in st.fields):
        return [((n,), n, ft) for n, ft in st.fields]
    out: list[tuple[tuple[str, ...], str, P4Type]] = []

    def walk(path: tuple[str, ...], t: P4Type) -> None:
        if isinstance(t, StructLikeT):
            for n, ft in t.fields:
                walk(path + (n,), ft)
            return
        out.append((path, "_" + "_".join(path) + str(len(out)), t))

    walk((), st)
    return out


def width_of(t: P4Type) -> int | None:
    """Bit width of a fixed-size type as the BMv2 back end lays it out, else None."""
    if isinstance(t, BitsT):
        return t.width
    if isinstance(t, BoolT):
        return BOOL_WIDTH
    if isinstance(t, ErrorT):
        return ERROR_WIDTH
    if isinstance(t, EnumT):
        return t.underlying.width if t.underlying else 32
    if isinstance(t, StructLikeT):
        total = 0
        for _, ft in t.fields:
            w = width_of(ft)
            if w is None:
                return None
            total += w
        return total
    return None


def is_bits(t: P4Type) -> bool:
    """True for `bit<W>` and `int<W>`."""
    return isinstance(t, BitsT)


def same_type(a: P4Type, b: P4Type) -> bool:
    """Type equality as the checker needs it (structural for value types, identity for named ones)."""
    if a is b:
        return True
    if isinstance(a, (BitsT, BoolT, ErrorT, InfIntT, StringT, VoidT, MatchKindT, VarbitT)):
        return a == b
    if isinstance(a, StackT) and isinstance(b, StackT):
        return a.size == b.size and same_type(a.element, b.element)
    if isinstance(a, TupleT) and isinstance(b, TupleT):
        return len(a.elements) == len(b.elements) and all(
            same_type(x, y) for x, y in zip(a.elements, b.elements)
        )
    if isinstance(a, StructLikeT) and isinstance(b, StructLikeT):
        return a.decl is b.decl and a.decl is not None
    if isinstance(a, EnumT) and isinstance(b, EnumT):
        return a.decl is b.decl and a.decl is not None
    if isinstance(a, ExternT) and isinstance(b, ExternT):
        return a.decl is b.decl
    return False
