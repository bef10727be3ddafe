"""Recursive-descent parser for the P4_16 language: tokens → `compiler.ast.Program`.

Each parsing method carries a `# grammar:` comment with the rule it implements (after the P4_16 specification's
grammar appendix, simplified to what the methods accept). Like p4c, the parser tracks the names declared as types
(headers, structs, typedefs, enums, externs, parsers, controls, packages, type parameters in scope) to tell a
declaration `T x;` from an expression statement and a cast `(T) e` from a parenthesised expression.

Node positions: the first token of the construct, except `Binary`, `Ternary`, `MaskExpr`, `RangeExpr` (the
operator token), `Member` (the member name), `Index`/`Slice` (the `[`) and `HeaderStackType` (the `[`).

Entry points: `parse_file(path, include_dirs, defines)` and `parse_source(text, name, include_dirs, defines)` (both
run `compiler.preprocess` first), `parse_preprocessed(text, file)`. Syntax errors raise `CompileError` with one
`file:line:col` diagnostic.
"""

from __future__ import annotations

import copy

from collections.abc import Callable, Iterable, Mapping
from typing import TypeVar

from compiler import ast
from compiler.ast import SourceLoc
from compiler.diagnostics import CompileError, Diagnostics
from compiler.lexer import RESERVED, Token, tokenize

T = TypeVar("T")

# Reserved words that may still be used as names (p4c's `nonTypeName`).
_NAME_KEYWORDS = frozenset({"apply", "key", "actions", "state", "entries", "type", "priority"})
_BASE_TYPE_WORDS = frozenset({"bit", "int", "varbit", "bool", "error", "string", "void", "match_kind", "tuple"})
_DIRECTIONS = frozenset({"in", "out", "inout"})

# Binary operator precedence, higher binds tighter (p4c's p4parser.ypp: note that the bitwise operators bind
# tighter than comparisons, unlike C). All are left-associative.
_BINARY_PRECEDENCE: dict[str, int] = {
    "||": 1,
    "&&": 2,
    "==": 3, "!=": 3,
    "<": 4, ">": 4, "<=": 4, ">=": 4,
    "|": 5,
    "^": 6,
    "&": 7,
    "<<": 8, ">>": 8,
    "++": 9, "+": 9, "-": 9, "|+|": 9, "|-|": 9,
    "*": 10, "/": 10, "%": 10,
}


class _Backtrack(Exception):
    """Internal: a speculative parse failed (never escapes the parser)."""


def _describe(tok: Token) -> str:
    if tok.kind == "EOF":
        return "end of input"
    if tok.kind == "STRING":
        return "string literal"
    return f"'{tok.text}'"


