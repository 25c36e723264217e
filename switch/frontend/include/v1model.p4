/* v1model.p4 -- the V1Switch architecture (BMv2 simple_switch) for this
 * emulator's front end.
 *
 * Declarations match the standard v1model.p4 by name, signature, parameter
 * name and direction, field order and width, so programs written against p4c
 * compile unchanged.  As there, V1MODEL_VERSION selects the API revision:
 * 20180101 by default; 20200408 or later adds PortId_t and gives counter,
 * meter and register a type parameter for their index.
 */

#ifndef _V1_MODEL_P4_
#define _V1_MODEL_P4_

#ifndef V1MODEL_VERSION
#define V1MODEL_VERSION 20180101
#endif

#include <core.p4>

match_kind {
    range,
    optional,   /// exact match or wildcard
    selector    /// key of an action_selector
}

const bit<32> __v1model_version = V1MODEL_VERSION;

#if V1MODEL_VERSION >= 20200408
typedef bit<9> PortId_t;
#endif

/// Per-packet metadata the switch fills in and reads back.
@metadata @name("standard_metadata")
struct standard_metadata_t {
#if V1MODEL_VERSION >= 20200408
    PortId_t ingress_port;
    PortId_t egress_spec;       /// output port chosen in ingress
    PortId_t egress_port;       /// output port seen in egress (read only)
#else
    bit<9> ingress_port;
    bit<9> egress_spec;
    bit<9> egress_port;
#endif
    bit<32> instance_type;      /// normal, clone, resubmit, recirculate, ...
    bit<32> packet_length;

    // Queueing information (valid in egress).
    @alias("queueing_metadata.enq_timestamp")
    bit<32> enq_timestamp;
    @alias("queueing_metadata.enq_qdepth")
    bit<19> enq_qdepth;
    @alias("queueing_metadata.deq_timedelta")
    bit<32> deq_timedelta;
    @alias("queueing_metadata.deq_qdepth")
    bit<19> deq_qdepth;

    // Switch intrinsics.
    @alias("intrinsic_metadata.ingress_global_timestamp")
    bit<48> ingress_global_timestamp;
    @alias("intrinsic_metadata.egress_global_timestamp")
    bit<48> egress_global_timestamp;
    @alias("intrinsic_metadata.mcast_grp")
    bit<16> mcast_grp;          /// multicast group; 0 means unicast
    @alias("intrinsic_metadata.egress_rid")
    bit<16> egress_rid;         /// replica id of a multicast copy
    bit<1> checksum_error;      /// set when verify_checksum failed
    error parser_error;         /// error the parser ended with
    @alias("intrinsic_metadata.priority")
    bit<3> priority;
}

enum CounterType {
    packets,
    bytes,
    packets_and_bytes
}

enum MeterType {
    packets,
    bytes
}

/// Array of counters, updated by index.
#if V1MODEL_VERSION >= 20200408
extern counter<I> {
    counter(bit<32> size, CounterType type);
    void count(in I index);
}
#else
extern counter {
    counter(bit<32> size, CounterType type);
    void count(in bit<32> index);
}
#endif

/// One counter per entry of the table it is attached to.
extern direct_counter {
    direct_counter(CounterType type);
    void count();
}

/// Colors written by meters.
#define V1MODEL_METER_COLOR_GREEN  0
#define V1MODEL_METER_COLOR_YELLOW 1
#define V1MODEL_METER_COLOR_RED    2

/// Array of meters; execute_meter writes a V1MODEL_METER_COLOR_* value.
#if V1MODEL_VERSION >= 20200408
extern meter<I> {
    meter(bit<32> size, MeterType type);
    void execute_meter<T>(in I index, out T result);
}
#else
extern meter {
    meter(bit<32> size, MeterType type);
    void execute_meter<T>(in bit<32> index, out T result);
}
#endif

/// One meter per entry of the table it is attached to.
extern direct_meter<T> {
    direct_meter(MeterType type);
    void read(out T result);
}

/// Array of values kept across packets.
#if V1MODEL_VERSION >= 20200408
extern register<T, I> {
    register(bit<32> size);
    @noSideEffects
    void read(out T result, in I index);
    void write(in I index, in T value);
}
#else
extern register<T> {
    register(bit<32> size);
    @noSideEffects
    void read(out T result, in bit<32> index);
    void write(in bit<32> index, in T value);
}
#endif

/// Table implementation holding a shared set of action entries.
extern action_profile {
    action_profile(bit<32> size);
}

