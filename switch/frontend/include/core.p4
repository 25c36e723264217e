/* core.p4 -- the P4_16 core library as seen by this emulator's front end.
 *
 * Every declaration mirrors the standard core library by name, signature,
 * parameter name and direction, so programs written against p4c compile
 * unchanged.  The guard macro is the standard one for the same reason.
 */

#ifndef _CORE_P4_
#define _CORE_P4_

/// Errors the language itself can raise.  Programs may declare more.
error {
    NoError,
    PacketTooShort,          /// extract/lookahead ran past the end of the packet
    NoMatch,                 /// a select expression had no matching case
    StackOutOfBounds,        /// header stack index out of range
    HeaderTooShort,          /// varbit extract asked for more bits than the field holds
    ParserTimeout,           /// the parser ran for too long
    ParserInvalidArgument    /// a parser operation got an unsupported argument
}

/// The packet being parsed; the cursor starts at its first bit.
extern packet_in {
    /// Fill a fixed-size header from the packet and move the cursor past it.
    void extract<T>(out T hdr);
    /// Fill a header whose single varbit field takes the given number of bits.
    void extract<T>(out T variableSizeHeader,
                    in bit<32> variableFieldSizeInBits);
    /// Read the next bits as a T without moving the cursor.
    T lookahead<T>();
    /// Skip the given number of bits.
    void advance(in bit<32> sizeInBits);
    /// Whole packet length in bytes.
    bit<32> length();
}

/// The packet being built by a deparser.
extern packet_out {
    /// Append a header (or a stack, union or struct of them); invalid headers are skipped.
    void emit<T>(in T hdr);
}

/// In a parser: unless check holds, stop with parser error toSignal.
extern void verify(in bool check, in error toSignal);

/// The action that does nothing; default action of tables that name none.
@noWarn("unused")
action NoAction() {}

/// Match kinds every target understands.
match_kind {
    exact,
    ternary,
    lpm
}

/// Compile-time assertion; the result can initialize a constant.
extern bool static_assert(bool check, string message);
extern bool static_assert(bool check);

#endif  /* _CORE_P4_ */
