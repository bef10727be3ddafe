/*
 * core.p4 — the P4_16 core library, as declared by the P4_16 language specification
 * (section "The core library"). Written for this project's embedded compiler; it
 * declares the same interface as the core.p4 shipped with p4c, so programs compile
 * unchanged with either.
 */

#ifndef _CORE_P4_
#define _CORE_P4_

/* Errors the parser may signal; programs may add their own with further error declarations. */
error {
    NoError,               /* no error */
    PacketTooShort,        /* not enough bits in the packet for an extract */
    NoMatch,               /* a select expression had no matching case */
    StackOutOfBounds,      /* reference to an invalid element of a header stack */
    HeaderTooShort,        /* extract of a varbit field exceeding its declared size */
    ParserTimeout,         /* the parser did not finish in time */
    ParserInvalidArgument  /* a parser operation got an invalid argument */
}

/* The packet being parsed. */
extern packet_in {
    /* Read a fixed-size header from the packet and make it valid. */
    void extract<T>(out T hdr);
    /* Read a header with one varbit field of the given size (in bits). */
    void extract<T>(out T variableSizeHeader, in bit<32> variableFieldSizeInBits);
    /* Read bits ahead of the cursor without moving it. */
    T lookahead<T>();
    /* Move the cursor forward. */
    void advance(in bit<32> sizeInBits);
    /* Total packet length in bytes. */
    bit<32> length();
}

/* The packet being built by a deparser. */
extern packet_out {
    /* Append a header to the packet if it is valid (all valid headers, for a stack or struct). */
    void emit<T>(in T hdr);
}

/* Parser check: if `check` is false, stop parsing and signal `toSignal`. */
extern void verify(in bool check, in error toSignal);

/* The action that does nothing; the usual default action of tables. */
@noWarn("unused")
action NoAction() {}

/* The match kinds every target supports. */
match_kind {
    exact,    /* the key equals the entry's value */
    ternary,  /* the key equals the value under a mask */
    lpm       /* longest-prefix match */
}

/* Compile-time assertions. */
extern bool static_assert(bool check, string message);
extern bool static_assert(bool check);

#endif /* _CORE_P4_ */
