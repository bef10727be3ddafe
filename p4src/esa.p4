/* esa.p4: ESA-style (arXiv 2201.06398) preemptive, prioritised aggregator allocation: atp.p4 with two changes.
 *
 * 1. Preemption. Each job has a priority (atp_set_job's `priority`, set by the controller; 0 is the lowest). A
 *    first-level packet whose aggregator holds another job's partial aggregate of lower priority evicts it: the
 *    packet's values become the aggregate of its own (job, seq), and the packet leaves carrying the victim's partial
 *    aggregate (its job, seq, bitmaps, flags | COLLISION) to the victim's PS (esa_servers), which completes it from
 *    there exactly once by its bitmaps, as it completes ATP's flushed partials; the victim's later contributions for
 *    that sequence reach its PS unaggregated (the aggregator remembers the evicted (job, seq) until the PS's ACK for
 *    it passes, so they do even once the aggregator is free again). Equal or higher priority owners keep the aggregator (ATP's
 *    collision). A packet that would complete an aggregate on its own (fan-in 1) never evicts.
 * 2. Release at completion. A completed aggregate frees its aggregator at once, where ATP holds it until the PS's
 *    ACK passes back: the PS holds the result from then on (a retransmission goes to it).
 *
 * The header is ATP's under its own type name (esa_h), so the tools tell the programs apart; the packet formats, the
 * workers and the PS are ATP's (worker.esa). One level only: the priority is per job on this switch.
 *
 * Control plane: as atp.p4, and
 *   AtpIngress.atp_jobs     action atp_set_job(bit<2> level, bit<16> mgid, bit<8> rack, bit<8> priority)
 *   AtpIngress.esa_servers  key meta.victim_job (exact, 8)   action esa_set_server(bit<48> ps_mac, bit<32> ps_ip)
 *                           miss: no eviction (ATP's collision)
 *   Registers: atp_priority (bit<8>, per aggregator: its owner's priority), atp_evicted_owner (bit<40>, per
 *   aggregator: the job ++ seq last evicted from it, 0 once its PS's ACK has passed).
 *   Counters: AtpIngress.atp_evicted (index = the victim's job id): partial aggregates evicted. An evicting packet
 *   counts as aggregated for its own job (its ingress invariant is atp.p4's).
 *
 * Build: p4c-bm2-ss [-D ATP_NUM_ELEMS=32] [-D ATP_NUM_AGTR=4096] [-D ATP_L2_SIZE=1024] esa.p4
 */
#define ATP_ESA 1
#define atp_h esa_h
#include "atp.p4"
