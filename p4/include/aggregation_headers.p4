/* The in-network aggregation packet: Ethernet / IPv4 (no options) / UDP to port
 * INA_UDP_PORT / ina_t (12 bytes) / ina_values_t (INA_K big-endian int32 values).
 * The hosts' codec (hosts/) declares the same format. */
#ifndef INA_AGGREGATION_HEADERS_P4
#define INA_AGGREGATION_HEADERS_P4

#include "headers.p4"
#include "ina_lanes.p4"

const bit<16> INA_UDP_PORT = 48879;     /* 0xBEEF */
const bit<8>  INA_FLAG_RESULT = 0x01;   /* the packet carries an aggregate to the workers */
const bit<8>  INA_FLAG_NACK = 0x02;     /* the receiver's transmission to the named cell
                                         * did not arrive (alone: header only) */
const bit<8>  INA_FLAG_NAMED = 0x04;    /* named_slot and the next bit name a cell */
const bit<8>  INA_FLAG_NAMED_VERSION = 0x08;  /* the named cell's version */
const bit<8>  INA_NAME_FLAGS = 0x0C;

/* A named cell: in a contribution, the cell of the sender's previous transmission; in
 * a multicast RESULT, the cell the switch completed before it in the job; in a NACK,
 * the cell whose contribution is missing (hosts/wire.py, hosts/protocol.py). */
header ina_t {
    bit<16> job_id;
    bit<16> slot;       /* index in the job's region of the register arrays */
    bit<8>  version;    /* which of the slot's two copies: 0 or 1 */
    bit<8>  flags;      /* the INA_FLAG_s; bits 0x10 to 0x80 are reserved and preserved */
    int<8>  exponent;   /* the sender's scaling exponent; the switch max-combines it */
    bit<8>  named_slot;
    bit<32> chunk;      /* chunk index, for the workers; the switch carries it through */
}

#define INA_VALUE_FIELD(i) int<32> v##i;

header ina_values_t {
    INA_FOR_EACH_LANE(INA_VALUE_FIELD)
}

#endif
