"""Direct application of a control or parser type (P4_16 spec §15.1): `C.apply(args)` where `C` names a control
or parser declaration, not an instance, applies an anonymous instance of it. As p4c's InstantiateDirectCalls does,
each such call gets an instance `C_inst` (`@name("C")`, so control-plane names are the type's) declared in the
enclosing control or parser, and the call applies that instance. Runs on the syntax tree, before type checking.
"""

from __future__ import annotations

from compiler import ast

__all__ = ["instantiate_direct_calls", "name_table_implementations"]


def instantiate_direct_calls(program: ast.Program) -> None:
    """Rewrite every direct `Type.apply(...)` of the program in place."""
    blocks = {d.name: d for d in program.decls if isinstance(d, (ast.ControlDecl, ast.ParserDecl))}
    taken = {d.name for d in program.decls}
    for d in program.decls:
        if not isinstance(d, (ast.ControlDecl, ast.ParserDecl)):
            continue
        shadowed = {p.name for p in d.params + d.ctor_params} | {x.name for x in d.locals}
        taken |= {x.name for x in d.locals}
        body: list[ast.Node] = [d.body] if isinstance(d, ast.ControlDecl) else list(d.states)
        added: list[ast.Decl] = []
        for root in body:
            for n in ast.walk(root):
                if not (isinstance(n, ast.MethodCall) and isinstance(n.callee, ast.Member)
                        and n.callee.member == "apply" and isinstance(n.callee.expr, ast.Name)):
                    continue
                target = n.callee.expr
                sub = blocks.get(target.name)
                if sub is None or target.name in shadowed:
                    continue
                name = _fresh(f"{target.name}_inst", taken)
                loc = target.loc
                added.append(ast.Instantiation(loc, name, ast.TypeName(loc, target.name), [],
                                               annotations=[ast.Annotation(loc, "name",
                                                                           [ast.StringLit(loc, target.name)])]))
                n.callee.expr = ast.Name(loc, name)
        d.locals[:0] = added


def _fresh(base: str, taken: set[str]) -> str:
    name, k = base, 0
    while name in taken:
        k += 1
        name = f"{base}_{k}"
    taken.add(name)
    return name


def name_table_implementations(program: ast.Program) -> list[tuple[ast.SourceLoc, str]]:
    """A table's `@name("ap") implementation = action_profile(128);` becomes an instance of the control named `ap`
    (p4c names the profile after the annotation, unprefixed) and the property names it. Without the annotation p4c
    names the BMv2 profile `action_profile_<n>` and compiles the JSON, but refuses to write P4Info: returned are those
    P4Runtime errors (where, p4c's message), for whoever asks for a P4Info."""
    taken = {d.name for d in program.decls}
    anonymous = 0
    p4runtime_errors: list[tuple[ast.SourceLoc, str]] = []
    for d in program.decls:
        if not isinstance(d, ast.ControlDecl):
            continue
        taken |= {x.name for x in d.locals}
        added: list[ast.Decl] = []
        for t in d.locals:
            if not isinstance(t, ast.TableDecl):
                continue
            for p in t.properties:
                a = p.annotation("name")
                if not (p.name == "implementation" and isinstance(p, ast.ValueProperty)
                        and isinstance(p.value, ast.ConstructorCall)):
                    continue
                loc = p.value.loc
                if a is not None and a.string_arg():
                    label = a.string_arg().lstrip(".")
                else:  # p4c-bm2-ss's refMap->newName("action_profile"): the extern's own name is taken
                    label = f"action_profile_{anonymous}"
                    anonymous += 1
                    p4runtime_errors.append((p.loc, f"Table '{d.name}.{t.name}' has an anonymous table property "
                                                    "'implementation' with no name annotation, which is not "
                                                    "supported by P4Runtime"))
                name = _fresh(f"{t.name}_implementation", taken)
                added.append(ast.Instantiation(loc, name, p.value.type, p.value.args,
                                               annotations=[ast.Annotation(loc, "name", [ast.StringLit(loc, "." + label)])]))
                p.value = ast.Name(loc, name)
        for inst in added:  # declared just before the first table, so that every table sees it
            d.locals.insert(next(i for i, x in enumerate(d.locals) if isinstance(x, ast.TableDecl)), inst)
    return p4runtime_errors