class Parser:
    """Parses one token list; `types` is the set of names known to be types (shared with sub-parsers)."""

    def __init__(self, tokens: list[Token], diags: Diagnostics | None = None,
                 types: set[str] | None = None) -> None:
        self.toks = tokens
        self.i = 0
        self.diags = diags if diags is not None else Diagnostics()
        self.types: set[str] = types if types is not None else set()
        self._scopes: list[set[str]] = []  # type parameters in scope
        self._speculating = 0
        self.for_header = False  # parsing a `for (...)` clause: statements end without `;`

    # ------------------------------------------------------------------------------------------------ helpers

    @property
    def tok(self) -> Token:
        return self.toks[self.i]

    def peek(self, k: int = 1) -> Token:
        j = self.i + k
        return self.toks[j] if j < len(self.toks) else self.toks[-1]

    def at(self, kind: str) -> bool:
        return self.toks[self.i].kind == kind

    def at_word(self, word: str) -> bool:
        t = self.toks[self.i]
        return t.kind == "ID" and t.text == word

    def advance(self) -> Token:
        t = self.toks[self.i]
        if t.kind != "EOF":
            self.i += 1
        return t

    def accept(self, kind: str) -> Token | None:
        if self.toks[self.i].kind == kind:
            return self.advance()
        return None

    def accept_word(self, word: str) -> Token | None:
        if self.at_word(word):
            return self.advance()
        return None

    def error(self, loc: SourceLoc, message: str) -> CompileError:
        if self._speculating:
            raise _Backtrack()
        self.diags.error(loc, message, "syntax")
        return CompileError(self.diags)

    def error_here(self, expected: str) -> CompileError:
        return self.error(self.tok.loc, f"expected {expected}, found {_describe(self.tok)}")

    def expect(self, kind: str, context: str = "") -> Token:
        """Consume a `kind` token or fail with `expected 'kind' [context], found ...`."""
        if self.toks[self.i].kind == kind:
            return self.advance()
        what = f"'{kind}'" + (f" {context}" if context else "")
        raise self.error_here(what)

    def expect_semi(self, after: str) -> Token:
        """Consume `;` or fail with `expected ';' after <after>` right after the previous token (in a `for` header,
        whose clauses end without one, consume nothing)."""
        if self.for_header:
            return self.tok
        if self.toks[self.i].kind == ";":
            return self.advance()
        if self.i > 0 and self.toks[self.i - 1].loc.file == self.tok.loc.file:
            prev = self.toks[self.i - 1]
            loc = SourceLoc(prev.loc.file, prev.loc.line, prev.loc.col + len(prev.text))
        else:
            loc = self.tok.loc
        raise self.error(loc, f"expected ';' after {after}")

    def expect_word(self, word: str, context: str = "") -> Token:
        if self.at_word(word):
            return self.advance()
        raise self.error_here(f"'{word}'" + (f" {context}" if context else ""))

    def speculate(self, fn: Callable[[], T]) -> T | None:
        """Run `fn`; on a syntax failure restore the position and return None."""
        start = self.i
        self._speculating += 1
        try:
            return fn()
        except _Backtrack:
            self.i = start
            return None
        finally:
            self._speculating -= 1

    def is_type_name(self, name: str) -> bool:
        if name in self.types:
            return True
        return any(name in s for s in self._scopes)

    def declare_type(self, name: str) -> None:
        self.types.add(name)

    def name(self, what: str = "a name") -> Token:
        """# grammar: name : IDENTIFIER | TYPE_IDENTIFIER | apply | key | actions | state | entries | type | priority"""
        t = self.tok
        if t.kind == "ID" and (t.text not in RESERVED or t.text in _NAME_KEYWORDS):
            return self.advance()
        raise self.error_here(what)

    def _close_angle(self) -> None:
        """Consume the `>` closing a type-argument list."""
        self.expect(">", "to close type arguments")

    # ------------------------------------------------------------------------------------------------ program

    def parse_program(self) -> ast.Program:
        """# grammar: program : { declaration | ';' } EOF"""
        loc = self.tok.loc
        decls: list[ast.Decl] = []
        try:
            while not self.at("EOF"):
                if self.accept(";"):
                    continue
                decls.append(self.declaration())
        except RecursionError:
            raise self.error(self.tok.loc, "unsupported: nesting too deep") from None
        return ast.Program(loc, decls)

    def declaration(self) -> ast.Decl:
        """# grammar: declaration : annotations? ( constantDeclaration | externDeclaration | actionDeclaration
        #   | parserDeclaration | parserTypeDeclaration | controlDeclaration | controlTypeDeclaration
        #   | packageTypeDeclaration | typeDeclaration | errorDeclaration | matchKindDeclaration
        #   | functionDeclaration | instantiation )"""
        annos = self.annotations()
        t = self.tok
        if t.kind != "ID":
            raise self.error_here("a declaration")
        w = t.text
        if w == "const":
            return self.const_decl(annos)
        if w == "extern":
            return self.extern_decl(annos)
        if w == "action":
            return self.action_decl(annos)
        if w == "parser":
            return self.parser_decl(annos)
        if w == "control":
            return self.control_decl(annos)
        if w == "package":
            return self.package_decl(annos)
        if w in ("header", "header_union", "struct"):
            return self.struct_like_decl(annos)
        if w == "enum":
            return self.enum_decl(annos)
        if w in ("typedef", "type"):
            return self.typedef_decl(annos)
        if w == "error":
            return self.error_decl(annos)
        if w == "match_kind":
            return self.match_kind_decl(annos)
        if w in ("table", "state", "value_set"):
            raise self.error(t.loc, f"'{w}' declarations are only allowed inside a "
                             f"{'control' if w == 'table' else 'parser'}")
        if w in _BASE_TYPE_WORDS or (w not in RESERVED or w in _NAME_KEYWORDS) or w == ".":
            return self.function_or_instantiation(annos)
        raise self.error_here("a declaration")

    # ------------------------------------------------------------------------------------------------ annotations

    def annotations(self) -> list[ast.Annotation]:
        """# grammar: annotations : { '@' name [ '(' annotationBody ')' | '[' kvList ']' ] }"""
        result: list[ast.Annotation] = []
        while self.at("@"):
            at = self.advance()
            t = self.tok
            if t.kind != "ID":
                raise self.error_here("an annotation name after '@'")
            self.advance()
            anno = ast.Annotation(at.loc, t.text)
            if self.at("("):
                anno.args, anno.body = self._annotation_body()
            elif self.at("["):
                anno.kv = self._annotation_kv()
            result.append(anno)
        return result

    def _annotation_body(self) -> tuple[list[ast.Expr], str | None]:
        open_tok = self.expect("(")
        depth = 1
        start = self.i
        while depth:
            t = self.tok
            if t.kind == "EOF":
                raise self.error(open_tok.loc, "unterminated annotation: missing ')'")
            if t.kind in ("(", "[", "{"):
                depth += 1
            elif t.kind in (")", "]", "}"):
                depth -= 1
            self.advance()
        body = self.toks[start:self.i - 1]
        if not body:
            return [], None
        eof = Token("EOF", "", self.toks[self.i - 1].loc, self.toks[self.i - 1].pos)
        sub = Parser(body + [eof], self.diags, self.types)
        sub._speculating = 1
        try:
            args = sub.expression_list(lambda: sub.at("EOF"))
            if sub.at("EOF"):
                return args, None
        except (_Backtrack, CompileError):
            pass
        return [], " ".join(tk.text for tk in body)

    def _annotation_kv(self) -> dict[str, ast.Expr]:
        self.expect("[")
        kv: dict[str, ast.Expr] = {}
        while not self.at("]"):
            key = self.name("an annotation key")
            self.expect("=")
            kv[key.text] = self.expression()
            if not self.accept(","):
                break
        self.expect("]", "to close the annotation")
        return kv

    # ------------------------------------------------------------------------------------------------ types

    def at_type_start(self) -> bool:
        """True when the current token can only start a type (a base type word or a declared type name)."""
        t = self.tok
        if t.kind != "ID":
            return t.kind == "." and self.peek().kind == "ID" and self.is_type_name(self.peek().text)
        if t.text in _BASE_TYPE_WORDS and t.text != "error":
            return True
        return self.is_type_name(t.text)

    def type_ref(self, allow_void: bool = False) -> ast.Type:
        """# grammar: typeRef : baseType | typeName [ '<' typeArgumentList '>' ] | tupleType
        #   | typeRef '[' expression ']'"""
        t = self.tok
        typ: ast.Type
        if t.kind == "ID" and t.text in ("bit", "int", "varbit"):
            self.advance()
            if self.accept("<"):
                width = self._type_width()
                self._close_angle()
            elif t.text == "bit":
                width = ast.IntLit(t.loc, 1, None, False, "1")
            elif t.text == "int":
                width = None
            else:
                raise self.error_here("'<' after 'varbit'")
            if t.text == "bit":
                assert width is not None
                typ = ast.BitType(t.loc, width)
            elif t.text == "int":
                typ = ast.IntType(t.loc, width)
            else:
                assert width is not None
                typ = ast.VarbitType(t.loc, width)
        elif t.kind == "ID" and t.text == "bool":
            self.advance()
            typ = ast.BoolType(t.loc)
        elif t.kind == "ID" and t.text == "error":
            self.advance()
            typ = ast.ErrorType(t.loc)
        elif t.kind == "ID" and t.text == "string":
            self.advance()
            typ = ast.StringType(t.loc)
        elif t.kind == "ID" and t.text == "match_kind":
            self.advance()
            typ = ast.MatchKindType(t.loc)
        elif t.kind == "ID" and t.text == "void":
            if not allow_void:
                raise self.error(t.loc, "'void' is only allowed as a return type")
            self.advance()
            return ast.VoidType(t.loc)
        elif t.kind == "ID" and t.text == "tuple":
            self.advance()
            self.expect("<", "after 'tuple'")
            elems = [self.type_arg()]
            while self.accept(","):
                elems.append(self.type_arg())
            self._close_angle()
            typ = ast.TupleType(t.loc, elems)
        elif t.kind == "DONTCARE":
            self.advance()
            typ = ast.DontCareType(t.loc)
        else:
            top = bool(self.accept("."))
            nt = self.tok
            if nt.kind != "ID" or (nt.text in RESERVED and nt.text not in _NAME_KEYWORDS):
                raise self.error_here("a type")
            self.advance()
            args: list[ast.Type] = []
            if self.at("<"):
                self.advance()
                args.append(self.type_arg())
                while self.accept(","):
                    args.append(self.type_arg())
                self._close_angle()
            typ = ast.TypeName(t.loc, nt.text, args, top)
        while self.at("["):
            lb = self.advance()
            size = self.expression()
            self.expect("]", "to close the header stack size")
            typ = ast.HeaderStackType(lb.loc, typ, size)
        return typ

    def _type_width(self) -> ast.Expr:
        """# grammar: width : INTEGER | '(' expression ')'   (p4c rejects a bare name: `bit<W>`)"""
        t = self.tok
        if t.kind == "INT":
            self.advance()
            value, width, signed = t.value  # type: ignore[misc]
            return ast.IntLit(t.loc, value, width, signed, t.text)
        if t.kind == "(":
            self.advance()
            e = self.expression()
            self.expect(")")
            return e
        if t.kind == "ID" and t.text not in RESERVED:
            raise self.error(t.loc, f"a width must be an integer or a parenthesised expression: write ({t.text})")
        raise self.error_here("a width")

    def type_arg(self) -> ast.Type:
        """# grammar: typeArg : typeRef | '_' | 'void'"""
        return self.type_ref(allow_void=True)

    def type_params(self) -> list[str]:
        """# grammar: optTypeParameters : [ '<' name { ',' name } '>' ]"""
        if not self.accept("<"):
            return []
        names = [self.name("a type parameter").text]
        while self.accept(","):
            names.append(self.name("a type parameter").text)
        self._close_angle()
        return names

    # ------------------------------------------------------------------------------------------------ parameters

    def param_list(self) -> list[ast.Param]:
        """# grammar: parameterList : '(' [ parameter { ',' parameter } ] ')'"""
        self.expect("(", "to start the parameter list")
        params: list[ast.Param] = []
        if not self.at(")"):
            params.append(self.param())
            while self.accept(","):
                params.append(self.param())
        self.expect(")", "to close the parameter list")
        return params

    def param(self) -> ast.Param:
        """# grammar: parameter : annotations? [ 'in' | 'out' | 'inout' ] typeRef name [ '=' expression ]"""
        annos = self.annotations()
        loc = self.tok.loc
        direction = None
        if self.tok.kind == "ID" and self.tok.text in _DIRECTIONS:
            direction = self.advance().text
        typ = self.type_ref()
        name = self.name("a parameter name")
        default = self.expression() if self.accept("=") else None
        return ast.Param(loc, name.text, typ, direction, default, annotations=annos)

    # ------------------------------------------------------------------------------------------------ declarations

    def const_decl(self, annos: list[ast.Annotation]) -> ast.ConstDecl:
        """# grammar: constantDeclaration : 'const' typeRef name '=' initializer ';'"""
        kw = self.expect_word("const")
        typ = self.type_ref()
        name = self.name("a constant name")
        self.expect("=", f"in the declaration of constant '{name.text}'")
        value = self.expression()
        self.expect_semi("constant declaration")
        return ast.ConstDecl(kw.loc, name.text, typ, value, annotations=annos)

    def extern_decl(self, annos: list[ast.Annotation]) -> ast.Decl:
        """# grammar: externDeclaration : 'extern' name optTypeParameters '{' { methodPrototype } '}'
        #   | 'extern' functionPrototype ';'"""
        kw = self.expect_word("extern")
        inner_annos = self.annotations()
        t = self.tok
        if t.kind == "ID" and t.text not in _BASE_TYPE_WORDS and self._is_extern_object():
            name = self.name("an extern name")
            self.declare_type(name.text)
            tparams = self.type_params()
            self._scopes.append(set(tparams))
            try:
                self.expect("{", f"to start the body of extern '{name.text}'")
                methods: list[ast.MethodDecl] = []
                while not self.accept("}"):
                    if self.at("EOF"):
                        raise self.error_here(f"'}}' to close extern '{name.text}'")
                    methods.append(self.method_prototype(name.text))
            finally:
                self._scopes.pop()
            return ast.ExternDecl(kw.loc, name.text, methods, tparams, annotations=annos + inner_annos)
        proto = self.function_prototype(annos + inner_annos, kw.loc)
        self.expect_semi("extern function declaration")
        return ast.ExternFunctionDecl(kw.loc, proto.name, proto, annotations=annos + inner_annos)

    def _is_extern_object(self) -> bool:
        """After `extern`: `Name {` or `Name<...> {` declares an extern object type."""
        j = self.i + 1
        if self.toks[j].kind == "{":
            return True
        if self.toks[j].kind != "<":
            return False
        depth = 0
        while j < len(self.toks):
            k = self.toks[j].kind
            if k == "<":
                depth += 1
            elif k == ">":
                depth -= 1
                if depth == 0:
                    return self.toks[j + 1].kind == "{"
            elif k in (";", "{", "}", "(", "EOF"):
                return False
            j += 1
        return False

    def method_prototype(self, extern_name: str) -> ast.MethodDecl:
        """# grammar: methodPrototype : annotations? ( 'abstract' functionPrototype | functionPrototype
        #   | TYPE_IDENTIFIER '(' parameterList ')' ) ';'"""
        annos = self.annotations()
        loc = self.tok.loc
        if self.at_word(extern_name) and self.peek().kind == "(":
            self.advance()
            params = self.param_list()
            self.expect_semi("constructor declaration")
            return ast.MethodDecl(loc, extern_name, None, params, annotations=annos)
        abstract = bool(self.accept_word("abstract"))
        proto = self.function_prototype(annos, loc)
        proto.is_abstract = abstract
        self.expect_semi("method declaration")
        return proto

    def function_prototype(self, annos: list[ast.Annotation], loc: SourceLoc) -> ast.MethodDecl:
        """# grammar: functionPrototype : typeOrVoid name optTypeParameters parameterList"""
        # The return type may use the function's own type parameters (`T f<T>()`), so look ahead for them.
        save = self.i
        self.speculate(lambda: self.type_ref(allow_void=True))
        name_tok = self.tok
        tparams: list[str] = []
        if name_tok.kind == "ID" and self.peek().kind == "<":
            self.i += 1
            tparams = self.type_params()
        self.i = save
        self._scopes.append(set(tparams))
        try:
            ret = self.type_ref(allow_void=True)
            name = self.name("a function name")
            self.type_params()
            params = self.param_list()
        finally:
            self._scopes.pop()
        return ast.MethodDecl(loc, name.text, ret, params, tparams, annotations=annos)

    def action_decl(self, annos: list[ast.Annotation]) -> ast.ActionDecl:
        """# grammar: actionDeclaration : 'action' name parameterList blockStatement"""
        kw = self.expect_word("action")
        name = self.name("an action name")
        params = self.param_list()
        body = self.block()
        return ast.ActionDecl(kw.loc, name.text, params, body, annotations=annos)

    def package_decl(self, annos: list[ast.Annotation]) -> ast.PackageTypeDecl:
        """# grammar: packageTypeDeclaration : 'package' name optTypeParameters parameterList ';'"""
        kw = self.expect_word("package")
        name = self.name("a package name")
        self.declare_type(name.text)
        tparams = self.type_params()
        self._scopes.append(set(tparams))
        try:
            params = self.param_list()
        finally:
            self._scopes.pop()
        self.expect_semi("package declaration")
        return ast.PackageTypeDecl(kw.loc, name.text, params, tparams, annotations=annos)

    def struct_like_decl(self, annos: list[ast.Annotation]) -> ast.Decl:
        """# grammar: headerTypeDeclaration | headerUnionDeclaration | structTypeDeclaration :
        #   ( 'header' | 'header_union' | 'struct' ) name optTypeParameters '{' { annotations? typeRef name ';' } '}'"""
        kw = self.advance()
        name = self.name(f"a {kw.text} name")
        self.declare_type(name.text)
        tparams = self.type_params()
        self._scopes.append(set(tparams))
        try:
            self.expect("{", f"to start the fields of {kw.text} '{name.text}'")
            fields: list[ast.Field] = []
            while not self.accept("}"):
                if self.at("EOF"):
                    raise self.error_here(f"'}}' to close {kw.text} '{name.text}'")
                fannos = self.annotations()
                floc = self.tok.loc
                ftype = self.type_ref()
                fname = self.name("a field name")
                self.expect_semi("field declaration")
                fields.append(ast.Field(floc, fname.text, ftype, annotations=fannos))
        finally:
            self._scopes.pop()
        cls = {"header": ast.HeaderDecl, "header_union": ast.HeaderUnionDecl, "struct": ast.StructDecl}[kw.text]
        return cls(kw.loc, name.text, fields, tparams, annotations=annos)

    def enum_decl(self, annos: list[ast.Annotation]) -> ast.EnumDecl:
        """# grammar: enumDeclaration : 'enum' [ typeRef ] name '{' member { ',' member } [','] '}'
        #   member : annotations? name [ '=' expression ]"""
        kw = self.expect_word("enum")
        underlying = None
        if not (self.tok.kind == "ID" and self.peek().kind == "{"):
            underlying = self.type_ref()
        name = self.name("an enum name")
        self.declare_type(name.text)
        self.expect("{", f"to start the members of enum '{name.text}'")
        members: list[ast.EnumMember] = []
        while not self.at("}"):
            mannos = self.annotations()
            m = self.name("an enum member")
            value = None
            if self.accept("="):
                value = self.expression()
            members.append(ast.EnumMember(m.loc, m.text, value, annotations=mannos))
            if not self.accept(","):
                break
        self.expect("}", f"to close enum '{name.text}'")
        return ast.EnumDecl(kw.loc, name.text, members, underlying, annotations=annos)

    def typedef_decl(self, annos: list[ast.Annotation]) -> ast.TypedefDecl:
        """# grammar: typedefDeclaration : ( 'typedef' | 'type' ) typeRef name ';'"""
        kw = self.advance()
        if self.tok.kind == "ID" and self.tok.text in ("header", "struct", "header_union", "enum"):
            raise self.error(self.tok.loc, f"unsupported: {kw.text} of an inline {self.tok.text} declaration")
        typ = self.type_ref()
        name = self.name("a type name")
        self.declare_type(name.text)
        self.expect_semi(f"{kw.text} declaration")
        return ast.TypedefDecl(kw.loc, name.text, typ, kw.text == "type", annotations=annos)

    def _id_list(self, what: str) -> list[ast.EnumMember]:
        self.expect("{", f"to start the {what} list")
        members: list[ast.EnumMember] = []
        while not self.at("}"):
            m = self.name(f"an {what} name" if what[0] in "aeiou" else f"a {what} name")
            members.append(ast.EnumMember(m.loc, m.text))
            if not self.accept(","):
                break
        self.expect("}", f"to close the {what} list")
        return members

    def error_decl(self, annos: list[ast.Annotation]) -> ast.ErrorDecl:
        """# grammar: errorDeclaration : 'error' '{' name { ',' name } '}'"""
        kw = self.expect_word("error")
        return ast.ErrorDecl(kw.loc, "error", self._id_list("error"), annotations=annos)

    def match_kind_decl(self, annos: list[ast.Annotation]) -> ast.MatchKindDecl:
        """# grammar: matchKindDeclaration : 'match_kind' '{' name { ',' name } '}'"""
        kw = self.expect_word("match_kind")
        return ast.MatchKindDecl(kw.loc, "match_kind", self._id_list("match kind"), annotations=annos)

    def function_or_instantiation(self, annos: list[ast.Annotation]) -> ast.Decl:
        """# grammar: functionDeclaration : typeOrVoid name optTypeParameters parameterList blockStatement
        #   instantiation : typeRef '(' argumentList ')' name ';'"""
        loc = self.tok.loc
        # `T f<X>(...)`: pre-scan for the function's type parameters so the return type can use them.
        save = self.i
        self.speculate(lambda: self.type_ref(allow_void=True))
        tparams: list[str] = []
        if self.tok.kind == "ID" and self.peek().kind == "<":
            self.i += 1
            got = self.speculate(self.type_params)
            tparams = got or []
        self.i = save
        self._scopes.append(set(tparams))
        try:
            typ = self.type_ref(allow_void=True)
            if self.at("("):
                if isinstance(typ, ast.VoidType):
                    raise self.error_here("a function name")
                return self.instantiation_rest(annos, loc, typ)
            name = self.name("a function or instance name")
            self.type_params()
            if not self.at("("):
                if self.at("=") or self.at(";"):
                    raise self.error(loc, "unsupported: global variable declarations (use 'const')")
                raise self.error_here("'(' after the function name")
            params = self.param_list()
            body = self.block()
        finally:
            self._scopes.pop()
        return ast.FunctionDecl(loc, name.text, typ, params, body, tparams, annotations=annos)

    def instantiation_rest(self, annos: list[ast.Annotation], loc: SourceLoc, typ: ast.Type) -> ast.Instantiation:
        """# grammar: instantiation : typeRef '(' argumentList ')' name [ '=' objInitializer ] ';'"""
        args = self.arguments()
        name = self.name("an instance name")
        if self.at("="):
            raise self.error(self.tok.loc, "unsupported: extern object initializers")
        self.expect_semi("instantiation")
        return ast.Instantiation(loc, name.text, typ, args, annotations=annos)

    # ------------------------------------------------------------------------------------------------ parsers

    def parser_decl(self, annos: list[ast.Annotation]) -> ast.Decl:
        """# grammar: parserTypeDeclaration : 'parser' name optTypeParameters parameterList ';'
        #   parserDeclaration : 'parser' name optTypeParameters parameterList [ parameterList ]
        #                       '{' { parserLocalElement } { parserState } '}'"""
        kw = self.expect_word("parser")
        name = self.name("a parser name")
        self.declare_type(name.text)
        tparams = self.type_params()
        self._scopes.append(set(tparams))
        try:
            params = self.param_list()
            if self.at(";"):
                self.advance()
                return ast.ParserTypeDecl(kw.loc, name.text, params, tparams, annotations=annos)
            ctor = self.param_list() if self.at("(") else []
            self.expect("{", f"to start the body of parser '{name.text}'")
            locals_: list[ast.Decl] = []
            states: list[ast.ParserState] = []
            while not self.accept("}"):
                if self.at("EOF"):
                    raise self.error_here(f"'}}' to close parser '{name.text}'")
                lannos = self.annotations()
                if self.at_word("state"):
                    states.append(self.parser_state(lannos))
                elif states:
                    raise self.error_here("'state' (local declarations must precede the states)")
                else:
                    locals_.append(self.local_decl(lannos, in_parser=True))
        finally:
            self._scopes.pop()
        if not states:
            raise self.error(kw.loc, f"parser '{name.text}' has no states")
        return ast.ParserDecl(kw.loc, name.text, params, locals_, states, ctor, tparams, annotations=annos)

    def parser_state(self, annos: list[ast.Annotation]) -> ast.ParserState:
        """# grammar: parserState : 'state' name '{' { parserStatement } [ transitionStatement ] '}'
        #   transitionStatement : 'transition' ( name ';' | selectExpression )"""
        kw = self.expect_word("state")
        name = self.name("a state name")
        self.expect("{", f"to start state '{name.text}'")
        stmts: list[ast.Stmt] = []
        transition: ast.Expr | None = None
        while not self.accept("}"):
            if self.at("EOF"):
                raise self.error_here(f"'}}' to close state '{name.text}'")
            if self.at_word("transition"):
                self.advance()
                if self.at_word("select"):
                    transition = self.select_expression()
                else:
                    target = self.name("a state name or 'select' after 'transition'")
                    transition = ast.Name(target.loc, target.text)
                    self.expect_semi("transition")
                if not self.at("}"):
                    raise self.error(self.tok.loc, f"expected '}}' after the transition statement, found "
                                     f"{_describe(self.tok)}")
                continue
            stmts.append(self.statement())
        return ast.ParserState(kw.loc, name.text, stmts, transition, annotations=annos)

    def select_expression(self) -> ast.SelectExpr:
        """# grammar: selectExpression : 'select' '(' expressionList ')' '{' { selectCase } '}'
        #   selectCase : keysetExpression ':' name ';'"""
        kw = self.expect_word("select")
        self.expect("(", "after 'select'")
        keys = self.expression_list(lambda: self.at(")"))
        self.expect(")", "to close the select keys")
        self.expect("{", "to start the select cases")
        cases: list[ast.SelectCase] = []
        while not self.accept("}"):
            if self.at("EOF"):
                raise self.error_here("'}' to close the select cases")
            cloc = self.tok.loc
            ks = self.keyset_expression()
            self.expect(":", "after the select case keyset")
            st = self.name("a state name")
            self.expect_semi("select case")
            cases.append(ast.SelectCase(cloc, ks, ast.Name(st.loc, st.text)))
        return ast.SelectExpr(kw.loc, keys, cases)

    def keyset_expression(self) -> list[ast.Expr]:
        """# grammar: keysetExpression : simpleKeyset | '(' simpleKeyset { ',' simpleKeyset } ')'"""
        if self.at("("):
            def tuple_keyset() -> list[ast.Expr]:
                self.advance()
                items = [self.simple_keyset()]
                while self.accept(","):
                    items.append(self.simple_keyset())
                self.expect(")")
                if not self.at(":"):
                    raise self.error_here("':'")
                return items
            got = self.speculate(tuple_keyset)
            if got is not None:
                return got
        return [self.simple_keyset()]

    def simple_keyset(self) -> ast.Expr:
        """# grammar: simpleKeyset : 'default' | '_' | expression [ '&&&' expression | '..' expression ]"""
        t = self.tok
        if t.kind == "ID" and t.text == "default":
            self.advance()
            return ast.DefaultExpr(t.loc)
        if t.kind == "DONTCARE":
            self.advance()
            return ast.DontCare(t.loc)
        e = self.expression()
        if self.at("&&&"):
            op = self.advance()
            return ast.MaskExpr(op.loc, e, self.expression())
        if self.at(".."):
            op = self.advance()
            return ast.RangeExpr(op.loc, e, self.expression())
        return e

    # ------------------------------------------------------------------------------------------------ controls

    def control_decl(self, annos: list[ast.Annotation]) -> ast.Decl:
        """# grammar: controlTypeDeclaration : 'control' name optTypeParameters parameterList ';'
        #   controlDeclaration : 'control' name optTypeParameters parameterList [ parameterList ]
        #                        '{' { controlLocalDeclaration } 'apply' blockStatement '}'"""
        kw = self.expect_word("control")
        name = self.name("a control name")
        self.declare_type(name.text)
        tparams = self.type_params()
        self._scopes.append(set(tparams))
        try:
            params = self.param_list()
            if self.at(";"):
                self.advance()
                return ast.ControlTypeDecl(kw.loc, name.text, params, tparams, annotations=annos)
            ctor = self.param_list() if self.at("(") else []
            self.expect("{", f"to start the body of control '{name.text}'")
            locals_: list[ast.Decl] = []
            body: ast.BlockStmt | None = None
            while not self.at("}"):
                if self.at("EOF"):
                    raise self.error_here(f"'}}' to close control '{name.text}'")
                lannos = self.annotations()
                if self.at_word("apply") and self.peek().kind == "{":
                    if body is not None:
                        raise self.error(self.tok.loc, f"control '{name.text}' has two apply blocks")
                    self.advance()
                    body = self.block(lannos)
                    continue
                if body is not None:
                    raise self.error_here("'}' after the apply block")
                locals_.append(self.local_decl(lannos, in_parser=False))
            self.advance()
        finally:
            self._scopes.pop()
        if body is None:
            raise self.error(kw.loc, f"control '{name.text}' has no apply block")
        return ast.ControlDecl(kw.loc, name.text, params, locals_, body, ctor, tparams, annotations=annos)

    def local_decl(self, annos: list[ast.Annotation], in_parser: bool) -> ast.Decl:
        """# grammar: controlLocalDeclaration : constantDeclaration | actionDeclaration | tableDeclaration
        #   | instantiation | variableDeclaration
        #   parserLocalElement : constantDeclaration | instantiation | variableDeclaration | valueSetDeclaration"""
        t = self.tok
        if t.kind == "ID":
            if t.text == "const":
                return self.const_decl(annos)
            if t.text == "action" and not in_parser:
                return self.action_decl(annos)
            if t.text == "table" and not in_parser:
                return self.table_decl(annos)
            if t.text == "value_set" and in_parser:
                return self.value_set_decl(annos)
            if t.text in ("action", "table"):
                raise self.error(t.loc, f"'{t.text}' declarations are not allowed in a parser")
            if t.text == "value_set":
                raise self.error(t.loc, "'value_set' declarations are only allowed in a parser")
        if not self.at_type_start() and not (t.kind == "ID" and self.peek().kind in ("ID", "<", "(")):
            where = "parser" if in_parser else "control"
            raise self.error_here(f"a {where} local declaration")
        loc = t.loc
        typ = self.type_ref()
        if self.at("("):
            return self.instantiation_rest(annos, loc, typ)
        name = self.name("a variable name")
        init = self.expression() if self.accept("=") else None
        self.expect_semi("variable declaration")
        return ast.VarDecl(loc, name.text, typ, init, annotations=annos)

    def value_set_decl(self, annos: list[ast.Annotation]) -> ast.ValueSetDecl:
        """# grammar: valueSetDeclaration : 'value_set' '<' typeArg '>' '(' expression ')' name ';'"""
        kw = self.expect_word("value_set")
        self.expect("<", "after 'value_set'")
        elem = self.type_arg()
        self._close_angle()
        self.expect("(", "before the value_set size")
        size = self.expression()
        self.expect(")", "after the value_set size")
        name = self.name("a value_set name")
        self.expect_semi("value_set declaration")
        return ast.ValueSetDecl(kw.loc, name.text, elem, size, annotations=annos)

    def table_decl(self, annos: list[ast.Annotation]) -> ast.TableDecl:
        """# grammar: tableDeclaration : 'table' name '{' { tableProperty } '}'"""
        kw = self.expect_word("table")
        name = self.name("a table name")
        self.expect("{", f"to start the properties of table '{name.text}'")
        props: list[ast.TableProperty] = []
        while not self.accept("}"):
            if self.at("EOF"):
                raise self.error_here(f"'}}' to close table '{name.text}'")
            props.append(self.table_property())
        return ast.TableDecl(kw.loc, name.text, props, annotations=annos)

    def table_property(self) -> ast.TableProperty:
        """# grammar: tableProperty : 'key' '=' '{' { keyElement } '}' | 'actions' '=' '{' { actionRef ';' } '}'
        #   | [ 'const' ] 'entries' '=' '{' { entry } '}' | annotations? [ 'const' ] name '=' initializer ';'"""
        annos = self.annotations()
        loc = self.tok.loc
        is_const = bool(self.accept_word("const"))
        pname = self.name("a table property")
        self.expect("=", f"after table property '{pname.text}'")
        p = pname.text
        if p == "key":
            self.expect("{", "to start the key")
            elems: list[ast.KeyElement] = []
            while not self.accept("}"):
                if self.at("EOF"):
                    raise self.error_here("'}' to close the key")
                eloc = self.tok.loc
                e = self.expression()
                self.expect(":", "between the key expression and its match kind")
                mk = self.name("a match kind")
                kannos = self.annotations()
                self.expect_semi("key element")
                elems.append(ast.KeyElement(eloc, e, mk.text, annotations=kannos))
            return ast.KeyProperty(loc, p, elems, annotations=annos, is_const=is_const)
        if p == "actions":
            self.expect("{", "to start the action list")
            refs: list[ast.ActionRef] = []
            while not self.accept("}"):
                if self.at("EOF"):
                    raise self.error_here("'}' to close the action list")
                aannos = self.annotations()
                refs.append(self.action_ref(aannos))
                self.expect_semi("action in the action list")
            return ast.ActionsProperty(loc, p, refs, annotations=annos, is_const=is_const)
        if p == "entries":
            self.expect("{", "to start the entries")
            entries: list[ast.Entry] = []
            while not self.accept("}"):
                if self.at("EOF"):
                    raise self.error_here("'}' to close the entries")
                entries.append(self.entry())
            return ast.EntriesProperty(loc, p, entries, annotations=annos, is_const=is_const)
        if p == "default_action":
            ref = self.action_ref([])
            self.expect_semi("default_action")
            return ast.DefaultActionProperty(loc, p, ref, annotations=annos, is_const=is_const)
        value = self.expression()
        self.expect_semi(f"table property '{p}'")
        return ast.ValueProperty(loc, p, value, annotations=annos, is_const=is_const)

    def action_ref(self, annos: list[ast.Annotation]) -> ast.ActionRef:
        """# grammar: actionRef : [ '.' ] name [ '(' argumentList ')' ]"""
        loc = self.tok.loc
        top = bool(self.accept("."))
        n = self.name("an action name")
        args = self.arguments() if self.at("(") else None
        return ast.ActionRef(loc, ast.Name(n.loc, n.text, top), args, annotations=annos)

    def entry(self) -> ast.Entry:
        """# grammar: entry : annotations? [ 'const' ] [ 'priority' '=' expression ':' ] keysetExpression ':'
        #   actionRef annotations? ';'"""
        annos = self.annotations()
        loc = self.tok.loc
        is_const = bool(self.accept_word("const"))
        priority = None
        if self.at_word("priority") and self.peek().kind == "=":
            self.advance()
            self.advance()
            priority = self.expression()
            self.expect(":", "after the entry priority")
        keys = self.keyset_expression()
        self.expect(":", "between the entry keys and its action")
        ref = self.action_ref([])
        annos += self.annotations()
        self.expect_semi("table entry")
        return ast.Entry(loc, keys, ref, priority, is_const, annotations=annos)

    # ------------------------------------------------------------------------------------------------ statements

    def block(self, annos: list[ast.Annotation] | None = None) -> ast.BlockStmt:
        """# grammar: blockStatement : annotations? '{' { statementOrDeclaration } '}'"""
        lb = self.expect("{", "to start a block")
        stmts: list[ast.Stmt] = []
        while not self.accept("}"):
            if self.at("EOF"):
                raise self.error(lb.loc, "missing '}' to close this block")
            stmts.append(self.statement())
        return ast.BlockStmt(lb.loc, stmts, annotations=annos or [])

    def statement(self) -> ast.Stmt:
        """# grammar: statementOrDeclaration : variableDeclaration | constantDeclaration | statement
        #   statement : assignmentOrMethodCallStatement | conditionalStatement | emptyStatement | blockStatement
        #     | exitStatement | returnStatement | switchStatement"""
        annos = self.annotations()
        t = self.tok
        if t.kind == "{":
            return self.block(annos)
        if annos and not self._at_var_decl() and not (t.kind == "ID" and t.text == "const"):
            raise self.error(annos[0].loc, "annotations are only allowed on blocks and declarations here")
        if t.kind == ";":
            self.advance()
            return ast.EmptyStmt(t.loc)
        if t.kind == "ID":
            w = t.text
            if w == "if":
                return self.if_statement()
            if w == "switch":
                return self.switch_statement()
            if w == "exit":
                self.advance()
                self.expect_semi("'exit'")
                return ast.ExitStmt(t.loc)
            if w == "return":
                self.advance()
                value = None if self.at(";") else self.expression()
                self.expect_semi("return statement")
                return ast.ReturnStmt(t.loc, value)
            if w == "const":
                return self.const_decl(annos)
            if w == "for" and self.peek().kind == "(":
                return self.for_statement()
            if w in ("break", "continue") and self.peek().kind == ";":
                self.advance()
                self.advance()
                return ast.BreakStmt(t.loc) if w == "break" else ast.ContinueStmt(t.loc)
            if w == "transition":
                raise self.error(t.loc, "'transition' is only allowed as the last statement of a parser state")
            if w in ("action", "table", "state", "control", "parser", "header", "struct") and self.peek().kind == "ID":
                raise self.error(t.loc, f"'{w}' declarations are not allowed inside a block")
            if self._at_var_decl():
                typ = self.type_ref()
                if self.at("("):
                    raise self.error(t.loc, "instantiations are only allowed at the top level of a control or parser")
                name = self.name("a variable name")
                init = self.expression() if self.accept("=") else None
                self.expect_semi("variable declaration")
                return ast.VarDecl(t.loc, name.text, typ, init, annotations=annos)
        return self.assignment_or_call()

    def _at_var_decl(self) -> bool:
        """A statement starting with a type: a base type word or a declared type name not used as `T.x`/`T(...)`."""
        t = self.tok
        if t.kind != "ID":
            return False
        if t.text in ("bit", "int", "varbit", "bool", "string", "tuple"):
            return True
        if t.text == "error":
            return self.peek().kind == "ID"
        if self.is_type_name(t.text):
            return self.peek().kind in ("ID", "<", "[")
        # An undeclared type name: `Foo x;` is still a declaration (the checker reports the unknown type).
        nxt = self.peek()
        return nxt.kind == "ID" and t.text not in RESERVED and nxt.text not in RESERVED

    def assignment_or_call(self) -> ast.Stmt:
        """# grammar: assignmentOrMethodCallStatement : lvalue '=' expression ';' | expression '(' arguments ')' ';'"""
        start = self.tok
        e = self.postfix_expression()
        if self.at("="):
            self.advance()
            rhs = self.expression()
            self.expect_semi("assignment")
            return ast.AssignStmt(start.loc, e, rhs)
        if isinstance(e, ast.MethodCall):
            self.expect_semi("method call")
            return ast.MethodCallStmt(start.loc, e)
        op = self.tok
        compound = (op.kind in ("+", "-", "*", "|", "&", "^", "|+|", "|-|", "<<") and self.peek().kind == "="
                    and self.peek().pos == op.pos + len(op.kind)) or \
            (op.kind == ">" and self.peek().kind == ">=" and self.peek().pos == op.pos + 1)
        # a target holding a call (`a[f(x)] += 1`) is one node on both sides, so the call is inlined (and its index
        # saved) once, as p4c evaluates the target once; any other target is copied
        target = e if compound and any(isinstance(n, ast.MethodCall) for n in ast.walk(e)) else None
        if op.kind in ("+", "-", "*", "|", "&", "^", "|+|", "|-|", "<<") and self.peek().kind == "=" \
                and self.peek().pos == op.pos + len(op.kind):
            # `lhs op= rhs` is `lhs = lhs op rhs` (P4_16 1.2.2 compound assignment)
            self.advance()
            self.advance()
            rhs = self.expression()
            self.expect_semi("assignment")
            return ast.AssignStmt(start.loc, e, ast.Binary(op.loc, op.kind, target or copy.deepcopy(e), rhs))
        if compound and op.kind == ">":  # `>>=` arrives as `>` `>=` (a `>>` token would break nested generics)
            self.advance()
            self.advance()
            rhs = self.expression()
            self.expect_semi("assignment")
            return ast.AssignStmt(start.loc, e, ast.Binary(op.loc, ">>", target or copy.deepcopy(e), rhs))
        if isinstance(e, ast.ConstructorCall):
            raise self.error(start.loc, "instantiations are only allowed at the top level of a control or parser")
        raise self.error(self.tok.loc, f"expected '=' or a method call in statement, found {_describe(self.tok)}")

    def if_statement(self) -> ast.IfStmt:
        """# grammar: conditionalStatement : 'if' '(' expression ')' statement [ 'else' statement ]"""
        kw = self.expect_word("if")
        self.expect("(", "after 'if'")
        cond = self.expression()
        self.expect(")", "to close the if condition")
        then = self.statement()
        else_ = self.statement() if self.accept_word("else") else None
        return ast.IfStmt(kw.loc, cond, then, else_)

    def for_statement(self) -> ast.ForStmt:
        """# grammar: forStatement : 'for' '(' [ forInit { ',' forInit } ] ';' expression ';'
        #     [ forUpdate { ',' forUpdate } ] ')' statement
        #   forInit : variableDeclaration | assignmentOrMethodCallStatement (each without ';')
        #   forUpdate : assignmentOrMethodCallStatement (without ';')"""
        kw = self.expect_word("for")
        self.expect("(", "after 'for'")
        init = self.for_clauses(";", declarations=True)
        self.expect(";", "after the initializers of a for loop")
        cond = self.expression()
        self.expect(";", "after the condition of a for loop")
        update = self.for_clauses(")", declarations=False)
        self.expect(")", "to close the header of a for loop")
        body = self.statement()
        return ast.ForStmt(kw.loc, init, cond, update, body)

    def for_clauses(self, end: str, declarations: bool) -> list[ast.Stmt]:
        """A `for` header's comma-separated initializers or updates, up to (not including) `end`."""
        out: list[ast.Stmt] = []
        while not self.at(end):
            out.append(self.for_clause(declarations))
            if not self.accept(","):
                break
        return out

    def for_clause(self, declarations: bool) -> ast.Stmt:
        """One initializer or update of a `for` header: a statement without its `;`."""
        t = self.tok
        self.for_header = True
        try:
            if declarations and self._at_var_decl():
                typ = self.type_ref()
                name = self.name("a variable name")
                if self.at_word("in"):  # p4c's BMv2 back end: "BMV2 does not support for-in loops"
                    raise self.error(t.loc, "unsupported: 'for (... in ...)' loops (p4c-bm2-ss refuses them too)")
                init = self.expression() if self.accept("=") else None
                return ast.VarDecl(t.loc, name.text, typ, init)
            return self.assignment_or_call()
        finally:
            self.for_header = False

    def switch_statement(self) -> ast.SwitchStmt:
        """# grammar: switchStatement : 'switch' '(' expression ')' '{' { switchLabel ':' [ blockStatement ] } '}'
        #   switchLabel : 'default' | name | expression"""
        kw = self.expect_word("switch")
        self.expect("(", "after 'switch'")
        expr = self.expression()
        self.expect(")", "to close the switch expression")
        self.expect("{", "to start the switch cases")
        cases: list[ast.SwitchCase] = []
        while not self.accept("}"):
            if self.at("EOF"):
                raise self.error_here("'}' to close the switch")
            t = self.tok
            label: ast.Expr
            if self.accept_word("default"):
                label = ast.DefaultExpr(t.loc)
            else:
                label = self.expression()
            self.expect(":", "after the switch label")
            body = self.block() if self.at("{") else None
            cases.append(ast.SwitchCase(t.loc, label, body))
        return ast.SwitchStmt(kw.loc, expr, cases)

    # ------------------------------------------------------------------------------------------------ expressions

    def expression_list(self, at_end: Callable[[], bool]) -> list[ast.Expr]:
        """# grammar: expressionList : [ expression { ',' expression } ]"""
        items: list[ast.Expr] = []
        if at_end():
            return items
        items.append(self.expression())
        while self.accept(","):
            items.append(self.expression())
        return items

    def arguments(self) -> list[ast.Expr]:
        """# grammar: '(' argumentList ')' ; argument : expression | name '=' expression | '_'"""
        self.expect("(", "to start the arguments")
        args: list[ast.Expr] = []
        if not self.at(")"):
            while True:
                t = self.tok
                if t.kind == "DONTCARE" and self.peek().kind in (",", ")"):
                    self.advance()
                    args.append(ast.DontCare(t.loc))
                elif t.kind == "ID" and self.peek().kind == "=":
                    self.advance()
                    self.advance()
                    args.append(ast.NamedArg(t.loc, t.text, self.expression()))
                else:
                    args.append(self.expression())
                if not self.accept(","):
                    break
        self.expect(")", "to close the arguments")
        return args

    def expression(self) -> ast.Expr:
        """# grammar: expression : binaryExpression [ '?' expression ':' expression ]"""
        cond = self.binary()
        if self.at("?"):
            q = self.advance()
            then = self.expression()
            self.expect(":", "in the conditional expression")
            else_ = self.expression()
            return ast.Ternary(q.loc, cond, then, else_)
        return cond

    def _binary_op(self) -> str | None:
        t = self.tok
        k = t.kind
        if k == ">":
            nxt = self.peek()
            if nxt.kind == ">" and nxt.pos == t.pos + 1:
                return ">>"
            return ">"
        return k

    def binary(self, min_prec: int = 1) -> ast.Expr:
        """# grammar: binaryExpression : unaryExpression { binop unaryExpression } (precedence climbing)"""
        left = self.unary()
        while True:
            op = self._binary_op()
            prec = _BINARY_PRECEDENCE.get(op) if op is not None else None
            if prec is None or prec < min_prec:
                return left
            t = self.advance()
            if op == ">>":
                self.advance()
            right = self.binary(prec + 1)
            left = ast.Binary(t.loc, op, left, right)

    def unary(self) -> ast.Expr:
        """# grammar: unaryExpression : ( '!' | '~' | '-' | '+' ) unaryExpression | '(' typeRef ')' unaryExpression
        #   | postfixExpression"""
        t = self.tok
        if t.kind in ("!", "~", "-", "+"):
            self.advance()
            return ast.Unary(t.loc, t.kind, self.unary())
        if t.kind == "(" and self._at_cast():
            self.advance()
            typ = self.type_ref()
            self.expect(")", "to close the cast type")
            return ast.Cast(t.loc, typ, self.unary())
        return self.postfix_expression()

    def _at_cast(self) -> bool:
        """After `(`: a type followed by `)` is a cast."""
        nxt = self.peek()
        if nxt.kind != "ID":
            return False
        if nxt.text in ("bit", "int", "varbit", "bool", "string", "tuple"):
            return True
        if not self.is_type_name(nxt.text):
            return False
        # `(MyEnum.A)` is a parenthesised expression; `(T)` or `(T<...>)` or `(T[2])` a cast.
        after = self.peek(2)
        return after.kind in (")", "<", "[")

    def postfix_expression(self) -> ast.Expr:
        """# grammar: postfixExpression : primary { '.' member | '[' expression [ ':' expression ] ']'
        #   | [ '<' typeArgs '>' ] '(' argumentList ')' }"""
        start = self.tok.loc
        e = self.primary()
        while True:
            t = self.tok
            if t.kind == ".":
                self.advance()
                m = self.tok
                if m.kind != "ID":
                    raise self.error_here("a member name after '.'")
                self.advance()
                e = ast.Member(m.loc, e, m.text)
            elif t.kind == "[":
                self.advance()
                idx = self.expression()
                if self.accept(":"):
                    lo = self.expression()
                    self.expect("]", "to close the slice")
                    e = ast.Slice(t.loc, e, idx, lo)
                else:
                    self.expect("]", "to close the index")
                    e = ast.Index(t.loc, e, idx)
            elif t.kind == "(":
                args = self.arguments()
                e = ast.MethodCall(start, e, args)
            elif t.kind == "<" and isinstance(e, (ast.Name, ast.Member)):
                targs = self.speculate(self._call_type_args)
                if targs is None:
                    return e
                args = self.arguments()
                e = ast.MethodCall(start, e, args, targs)
            else:
                return e

    def _call_type_args(self) -> list[ast.Type]:
        self.expect("<")
        targs = [self.type_arg()]
        while self.accept(","):
            targs.append(self.type_arg())
        self.expect(">")
        if not self.at("("):
            raise self.error_here("'('")
        return targs

    def primary(self) -> ast.Expr:
        """# grammar: primary : INTEGER | STRING_LITERAL | 'true' | 'false' | [ '.' ] name | typeName '(' args ')'
        #   | '{' expressionList '}' | '{' name '=' expression { ',' ... } '}' | '(' expression ')' | 'error' | '_'"""
        t = self.tok
        k = t.kind
        if k == "INT":
            self.advance()
            value, width, signed = t.value  # type: ignore[misc]
            return ast.IntLit(t.loc, value, width, signed, t.text)
        if k == "ID":
            w = t.text
            if w == "true" or w == "false":
                self.advance()
                return ast.BoolLit(t.loc, w == "true")
            if w == "error":
                self.advance()
                return ast.Name(t.loc, "error")
            if w in ("bit", "int", "varbit", "bool", "tuple"):
                typ = self.type_ref()
                return ast.TypeExpr(t.loc, typ)
            if w == "this":
                raise self.error(t.loc, "unsupported: 'this'")
            if w in RESERVED and w not in _NAME_KEYWORDS:
                raise self.error_here("an expression")
            if self.is_type_name(w):
                nxt = self.peek()
                if nxt.kind == "(":
                    typ = self.type_ref()
                    return ast.ConstructorCall(t.loc, typ, self.arguments())
                if nxt.kind == "<":
                    got = self.speculate(lambda: self._constructor_type())
                    if got is not None:
                        return ast.ConstructorCall(t.loc, got, self.arguments())
            self.advance()
            return ast.Name(t.loc, w)
        if k == "STRING":
            self.advance()
            return ast.StringLit(t.loc, t.value)  # type: ignore[arg-type]
        if k == ".":
            self.advance()
            n = self.name("a name after '.'")
            return ast.Name(t.loc, n.text, True)
        if k == "(":
            self.advance()
            e = self.expression()
            self.expect(")", "to close the parenthesis")
            return e
        if k == "{":
            return self.brace_expression()
        if k == "DONTCARE":
            self.advance()
            return ast.DontCare(t.loc)
        raise self.error_here("an expression")

    def _constructor_type(self) -> ast.Type:
        typ = self.type_ref()
        if not self.at("("):
            raise self.error_here("'('")
        return typ

    def brace_expression(self) -> ast.Expr:
        """# grammar: '{' [ expression { ',' expression } ] '}' | '{' name '=' expression { ',' ... } '}'"""
        lb = self.expect("{")
        if self.tok.kind == "ID" and self.peek().kind == "=":
            fields: list[ast.NamedArg] = []
            while not self.at("}"):
                n = self.name("a field name")
                self.expect("=", "after the field name")
                fields.append(ast.NamedArg(n.loc, n.text, self.expression()))
                if not self.accept(","):
                    break
            self.expect("}", "to close the struct expression")
            return ast.StructExpr(lb.loc, fields)
        items: list[ast.Expr] = []
        while not self.at("}"):
            items.append(self.expression())
            if not self.accept(","):
                break
        self.expect("}", "to close the list expression")
        return ast.ListExpr(lb.loc, items)