/// result = a random value in [lo, hi].
extern void random<T>(out T result, in T lo, in T hi);

/// Send data to the control plane; receiver selects the digest stream.
extern void digest<T>(in bit<32> receiver, in T data);

enum HashAlgorithm {
    crc32,
    crc32_custom,
    crc16,
    crc16_custom,
    random,
    identity,
    csum16,
    xor16
}

@deprecated("Please use mark_to_drop(standard_metadata) instead.")
extern void mark_to_drop();

/// Arrange for the packet to be dropped (sets egress_spec to the drop port).
@pure
extern void mark_to_drop(inout standard_metadata_t standard_metadata);

/// result = base + (hash of data) % max, or base when max is 0.
@pure
extern void hash<O, T, D, M>(out O result, in HashAlgorithm algo, in T base, in D data, in M max);

/// Table implementation choosing among group members by a hash.
extern action_selector {
    action_selector(HashAlgorithm algorithm, bit<32> size, bit<32> outputWidth);
}

enum CloneType {
    I2E,
    E2E
}

@deprecated("Please use verify_checksum/update_checksum instead.")
extern Checksum16 {
    Checksum16();
    bit<16> get<D>(in D data);
}

/// When condition holds, compare checksum with the one computed over data;
/// a mismatch sets standard_metadata.checksum_error.
extern void verify_checksum<T, O>(in bool condition, in T data, in O checksum, HashAlgorithm algo);

/// When condition holds, store the checksum computed over data.
@pure
extern void update_checksum<T, O>(in bool condition, in T data, inout O checksum, HashAlgorithm algo);

/// As verify_checksum, with the unparsed payload appended to data.
extern void verify_checksum_with_payload<T, O>(in bool condition, in T data, in O checksum, HashAlgorithm algo);

/// As update_checksum, with the unparsed payload appended to data.
@noSideEffects
extern void update_checksum_with_payload<T, O>(in bool condition, in T data, inout O checksum, HashAlgorithm algo);

/// Copy the packet to the given clone session at the end of this pipeline.
extern void clone(in CloneType type, in bit<32> session);

@deprecated("Please use 'resubmit_preserving_field_list' instead")
extern void resubmit<T>(in T data);
/// Run ingress again on the original packet, keeping the metadata fields
/// tagged @field_list(index).
extern void resubmit_preserving_field_list(bit<8> index);

@deprecated("Please use 'recirculate_preserving_field_list' instead")
extern void recirculate<T>(in T data);
/// Feed the deparsed packet back to ingress, keeping the metadata fields
/// tagged @field_list(index).
extern void recirculate_preserving_field_list(bit<8> index);

@deprecated("Please use 'clone_preserving_field_list' instead")
extern void clone3<T>(in CloneType type, in bit<32> session, in T data);
/// clone() that also keeps the metadata fields tagged @field_list(index).
extern void clone_preserving_field_list(in CloneType type, in bit<32> session, bit<8> index);

/// Send at most length bytes of the packet out.
extern void truncate(in bit<32> length);

/// Checked at run time by targets that support it.
extern void assert(in bool check);
/// Taken as true by verification tools; checked like assert otherwise.
extern void assume(in bool check);

/// Print a message to the switch log; "{}" in msg is replaced by the
/// elements of data in order.
extern void log_msg(string msg);
extern void log_msg<T>(string msg, in T data);

// The pipeline.  H is the headers struct, M the user metadata struct.

parser Parser<H, M>(packet_in b,
                    out H parsedHdr,
                    inout M meta,
                    inout standard_metadata_t standard_metadata);

/// May only call verify_checksum and verify_checksum_with_payload.
control VerifyChecksum<H, M>(inout H hdr,
                             inout M meta);

@pipeline
control Ingress<H, M>(inout H hdr,
                      inout M meta,
                      inout standard_metadata_t standard_metadata);

@pipeline
control Egress<H, M>(inout H hdr,
                     inout M meta,
                     inout standard_metadata_t standard_metadata);

/// May only call update_checksum and update_checksum_with_payload.
control ComputeChecksum<H, M>(inout H hdr,
                              inout M meta);

/// May only call packet_out.emit.
@deparser
control Deparser<H>(packet_out b, in H hdr);

package V1Switch<H, M>(Parser<H, M> p,
                       VerifyChecksum<H, M> vr,
                       Ingress<H, M> ig,
                       Egress<H, M> eg,
                       ComputeChecksum<H, M> ck,
                       Deparser<H> dep);

#endif  /* _V1_MODEL_P4_ */
