/* omnireduce.p4: OmniReduce-style (SIGCOMM'21) sparse all-reduce on SwitchML's slots: switchml.p4 with INA_SPARSE.
 *
 * A job's slots are streams: stream i (window position i) carries the blocks i, i + W, i + 2W, ... of the tensor
 * (W = the job's window). Each use of a stream's slot is a round for one block, and every worker sends one DATA
 * packet per round, as in switchml.p4 (bitmap, countdown, shadow copies, retransmissions answered from the stored
 * result), with two changes:
 *
 * 1. A worker whose block is zero sends the round's packet without payload (UDP length INA_UDP_LEN_EMPTY): the
 *    switch adds N zeros for it (ina_expand_empty), so it still counts, and the RESULT always carries N elements.
 * 2. Every DATA packet carries next_block, the sender's next non-zero block of the stream after this round's
 *    (INA_NO_BLOCK: none), and in `exponent` that block's exponent. The set keeps the smallest next_block
 *    (register ina_next) and the largest exponent among the packets that named it; the RESULT carries both: the
 *    stream's next round is for that block, quantized with that exponent. Blocks that are zero in every worker never
 *    get a round. A stream ends with a RESULT whose next_block is INA_NO_BLOCK.
 *
 * The first round of a stream announces only (no block: every packet is empty, packet_id INA_NO_BLOCK). The header is
 * switchml.p4's ina_h plus next_block, under its own type name (omnireduce_h), so the tools tell the programs apart.
 * Hosts: worker.switchml.omnireduce. Control plane: as switchml.p4 (SwitchMLIngress / SwitchMLEgress names), and
 *   Register SwitchMLIngress.ina_next (bit<32>, index = slot * 2 + set): the set's smallest next_block so far.
 *
 * Build: p4c-bm2-ss [-D INA_NUM_ELEMS=64] [-D INA_POOL_SIZE=256] [-D INA_MAX_WORKERS=W] omnireduce.p4
 */
#define INA_SPARSE 1
#define ina_h omnireduce_h
#include "switchml.p4"