# ---------------------------------------------------------------------------------------------------- entry points


def parse_preprocessed(text: str, file: str = "<string>", diags: Diagnostics | None = None,
                       types: Iterable[str] = ()) -> ast.Program:
    """Parse already preprocessed P4 `text` (may contain `#line` markers); raise CompileError on errors.

    Without the preludes, names such as `packet_in` are not known types: pass them in `types` if needed.
    """
    diags = diags if diags is not None else Diagnostics()
    diags.sources.setdefault(file, text)
    tokens = tokenize(text, file, diags)
    return Parser(tokens, diags, set(types)).parse_program()


def parse_file(path: str, include_dirs: Iterable[str] = (), defines: Mapping[str, str] | Iterable[str] = (),
               diags: Diagnostics | None = None) -> ast.Program:
    """Preprocess and parse the P4 program at `path` (the preludes come in through its `#include`s)."""
    return parse_source(None, path, include_dirs, defines, diags)


def parse_source(text: str | None, name: str = "<string>", include_dirs: Iterable[str] = (),
                 defines: Mapping[str, str] | Iterable[str] = (), diags: Diagnostics | None = None) -> ast.Program:
    """Preprocess and parse P4 source `text` standing for file `name` (read from `name` if `text` is None).

    `#include "x"` is searched relative to `name`'s directory, then `include_dirs`, then compiler/include/.
    """
    from compiler.preprocess import preprocess

    diags = diags if diags is not None else Diagnostics()
    pre = preprocess(name, include_dirs, defines, diags, text=text)
    tokens = tokenize(pre, name, diags)
    return Parser(tokens, diags).parse_program()
